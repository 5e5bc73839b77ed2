#!/usr/bin/env bash
# tests/gpu/device_run_trl.sh — the TRL measurement a session with a GPU machine runs, in one call (not run in CI):
# installs the carried TRL wheels (.whl/, untracked: see WHEELS below) and runs tests/gpu/measure_trl.py over
# $GRID (default tests/gpu/grid_trl.json: SFTTrainer, DPOTrainer, GRPOTrainer on random-init models, no network).
# Writes to $OUT (or ./gpu-out): $NAME.csv, $NAME.env.json, $NAME.args.jsonl, $NAME.log (NAME defaults to peaks_trl).
# Usage (from the repository root, `.whl` carried): BUDGET=170 bash tests/gpu/device_run_trl.sh
# QLoRA rows (bitsandbytes): GRID=tests/gpu/grid_trl_qlora.json NAME=peaks_trl_qlora BUDGET=110 TIMEOUT=145 \
#     bash tests/gpu/device_run_trl.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-./gpu-out}"
mkdir -p "$out"
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
# Wheels the machine lacks (pure python, and bitsandbytes with its CUDA 13.0 library). The target path must contain
# "site-packages": dill (used by datasets to fingerprint) pickles modules from any other path by value, which fails
# on pyarrow's types.
WHEELS="trl-1.16.0-py3-none-any.whl datasets-5.2.0-py3-none-any.whl dill-0.4.1-py3-none-any.whl
        multiprocess-0.70.19-py312-none-any.whl bitsandbytes-0.50.2-py3-none-manylinux_2_24_x86_64.whl"
site=/tmp/trl/site-packages
(cd .whl && python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" \
    $WHEELS) || { echo "wheel install failed"; exit 1; }
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
python3 -m pip list 2>/dev/null |
    grep -iE '^(trl|bitsandbytes|datasets|dill|multiprocess|pyarrow|pandas|fsspec|xxhash|torch|transformers|peft|accelerate) '
name="${NAME:-peaks_trl}"
timeout "${TIMEOUT:-290}" python3 tests/gpu/measure_trl.py --grid "${GRID:-tests/gpu/grid_trl.json}" --out "$out" \
    --csv "$name.csv" --budget-s "${BUDGET:-170}" "$@" 2>&1 | tee "$out/$name.log" |
    grep -E '^\{|^[A-Za-z0-9._-]+ +(ok|oom|error|skipped) '
echo "measure_trl exit ${PIPESTATUS[0]}"
