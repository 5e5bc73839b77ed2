#!/usr/bin/env bash
# Runs the real pre-commit (from PyPI) with `pre-commit try-repo` against this
# repository in a scratch git repository: each hook must block a config with an error
# and pass a clean one. Usage: tests/precommit/test.sh [hook-id ...]
# (default: oomlint-system oomlint; the `oomlint` hook builds with cargo install).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
hooks=("$@")
[ ${#hooks[@]} -gt 0 ] || hooks=(oomlint-system oomlint)

venv="${OOMLINT_TEST_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/oomlint-tests/venv}"
if [ ! -x "$venv/bin/pre-commit" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check pre-commit
fi

# Cargo's target directory: $CARGO_TARGET_DIR (a relative one is taken from the repository
# root), else target/. Exported as an absolute path so that cargo, wherever it runs, agrees.
target="${CARGO_TARGET_DIR:-target}"
[[ "$target" = /* ]] || target="$repo/$target"
export CARGO_TARGET_DIR="$target"

# The system hook needs oomlint on PATH: use this checkout's build.
cargo build --quiet --manifest-path "$repo/Cargo.toml"
export PATH="$CARGO_TARGET_DIR/debug:$PATH"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
git init --quiet
git config user.email test@example.com
git config user.name test
cp "$repo/fixtures/litgpt/qlora-precision.yaml" bad-qlora.yaml
cp "$repo/fixtures/trl/sft-qwen2.5-7b.yaml" clean-sft.yaml
git add bad-qlora.yaml clean-sft.yaml
export PRE_COMMIT_HOME="${PRE_COMMIT_HOME:-$scratch/.pre-commit-cache}"

for hook in "${hooks[@]}"; do
  echo "-- $hook: a config with an error is blocked"
  if "$venv/bin/pre-commit" try-repo "$repo" "$hook" --files bad-qlora.yaml > out.txt 2>&1; then
    cat out.txt
    echo "FAIL: $hook passed a config with an error" >&2
    exit 1
  fi
  grep -q "OOM101 litgpt-quantize-mixed-precision" out.txt || { cat out.txt; echo "FAIL: no OOM101 in the hook output" >&2; exit 1; }
  echo "-- $hook: a clean config passes"
  if ! "$venv/bin/pre-commit" try-repo "$repo" "$hook" --files clean-sft.yaml > out.txt 2>&1; then
    cat out.txt
    echo "FAIL: $hook blocked a clean config" >&2
    exit 1
  fi
done
echo "pre-commit hooks: ${#hooks[@]} passed, 0 failed"
