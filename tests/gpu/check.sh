#!/usr/bin/env bash
# tests/gpu/check.sh — GPU checks for `oomlint gpus` and `oomlint explain` (not run in CI).
#
# Run on a machine with an NVIDIA GPU and driver, from the repository root:
#     bash tests/gpu/check.sh
# What it does:
#   1. Uses $OOMLINT, else release/oomlint in $CARGO_TARGET_DIR (default target/), else builds it
#      (`cargo build --release`).
#   2. Compares `oomlint gpus --format json` with
#      `nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv,noheader,nounits`:
#      same device count, index and name; total equal to the MiB; used within 5 % or 512 MiB
#      (memory in use moves while the two run).
#   3. If `python3 -c 'import torch'` works and CUDA is available: fills ~60 % of the free memory,
#      asks for the same again, prints the real `torch.OutOfMemoryError` traceback to oom.log,
#      runs `oomlint explain --format json` (and text) on it and checks the parsed numbers
#      against what PyTorch itself reports (total capacity, requested size, exactly one error).
# Everything goes to $OUT (or ./gpu-check-out): nvidia-smi.csv, gpus.json, gpus.txt, oom.log,
# provoke_oom.py, oom-facts.json, explain.json, explain.txt and summary.txt with one PASS/FAIL/SKIP line per check.
# Exit status: 0 when no check failed, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/../.."

out="${OUT:-./gpu-check-out}"
mkdir -p "$out"
summary="$out/summary.txt"
: >"$summary"
failed=0
note() { echo "$1" | tee -a "$summary"; }
fail() { note "FAIL $1"; failed=1; }

# Cargo's target directory: $CARGO_TARGET_DIR (a relative one is taken from the repository
# root), else target/. Exported as an absolute path so that cargo, wherever it runs, agrees.
target="${CARGO_TARGET_DIR:-target}"
[[ "$target" = /* ]] || target="$PWD/$target"
export CARGO_TARGET_DIR="$target"
oomlint="${OOMLINT:-$CARGO_TARGET_DIR/release/oomlint}"
if [ ! -x "$oomlint" ]; then
    if command -v cargo >/dev/null; then
        cargo build --release --quiet 2>"$out/build.log" || { fail "cargo build (see build.log)"; exit 1; }
    else
        fail "no oomlint binary at $oomlint and no cargo to build it"
        exit 1
    fi
fi
note "INFO oomlint: $("$oomlint" --version 2>&1)"

# --- 2. oomlint gpus against nvidia-smi ---------------------------------------------------
if ! command -v nvidia-smi >/dev/null; then
    fail "nvidia-smi not found: is this a GPU machine?"
else
    nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv,noheader,nounits >"$out/nvidia-smi.csv" 2>&1
    "$oomlint" gpus >"$out/gpus.txt" 2>&1
    if "$oomlint" gpus --format json >"$out/gpus.json" 2>"$out/gpus.stderr"; then
        python3 - "$out/nvidia-smi.csv" "$out/gpus.json" >>"$summary" 2>&1 <<'PY' || failed=1
import csv, json, sys
smi = [[c.strip() for c in row] for row in csv.reader(open(sys.argv[1])) if row]
gpus = json.load(open(sys.argv[2]))["gpus"]
MIB = 1024 * 1024
bad = False
def check(ok, what):
    global bad
    print(("PASS " if ok else "FAIL ") + what)
    bad |= not ok
check(len(smi) == len(gpus), f"device count: nvidia-smi {len(smi)}, oomlint {len(gpus)}")
for row, g in zip(smi, gpus):
    index, name, total, used = int(row[0]), row[1], int(row[2]), int(row[3])
    check(index == g["index"] and name == g["name"], f"GPU {index}: name {name!r} vs {g['name']!r}")
    check(total == g["total_bytes"] // MIB, f"GPU {index}: total {total} MiB vs {g['total_bytes'] // MIB} MiB")
    # nvidia-smi's used includes the driver-reserved memory on recent drivers; accept either reading.
    candidates = [g["used_bytes"] // MIB, (g["used_bytes"] + g["reserved_bytes"]) // MIB]
    close = any(abs(used - c) <= max(512, 0.05 * total) for c in candidates)
    check(close, f"GPU {index}: used {used} MiB vs oomlint {candidates} MiB")
    print(f"INFO GPU {index}: CUDA sees {g['cuda_total_bytes']} bytes, {len(g['processes'])} process(es)")
sys.exit(1 if bad else 0)
PY
    else
        fail "oomlint gpus --format json exited non-zero: $(head -1 "$out/gpus.stderr")"
    fi
fi

# --- 3. a real OOM, explained ---------------------------------------------------------------
if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    note "SKIP real OOM: PyTorch with CUDA is not importable"
else
    # A script file, not stdin, so the traceback shows the source line of the allocation.
    cat >"$out/provoke_oom.py" <<'PY'
import json, sys, traceback
import torch
free, total = torch.cuda.mem_get_info()
chunk = int(free * 0.6)
hold = torch.empty(chunk, dtype=torch.uint8, device="cuda")
facts = {"torch": torch.__version__, "total_memory": torch.cuda.get_device_properties(0).total_memory,
         "mem_get_info_total": total, "requested": chunk}
try:
    more = torch.empty(chunk, dtype=torch.uint8, device="cuda")
    facts["error"] = None
except torch.OutOfMemoryError as e:
    traceback.print_exc()
    facts["error"] = str(e)
json.dump(facts, open(sys.argv[1], "w"))
PY
    python3 "$out/provoke_oom.py" "$out/oom-facts.json" >"$out/oom.log" 2>&1
    "$oomlint" explain "$out/oom.log" >"$out/explain.txt" 2>&1
    if "$oomlint" explain --format json "$out/oom.log" >"$out/explain.json" 2>"$out/explain.stderr"; then
        python3 - "$out/oom-facts.json" "$out/explain.json" >>"$summary" 2>&1 <<'PY' || failed=1
import json, sys
facts = json.load(open(sys.argv[1]))
errors = json.load(open(sys.argv[2]))["errors"]
bad = False
def check(ok, what):
    global bad
    print(("PASS " if ok else "FAIL ") + what)
    bad |= not ok
print(f"INFO torch {facts['torch']}")
check(facts["error"] is not None, "PyTorch raised OutOfMemoryError")
check(len(errors) == 1, f"explain found {len(errors)} error(s)")
if errors:
    e = errors[0]
    GIB = 1024 ** 3
    # Sizes are printed with two decimals: allow half a unit of the last digit.
    check(abs(e["total_bytes"] - facts["mem_get_info_total"]) <= 0.006 * GIB,
          f"total {e['total_bytes']} vs torch {facts['mem_get_info_total']}")
    two_mib = 2 * 1024 * 1024
    rounded = -(-facts["requested"] // two_mib) * two_mib
    check(abs(e["requested_bytes"] - rounded) <= 0.006 * GIB,
          f"requested {e['requested_bytes']} vs rounded request {rounded}")
    check(e["shortfall_bytes"] > 0, f"shortfall {e['shortfall_bytes']}")
    check(e["site"] is not None and "torch.empty" in e["site"], f"site {e['site']!r}")
    print(f"INFO this_process_bytes={e['this_process_bytes']} other_processes_bytes={e['other_processes_bytes']} "
          f"fragmentation_suspected={e['fragmentation_suspected']}")
sys.exit(1 if bad else 0)
PY
    else
        fail "oomlint explain exited non-zero: $(head -1 "$out/explain.stderr")"
    fi
fi

exit "$failed"
