// The packaged bundle (dist/extension.js, built by `npm run build`) loaded in Node with a
// stand-in for the `vscode` module: it needs nothing but `vscode` and Node's built-ins, and
// activating it without an oomlint binary registers its commands and tells the user how to
// install one.

import assert from 'node:assert/strict';
import Module, { builtinModules } from 'node:module';
import * as path from 'node:path';
import { test } from 'node:test';

const bundle = path.join(__dirname, '..', '..', 'dist', 'extension.js');

interface Recorder {
  commands: string[];
  errors: string[];
  log: string[];
}

/** Just enough of the VS Code API for activation, recording what the extension does. */
function fakeVscode(settings: Record<string, unknown>, recorder: Recorder): unknown {
  const disposable = { dispose() {} };
  const api = {
    window: {
      createOutputChannel: () => ({
        info: (m: string) => recorder.log.push(m),
        warn: (m: string) => recorder.log.push(m),
        error: (m: string) => recorder.log.push(m),
        dispose() {},
      }),
      showErrorMessage: (message: string) => {
        recorder.errors.push(message);
        return Promise.resolve(undefined);
      },
      showWarningMessage: () => Promise.resolve(undefined),
    },
    commands: {
      registerCommand: (id: string) => {
        recorder.commands.push(id);
        return disposable;
      },
    },
    workspace: {
      workspaceFolders: undefined,
      getConfiguration: () => ({ get: (key: string) => settings[key] }),
      onDidChangeConfiguration: () => disposable,
    },
  };
  // The language client library reads classes and enums off the module when it loads.
  return new Proxy(api, {
    get: (target, key) => (key in target ? target[key as keyof typeof target] : class {}),
  });
}

function loadBundle(vscode: unknown): { activate(context: unknown): Promise<void>; required: string[] } {
  const required: string[] = [];
  const load = (Module as any)._load;
  (Module as any)._load = function (request: string, ...rest: unknown[]) {
    if (request === 'vscode') {
      return vscode;
    }
    required.push(request);
    return load.call(this, request, ...rest);
  };
  try {
    delete require.cache[bundle];
    return { ...require(bundle), required };
  } finally {
    (Module as any)._load = load;
  }
}

test('without oomlint on PATH or oomlint.path, activation registers the commands and says how to install', async () => {
  const recorder: Recorder = { commands: [], errors: [], log: [] };
  const savedPath = process.env.PATH;
  process.env.PATH = '';
  try {
    const extension = loadBundle(fakeVscode({ path: '' }, recorder));
    const outside = extension.required.filter(
      (r) => r !== bundle && !builtinModules.includes(r.replace(/^node:/, '')),
    );
    assert.deepEqual(outside, [], 'the bundle requires only vscode and Node built-ins');
    await extension.activate({ subscriptions: [] });
  } finally {
    process.env.PATH = savedPath;
  }
  assert.deepEqual(recorder.commands.sort(), ['oomlint.restartServer', 'oomlint.showMemoryEstimate']);
  assert.equal(recorder.errors.length, 1);
  assert.match(recorder.errors[0], /no oomlint is on PATH.*cargo install --locked --path \..*oomlint\.path/);
});

test('a wrong oomlint.path is named in the message', async () => {
  const recorder: Recorder = { commands: [], errors: [], log: [] };
  const extension = loadBundle(fakeVscode({ path: '/nowhere/oomlint' }, recorder));
  await extension.activate({ subscriptions: [] });
  assert.equal(recorder.errors.length, 1);
  assert.match(recorder.errors[0], /oomlint\.path is set to "\/nowhere\/oomlint"/);
  assert.ok(recorder.log.includes(recorder.errors[0]), 'the message also goes to the output channel');
});
