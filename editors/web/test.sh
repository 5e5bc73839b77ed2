#!/usr/bin/env bash
# Builds the playground (build.sh) and runs its tests: the engine in WebAssembly against
# the CLI on every fixture (needs target/debug/oomlint, or OOMLINT_BIN), the page in
# Debian's Chromium (installed here when missing) driven by playwright-core, and the
# size of what a browser downloads.
set -euo pipefail
web="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$web/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"

if ! command -v "${CHROMIUM:-chromium}" >/dev/null; then
  sudo=""
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then sudo="sudo"; fi
  echo "installing chromium (Debian)"
  $sudo apt-get update
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium
fi
bash "$web/build.sh"
(cd "$repo" && cargo build --locked --bin oomlint)
export OOMLINT_BIN="${OOMLINT_BIN:-$CARGO_TARGET_DIR/debug/oomlint}"
cd "$web"
node --test --test-concurrency=1 tests/
