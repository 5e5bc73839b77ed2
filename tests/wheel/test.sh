#!/usr/bin/env bash
# Builds the oomlint wheel with maturin (from PyPI), installs it into a fresh virtual
# environment, and checks `oomlint --version`, `python -m oomlint check` on fixtures
# (exit codes and output), then runs the `language: python` pre-commit hook with the
# real `pre-commit try-repo` against a bad and a clean config.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/oomlint-tests"
tools="$cache/wheel-tools"
if [ ! -x "$tools/bin/maturin" ]; then
  python3 -m venv "$tools"
  "$tools/bin/pip" install --quiet --disable-pip-version-check "maturin>=1.5,<2"
fi
# Cargo's target directory: $CARGO_TARGET_DIR (a relative one is taken from the repository
# root), else target/. Exported as an absolute path so that cargo, wherever it runs, agrees.
target="${CARGO_TARGET_DIR:-target}"
[[ "$target" = /* ]] || target="$repo/$target"
export CARGO_TARGET_DIR="$target"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$repo" && "$tools/bin/maturin" build --release --quiet --out "$work/dist")
wheel="$(ls "$work"/dist/oomlint-*.whl)"
echo "built $(basename "$wheel")"

python3 -m venv "$work/env"
"$work/env/bin/pip" install --quiet --disable-pip-version-check "$wheel"

expected="oomlint $(sed -n 's/^version = "\(.*\)"/\1/p' "$repo/Cargo.toml" | head -n 1)"
got="$("$work/env/bin/oomlint" --version)"
[ "$got" = "$expected" ] || { echo "FAIL: --version says '$got', expected '$expected'" >&2; exit 1; }
echo "ok: $got on the environment's PATH"

cd "$repo"
set +e
"$work/env/bin/python" -m oomlint check fixtures/litgpt/qlora-precision.yaml --output-format concise > "$work/bad.txt"
bad=$?
"$work/env/bin/python" -m oomlint check fixtures/litgpt/llama-2-7b-lora.yaml --output-format concise > "$work/clean.txt"
clean=$?
set -e
[ "$bad" -eq 1 ] && grep -q "OOM101 litgpt-quantize-mixed-precision" "$work/bad.txt" \
  || { cat "$work/bad.txt"; echo "FAIL: python -m oomlint on a bad config exited $bad" >&2; exit 1; }
[ "$clean" -eq 0 ] || { cat "$work/clean.txt"; echo "FAIL: python -m oomlint on a clean config exited $clean" >&2; exit 1; }
echo "ok: python -m oomlint check (exit 1 with OOM101, exit 0 on a clean config)"

bash "$repo/tests/precommit/test.sh" oomlint-python
echo "wheel: 4 passed, 0 failed"
