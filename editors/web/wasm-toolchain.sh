# Sourced by editors/web/build.sh, which builds oomlint-web for wasm32-wasip1: installs
# what is missing, and only that, and points the C compiler at wasm32.
# - Debian: clang (compiles tree-sitter's C for wasm32), wasi-libc (its C headers), llvm
#   (llvm-ar, which the cc crate uses to archive wasm objects); rust-lld, shipped with
#   Rust, links.
# - rustup: the wasm32-wasip1 standard library.
wasm_target=wasm32-wasip1

wasm_missing=()
command -v clang >/dev/null || wasm_missing+=(clang)
command -v llvm-ar >/dev/null || wasm_missing+=(llvm)
[ -f /usr/include/wasm32-wasi/stdio.h ] || wasm_missing+=(wasi-libc)
if [ ${#wasm_missing[@]} -gt 0 ]; then
  wasm_sudo=""
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then wasm_sudo="sudo"; fi
  echo "installing ${wasm_missing[*]} (Debian)"
  $wasm_sudo apt-get update
  $wasm_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y "${wasm_missing[@]}"
fi

if ! rustup target list --installed | grep -qx "$wasm_target"; then
  rustup target add "$wasm_target"
fi

# tree-sitter's C needs a C compiler for wasm32 and a libc's headers; the cc crate reads
# these per-target variables, so host builds are untouched.
export CC_wasm32_wasip1="${CC_wasm32_wasip1:-clang}"
export CFLAGS_wasm32_wasip1="${CFLAGS_wasm32_wasip1:--isystem /usr/include/wasm32-wasi}"
