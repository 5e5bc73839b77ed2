#!/usr/bin/env bash
# tests/gpu/device_run_trl.sh — the TRL measurement a session with a GPU machine runs, in one call (not run in CI):
# installs the carried TRL wheels (.whl/, untracked: see WHEELS below) and runs tests/gpu/measure_trl.py over
# tests/gpu/grid_trl.json (SFTTrainer, DPOTrainer, GRPOTrainer on random-init models, no network).
# Writes to $OUT (or ./gpu-out): peaks_trl.csv, peaks_trl.env.json, peaks_trl.args.jsonl, peaks_trl.log.
# Usage (from the repository root, `.whl` carried): BUDGET=170 bash tests/gpu/device_run_trl.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-./gpu-out}"
mkdir -p "$out"
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
# Pure-python wheels the machine lacks. The target path must contain "site-packages": dill (used by datasets to
# fingerprint) pickles modules from any other path by value, which fails on pyarrow's types.
WHEELS="trl-1.16.0-py3-none-any.whl datasets-5.2.0-py3-none-any.whl dill-0.4.1-py3-none-any.whl
        multiprocess-0.70.19-py312-none-any.whl"
site=/tmp/trl/site-packages
(cd .whl && python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" \
    $WHEELS) || { echo "wheel install failed"; exit 1; }
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
python3 -m pip list 2>/dev/null |
    grep -iE '^(trl|datasets|dill|multiprocess|pyarrow|pandas|fsspec|xxhash|torch|transformers|peft|accelerate) '
timeout "${TIMEOUT:-290}" python3 tests/gpu/measure_trl.py --grid tests/gpu/grid_trl.json --out "$out" \
    --budget-s "${BUDGET:-170}" "$@" 2>&1 | tee "$out/peaks_trl.log" |
    grep -E '^\{|^[A-Za-z0-9._-]+ +(ok|oom|error|skipped) '
echo "measure_trl exit ${PIPESTATUS[0]}"
