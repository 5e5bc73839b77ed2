// schema/ as VS Code's YAML extension uses it: yaml-language-server (the server inside
// redhat.vscode-yaml) over stdio, pointed at the schemas by a
// `# yaml-language-server: $schema=` modeline and by the `yaml.schemas` setting, exactly as
// the README shows.

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, type MessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';

const repo = path.resolve(__dirname, '..', '..', '..', '..');
const TIMEOUT_MS = 20_000;

interface Diagnostic {
  range: { start: { line: number } };
  message: string;
}

let server: ChildProcess;
let connection: MessageConnection;
const latest = new Map<string, Diagnostic[]>();

/** `yaml.schemas` of a workspace at the repository root, as in the README. */
const yamlSettings = {
  validate: true,
  hover: true,
  schemaStore: { enable: false },
  schemas: { './schema/litgpt-lora.json': ['fixtures/rules/unknown-key/*.yaml', 'fixtures/rules/invalid-value/*.yaml'] },
};

function read(relative: string): string {
  return fs.readFileSync(path.join(repo, relative), 'utf8');
}

function uriOf(relative: string): string {
  return pathToFileURL(path.join(repo, relative)).href;
}

function open(relative: string, text: string): void {
  void connection.sendNotification('textDocument/didOpen', {
    textDocument: { uri: uriOf(relative), languageId: 'yaml', version: 1, text },
  });
}

/**
 * Runs `check` on the diagnostics last published for `uris` until it passes: the state the
 * test expects, however many publications come first (the server validates again when its
 * settings arrive, so an early list may predate `yaml.schemas`). TIMEOUT_MS only bounds a
 * failure, which is `check`'s last.
 */
async function expectDiagnostics(uris: string[], check: (found: Map<string, Diagnostic[]>) => void): Promise<void> {
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    try {
      const missing = uris.filter((uri) => !latest.has(uri));
      assert.deepEqual(missing, [], `no diagnostics within ${TIMEOUT_MS} ms for ${missing}`);
      check(new Map(uris.map((uri) => [uri, latest.get(uri)!])));
      return;
    } catch (error) {
      if (Date.now() > deadline) {
        throw error;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function lineOf(text: string, prefix: string): number {
  const line = text.split('\n').findIndex((l) => l.startsWith(prefix));
  assert.ok(line >= 0, prefix);
  return line;
}

before(async () => {
  const bin = require.resolve('yaml-language-server/bin/yaml-language-server');
  server = spawn(process.execPath, [bin, '--stdio'], { cwd: repo, stdio: ['pipe', 'pipe', 'inherit'] });
  connection = createMessageConnection(new StreamMessageReader(server.stdout!), new StreamMessageWriter(server.stdin!));
  connection.onNotification('textDocument/publishDiagnostics', (params: { uri: string; diagnostics: Diagnostic[] }) => {
    latest.set(params.uri, params.diagnostics);
  });
  connection.onRequest('workspace/configuration', (params: { items: { section?: string }[] }) =>
    params.items.map((item) => (item.section === 'yaml' ? yamlSettings : null)),
  );
  connection.onRequest('client/registerCapability', () => null);
  connection.listen();
  await connection.sendRequest('initialize', {
    processId: process.pid,
    rootUri: pathToFileURL(repo).href,
    workspaceFolders: [{ uri: pathToFileURL(repo).href, name: 'oomlint' }],
    capabilities: { workspace: { configuration: true }, textDocument: { hover: { contentFormat: ['markdown'] } } },
  });
  await connection.sendNotification('initialized', {});
  await connection.sendNotification('workspace/didChangeConfiguration', { settings: { yaml: yamlSettings } });
});

after(() => {
  connection?.dispose();
  server?.kill();
});

test('every YAML fixture of a schema format validates through the $schema modeline', async () => {
  const opened: string[] = [];
  for (const schema of fs.readdirSync(path.join(repo, 'schema')).filter((name) => name.endsWith('.json'))) {
    const format = schema.replace(/\.json$/, '');
    const dir = path.join(repo, 'fixtures', format);
    if (!fs.existsSync(dir)) {
      continue;
    }
    for (const name of fs.readdirSync(dir).filter((n) => /\.ya?ml$/.test(n))) {
      const relative = path.join('fixtures', format, name);
      open(relative, `# yaml-language-server: $schema=../../schema/${schema}\n${read(relative)}`);
      opened.push(uriOf(relative));
    }
  }
  assert.ok(opened.length >= 10, `${opened.length} fixtures`);
  await expectDiagnostics(opened, (found) => {
    for (const [uri, diagnostics] of found) {
      assert.deepEqual(diagnostics.map((d) => d.message), [], uri);
    }
  });
});

test('yaml.schemas: unknown keys and invalid values are reported where they are', async () => {
  const unknown = 'fixtures/rules/unknown-key/fail.yaml';
  const invalid = 'fixtures/rules/invalid-value/fail.yaml';
  open(unknown, read(unknown));
  open(invalid, read(invalid));
  const u = read(unknown);
  const v = read(invalid);
  await expectDiagnostics([uriOf(unknown), uriOf(invalid)], (found) => {
    const summary = (relative: string) =>
      (found.get(uriOf(relative)) ?? []).map((d) => `${d.range.start.line}: ${d.message}`).sort();
    assert.deepEqual(
      summary(unknown),
      [
        `${lineOf(u, 'precison:')}: Property precison is not allowed.`,
        `${lineOf(u, '  micro_batch_sise:')}: Property micro_batch_sise is not allowed.`,
      ].sort(),
    );
    const messages = summary(invalid);
    assert.ok(messages.includes(`${lineOf(v, 'logger_name:')}: Value is not accepted. Valid values: "csv", "tensorboard", "wandb", "mlflow", "litlogger".`), `${messages}`);
    assert.ok(messages.includes(`${lineOf(v, 'lora_dropout:')}: Value is above the maximum of 1.`), `${messages}`);
    assert.equal(messages.length, 3, `${messages}`);
  });
});

test('hover shows the schema description of a key', async () => {
  const relative = 'fixtures/rules/unknown-key/fail.yaml';
  const hover: any = await connection.sendRequest('textDocument/hover', {
    textDocument: { uri: uriOf(relative) },
    position: { line: lineOf(read(relative), 'checkpoint_dir:'), character: 3 },
  });
  const schema = JSON.parse(read('schema/litgpt-lora.json'));
  const text = hover.contents.value.replace(/\\([\\`*_{}[\]()#+\-.!<>])/g, '$1'); // Markdown escapes
  assert.ok(text.includes(schema.properties.checkpoint_dir.description), hover.contents.value);
});
