#!/usr/bin/env bash
# tests/gpu/device_run.sh — everything a session with a GPU machine runs, in one call (not run in CI):
#   1. tests/gpu/check.sh (`oomlint gpus` against nvidia-smi, a real CUDA OOM explained), packed into check.tgz;
#   2. tests/gpu/measure_peaks.py over tests/gpu/grid.json (peaks.csv), the same for a few rows with
#      PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (peaks_expandable.csv), and the MoE row last (peaks_moe.csv).
# Results go to $OUT (or ./gpu-out); the committed copies live in tests/estimator/measured/.
# Usage (from the repository root, with `cargo build --release` done; check.sh finds the binary through
# $OOMLINT, else $CARGO_TARGET_DIR, else target/): BUDGET=300 bash tests/gpu/device_run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-./gpu-out}"
mkdir -p "$out"
export PYTHONUNBUFFERED=1
work="$(mktemp -d)"
mkdir -p "$work/check"
nvidia-smi >"$work/check/nvidia-smi.txt" 2>&1
OUT="$work/check" timeout 120 bash tests/gpu/check.sh >"$work/check/log.txt" 2>&1
echo "check.sh exit $?"
cat "$work/check/summary.txt"
tar czf "$out/check.tgz" -C "$work" check

moe=Qwen3-30B-A3B-lora-b1-s1024-qv
expandable=Llama-3.2-1B-full-b4-s1024,Llama-3.1-8B-lora-b2-s2048,Gemma-2-2b-lora-b2-s2048-ckpt-eager,Qwen2.5-0.5B-full-b1-s16384-ckpt
measure() { python3 tests/gpu/measure_peaks.py --grid tests/gpu/grid.json --out "$out" "$@" 2>&1 | tee -a "$out/peaks.log" |
    grep -E '^\{|^[A-Za-z0-9._-]+ +(ok|oom|error|skipped) '; }
measure --exclude "$moe" --budget-s "${BUDGET:-300}"
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True measure --csv peaks_expandable.csv --only "$expandable" --budget-s 60
measure --csv peaks_moe.csv --only "$moe" --budget-s 1
