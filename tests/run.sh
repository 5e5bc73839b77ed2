#!/usr/bin/env bash
# Runs every test of the project on a fresh machine of this kind: formatting, lints,
# and the Rust tests (unit, CLI snapshots, corpus). Later layers (language server over
# stdio, Neovim, VS Code protocol, pre-commit, the playground in WebAssembly and Chromium)
# install what they need here too.
set -euo pipefail
cd "$(dirname "$0")/.."
# One target directory for every build below, so the release builds of the pre-commit
# hooks and the wheel reuse each other's artifacts: $CARGO_TARGET_DIR (a relative one is
# taken from the repository root), else target/. Exported as an absolute path, so that
# cargo agrees wherever it runs; the scripts below resolve it the same way on their own.
target="${CARGO_TARGET_DIR:-target}"
[[ "$target" = /* ]] || target="$PWD/$target"
export CARGO_TARGET_DIR="$target"

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy"
cargo clippy --locked --all-targets -- -D warnings

echo "== cargo test"
cargo test --locked

echo "== playground: oomlint-web for WebAssembly, the page, its tests in Chromium"
bash editors/web/test.sh

echo "== pre-commit hooks (real pre-commit, try-repo)"
bash tests/precommit/test.sh

echo "== wheel (maturin), python -m oomlint, language: python hook"
bash tests/wheel/test.sh

echo "== schema/ is what schema/tools/generate.py makes"
python3 schema/tools/generate.py --check

echo "== Neovim (headless) with editors/nvim and oomlint server"
if ! command -v nvim >/dev/null; then
  sudo=""
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then sudo="sudo"; fi
  $sudo apt-get update && $sudo apt-get install -y neovim
fi
cargo build --locked
bash tests/nvim/run.sh "$CARGO_TARGET_DIR/debug/oomlint"

echo "== VS Code extension (npm ci, vsce package, node:test incl. the protocol and yaml-language-server tests)"
bash tests/vscode/test.sh

echo "== schema/ with check-jsonschema (metaschema, fixtures)"
python3 tests/schemas/validate_fixtures.py
