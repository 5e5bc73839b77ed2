#!/usr/bin/env bash
# Builds and tests the VS Code extension in editors/vscode on a fresh machine (Node 20, npm):
# `npm ci`, `vsce package` (which runs the TypeScript build and bundle first), checking what
# the .vsix holds and deleting it, then the node:test tests (unit tests, the bundle
# activated against a stand-in `vscode` module, the protocol test that drives this
# checkout's `oomlint server` with vscode-jsonrpc, and yaml-language-server reading schema/
# through the modeline and `yaml.schemas`).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"

# Cargo's target directory: $CARGO_TARGET_DIR (a relative one is taken from the repository
# root), else target/. Exported as an absolute path so that cargo, wherever it runs, agrees.
target="${CARGO_TARGET_DIR:-target}"
[[ "$target" = /* ]] || target="$repo/$target"
export CARGO_TARGET_DIR="$target"

# The protocol test's server: this checkout's build.
cargo build --quiet --manifest-path "$repo/Cargo.toml"
export OOMLINT_BIN="$CARGO_TARGET_DIR/debug/oomlint"

cd "$repo/editors/vscode"
echo "-- npm ci"
npm ci --no-audit --no-fund --loglevel=error

# `vsce package` runs the `vscode:prepublish` script first (`npm run build`: tsc, then the
# esbuild bundle), so this one command is the build the README shows.
echo "-- npx @vscode/vsce package (builds first)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
npx @vscode/vsce package --out "$out/oomlint.vsix" < /dev/null
[ -s "$out/oomlint.vsix" ] || { echo "FAIL: vsce built no .vsix" >&2; exit 1; }
python3 - "$out/oomlint.vsix" <<'PY'
import sys, zipfile
vsix = zipfile.ZipFile(sys.argv[1])
names = sorted(n for n in vsix.namelist() if n.startswith("extension/"))
# vsce stores the README as readme.md and the license as LICENSE.txt.
expected = ["extension/LICENSE.txt", "extension/dist/extension.js", "extension/package.json", "extension/readme.md"]
if names != expected:
    sys.exit(f"FAIL: the .vsix holds {names}, expected {expected}")
size = sum(i.file_size for i in vsix.infolist())
print(f"oomlint.vsix: {len(names)} files, {size // 1024} KiB unpacked")
PY
rm -f "$out/oomlint.vsix"

echo "-- npm test (node --test on the build)"
npm test --silent
echo "vscode extension: build, package and tests passed"
