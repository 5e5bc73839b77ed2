#!/usr/bin/env bash
# Creates the virtual environment the fidelity check runs in (not run in CI).
#
#   bash tests/fidelity/setup.sh            # venv at $FIDELITY_VENV (default /work/fidelity-venv)
#   FIDELITY_BASE_SITE=/path/to/site-packages bash tests/fidelity/setup.sh
#
# Installs from PyPI: torch (CPU is enough: no check needs a GPU), transformers, trl,
# accelerate, deepspeed (built without ops, against the installed torch), litgpt, and
# axolotl without its GPU-only dependencies (its pydantic validation imports with the
# packages below). FIDELITY_BASE_SITE reuses an existing site-packages (e.g. one that
# already has torch) through a .pth file instead of downloading torch again.
set -euo pipefail
VENV=${FIDELITY_VENV:-/work/fidelity-venv}
python3 -m venv "$VENV"
PY="$VENV/bin/python"
SITE=$("$PY" -c 'import site; print(site.getsitepackages()[0])')
if [ -n "${FIDELITY_BASE_SITE:-}" ]; then
  echo "$FIDELITY_BASE_SITE" > "$SITE/zz_fidelity_base.pth"
fi
"$PY" -m pip install --upgrade pip
"$PY" -c 'import torch' 2>/dev/null || "$PY" -m pip install torch
"$PY" -m pip install transformers accelerate trl pyyaml
"$PY" -c 'import litgpt' 2>/dev/null || "$PY" -m pip install 'litgpt[extra]' || "$PY" -m pip install --no-deps litgpt jsonargparse lightning
"$PY" -m pip install --no-build-isolation deepspeed
"$PY" -m pip install --no-deps axolotl && "$PY" -m pip install pillow addict
"$PY" - <<'PY'
import importlib.metadata as m
for p in ["torch", "transformers", "trl", "accelerate", "deepspeed", "litgpt", "axolotl"]:
    print(p, m.version(p))
PY
