"""Runs a WASI command module (wasm32-wasip1) once per input file, with wasmtime from PyPI.

Usage: python run_wasi.py MODULE.wasm OUT_DIR FILE ...

The module is compiled once; each run gets the file's base name as its one argument, the
file as standard input, and writes its standard output to OUT_DIR/<base name>.out
(standard error is the caller's). No directory is preopened and no environment variable
is passed, so the program sees no file system at all. Exits 1 if any run exited non-zero.
"""

import os
import sys

from wasmtime import Engine, ExitTrap, Linker, Module, Store, WasiConfig


def run(engine: Engine, linker: Linker, module: Module, argv: list[str], stdin: str, stdout: str) -> int:
    store = Store(engine)
    wasi = WasiConfig()
    wasi.argv = argv
    wasi.stdin_file = stdin
    wasi.stdout_file = stdout
    wasi.inherit_stderr()
    store.set_wasi(wasi)
    instance = linker.instantiate(store, module)
    try:
        instance.exports(store)["_start"](store)
    except ExitTrap as exit_trap:
        return exit_trap.code
    return 0


def main() -> int:
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    module_path, out_dir, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    engine = Engine()
    linker = Linker(engine)
    linker.define_wasi()
    module = Module.from_file(engine, module_path)
    failed = 0
    for path in files:
        name = os.path.basename(path)
        argv = [os.path.basename(module_path), name]
        code = run(engine, linker, module, argv, path, os.path.join(out_dir, name + ".out"))
        if code != 0:
            print(f"{name}: exited {code} under WASI", file=sys.stderr)
            failed = 1
    return failed


if __name__ == "__main__":
    sys.exit(main())
