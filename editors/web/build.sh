#!/usr/bin/env bash
# Builds the playground into editors/web/dist/: index.html, style.css, main.js (the page,
# CodeMirror and the WASI shim, bundled by esbuild), oomlint_web.wasm (oomlint-web for
# wasm32-wasip1, profile `web`) and examples.json (the fixtures examples.tsv names).
#
# Installs what is missing: the wasm toolchain (wasm-toolchain.sh) and the npm
# packages of package-lock.json (npm ci; nothing is fetched at run time).
# Serve it with any static server, e.g. `python3 -m http.server -d editors/web/dist`.
set -euo pipefail
web="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$web/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
# shellcheck source=wasm-toolchain.sh
source "$web/wasm-toolchain.sh"

start=$SECONDS
(cd "$repo" && cargo build --locked -p oomlint-web --target "$wasm_target" --profile web)
cd "$web"
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
rm -rf dist
mkdir dist
cp "$CARGO_TARGET_DIR/$wasm_target/web/oomlint_web.wasm" dist/
node scripts/examples.mjs > dist/examples.json
npx esbuild src/main.js --bundle --minify --format=esm --target=es2022 --log-level=warning --outfile=dist/main.js
cp index.html style.css dist/
total=0; for f in dist/*; do total=$((total + $(gzip -9 -c "$f" | wc -c))); done
echo "ok: editors/web/dist built in $((SECONDS - start)) s; $(du -sh dist | cut -f1) on disk, $((total / 1024)) KiB gzip"
