#!/usr/bin/env bash
# Builds oomlint-core for WebAssembly (wasm32-wasip1) with Python support, whose parser
# (tree-sitter, tree-sitter-python) is C, then runs the core's analyze_stdin example under
# a WASI runtime on a few fixtures (Python, notebook, YAML, JSON, shell) and checks that it
# prints exactly what the native build of the example prints.
#
# Installs what is missing (tests/wasm/toolchain.sh), and wasmtime from PyPI in a virtual
# environment under ~/.cache/oomlint-tests.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$repo"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
# shellcheck source=toolchain.sh
source "$repo/tests/wasm/toolchain.sh"
target=$wasm_target

start=$SECONDS
cargo build --locked -p oomlint-core --target "$target"
cargo build --locked -p oomlint-core --target "$target" --example analyze_stdin
echo "ok: oomlint-core and its analyze_stdin example built for $target in $((SECONDS - start)) s"
wasm="$CARGO_TARGET_DIR/$target/debug/examples/analyze_stdin.wasm"

cargo build --locked -p oomlint-core --example analyze_stdin
native="$CARGO_TARGET_DIR/debug/examples/analyze_stdin"

tools="${XDG_CACHE_HOME:-$HOME/.cache}/oomlint-tests/wasm-tools"
if ! "$tools/bin/python" -c "import wasmtime" 2>/dev/null; then
  python3 -m venv "$tools"
  "$tools/bin/pip" install --quiet --disable-pip-version-check "wasmtime>=50,<51"
fi

fixtures=(
  fixtures/python/trl-sft-old-trainer.py
  fixtures/rules/unsloth-precision-conflict/fail.py
  fixtures/python/unsloth-grpo.ipynb
  fixtures/litgpt/qlora-precision.yaml
  fixtures/rules/deepspeed-batch-arithmetic/fail.json
  fixtures/env/train.sh
)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/wasi" "$work/native"
start=$SECONDS
"$tools/bin/python" tests/wasm/run_wasi.py "$wasm" "$work/wasi" "${fixtures[@]}"
echo "ok: ${#fixtures[@]} fixtures analysed under WASI (wasmtime $("$tools/bin/python" -c \
  'import importlib.metadata as m; print(m.version("wasmtime"))')) in $((SECONDS - start)) s"
for f in "${fixtures[@]}"; do
  name="$(basename "$f")"
  "$native" "$name" < "$f" > "$work/native/$name.out"
  diff -u "$work/native/$name.out" "$work/wasi/$name.out" \
    || { echo "FAIL: $name: the WASI build of analyze_stdin prints otherwise than the native one" >&2; exit 1; }
done
# Not two empty outputs: the Python parser and the rules ran.
grep -q "^language: Python$" "$work/wasi/trl-sft-old-trainer.py.out" \
  && grep -q "error OOM005 removed-key" "$work/wasi/trl-sft-old-trainer.py.out" \
  && grep -q "error OOM219 unsloth-precision-conflict" "$work/wasi/fail.py.out" \
  && grep -q "^estimate: [0-9]* parameters" "$work/wasi/unsloth-grpo.ipynb.out" \
  || { cat "$work"/wasi/*.out; echo "FAIL: the WASI run missed the expected findings" >&2; exit 1; }
echo "ok: the WASI build prints what the native one prints, Python findings and estimates included"
