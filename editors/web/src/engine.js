// The analysis engine: oomlint-web compiled for wasm32-wasip1, run by a WASI shim
// (@bjorn3/browser_wasi_shim) with no files, no arguments and no environment. The same
// module serves the page and the Node tests (tests/same-findings.mjs).
//
// Calls are synchronous and take a few milliseconds; a trap (a bug in the engine) is
// reported as an error and the next call starts a fresh instance.

import { WASI, File, OpenFile, ConsoleStdout } from "@bjorn3/browser_wasi_shim";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class Engine {
  /** @param {WebAssembly.Module} module the compiled oomlint-web module */
  constructor(module) {
    this.module = module;
    this.instance = null;
  }

  /** Compiles the module from its bytes or a fetch Response. */
  static async load(source) {
    const module =
      source instanceof Response
        ? await WebAssembly.compileStreaming(source).catch(async () => WebAssembly.compile(await source.arrayBuffer()))
        : await WebAssembly.compile(source);
    return new Engine(module);
  }

  start() {
    const stderr = ConsoleStdout.lineBuffered((line) => console.warn(`oomlint: ${line}`));
    const fds = [new OpenFile(new File([])), stderr, stderr];
    const wasi = new WASI([], [], fds);
    const instance = new WebAssembly.Instance(this.module, { wasi_snapshot_preview1: wasi.wasiImport });
    wasi.initialize(instance);
    this.instance = instance;
  }

  /** Runs `method` with `input` (an object) and returns the parsed answer. */
  call(method, input) {
    if (!this.instance) this.start();
    const exports = this.instance.exports;
    const put = (bytes) => {
      const ptr = exports.oomlint_alloc(bytes.length);
      new Uint8Array(exports.memory.buffer, ptr, bytes.length).set(bytes);
      return ptr;
    };
    const name = encoder.encode(method);
    const body = encoder.encode(JSON.stringify(input ?? {}));
    try {
      const namePtr = put(name);
      const bodyPtr = put(body);
      const len = exports.oomlint_call(namePtr, name.length, bodyPtr, body.length);
      const out = new Uint8Array(exports.memory.buffer, exports.oomlint_output_ptr(), len);
      return JSON.parse(decoder.decode(out));
    } catch (error) {
      this.instance = null;
      return { error: `the engine stopped: ${error}` };
    }
  }
}
