#!/usr/bin/env bash
# Headless Neovim (0.7 or newer) drives editors/nvim against the built `oomlint server`:
# diagnostics, a hover with GiB, the summary code lens and a code action on a fixture.
# Usage: tests/nvim/run.sh [path/to/oomlint]   (default: $CARGO_TARGET_DIR/debug/oomlint,
# a relative CARGO_TARGET_DIR taken from the repository root; without it target/debug/oomlint)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
target="${CARGO_TARGET_DIR:-target}"
[[ "$target" = /* ]] || target="$root/$target"
bin="${1:-$target/debug/oomlint}"
command -v nvim >/dev/null || { echo "nvim not found (apt-get install neovim)" >&2; exit 1; }
[ -x "$bin" ] || { echo "no oomlint binary at $bin (cargo build first)" >&2; exit 1; }

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# A copy, so the code action's edit never touches the repository's fixture.
cp "$root/fixtures/trl/sft-qwen2.5-7b.yaml" "$scratch/sft.yaml"

status=0
XDG_CACHE_HOME="$scratch" XDG_STATE_HOME="$scratch" XDG_DATA_HOME="$scratch" \
  OOMLINT_BIN="$bin" OOMLINT_VERDICT="$scratch/verdict" \
  timeout 120 nvim --headless -u NONE -i NONE -n \
  --cmd "set runtimepath^=$root/editors/nvim" \
  -c "luafile $root/tests/nvim/test.lua" "$scratch/sft.yaml" || status=$?

if [ "$(head -n 1 "$scratch/verdict" 2>/dev/null)" != "ok" ]; then
  echo "Neovim test failed (nvim exit status $status):" >&2
  cat "$scratch/verdict" >&2 2>/dev/null || echo "no verdict written" >&2
  exit 1
fi
echo "Neovim $(nvim --version | head -n 1 | cut -d' ' -f2): oomlint diagnostics, hover, code lens and code action ok"
