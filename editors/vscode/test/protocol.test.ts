// The real `oomlint server` driven over stdio with vscode-jsonrpc, the JSON-RPC library
// under vscode-languageclient, sending what the extension sends: its initializationOptions,
// its document selector's files, didChangeConfiguration under `oomlint`, and the
// `oomlint.showEstimate` command whose answer the extension renders.
//
// The binary is $OOMLINT_BIN, else debug/oomlint in $CARGO_TARGET_DIR (a relative one taken
// from this repository's root), else in target/ (tests/vscode/test.sh builds it).

import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, type MessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { estimateMarkdown, isEstimateAnswer, SHOW_ESTIMATE_COMMAND } from '../src/render';
import { configurationChange, initializationOptions, readServerSettings } from '../src/settings';

const repo = path.resolve(__dirname, '..', '..', '..', '..');
const targetDir = path.resolve(repo, process.env.CARGO_TARGET_DIR || 'target');
const binary = process.env.OOMLINT_BIN ?? path.join(targetDir, 'debug', 'oomlint');
const fixture = fs.readFileSync(path.join(repo, 'fixtures', 'litgpt', 'qlora-precision.yaml'), 'utf8');
const TIMEOUT_MS = 20_000;

interface Diagnostic {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  code: string;
  source: string;
  data: { rule: string; fixes: unknown[] };
}

interface Published {
  uri: string;
  version?: number;
  diagnostics: Diagnostic[];
}

let server: ChildProcess;
let connection: MessageConnection;
let workspace: string;
let uri: string;
const published: Published[] = [];
const shownMessages: string[] = [];

/**
 * The diagnostics last published for `uri` after the `seen`-th message, once they satisfy
 * `accept`: the state a step expects, however many messages come first (a republish an
 * earlier step triggered may still be on its way). TIMEOUT_MS only bounds a failure.
 */
async function diagnosticsAfter(seen: number, accept: (p: Published) => boolean): Promise<Published> {
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    const latest = published.slice(seen).filter((p) => p.uri === uri).at(-1);
    if (latest !== undefined && accept(latest)) {
      return latest;
    }
    if (Date.now() > deadline) {
      assert.fail(`no matching publishDiagnostics within ${TIMEOUT_MS} ms; got ${JSON.stringify(published.slice(seen))}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function codes(p: Published): string[] {
  return p.diagnostics.map((d) => d.code);
}

/** The settings as the extension reads them from VS Code. */
function settings(values: Record<string, unknown>) {
  const reading = readServerSettings((key) => values[key]);
  assert.deepEqual(reading.problems, []);
  return reading.settings;
}

function showEstimate(documentUri: string): Promise<unknown> {
  return connection.sendRequest('workspace/executeCommand', { command: SHOW_ESTIMATE_COMMAND, arguments: [documentUri] });
}

before(() => {
  assert.ok(fs.existsSync(binary), `${binary} is missing: run \`cargo build\` first (or set OOMLINT_BIN)`);
  workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'oomlint-vscode-'));
  const file = path.join(workspace, 'qlora-precision.yaml');
  fs.writeFileSync(file, fixture);
  uri = pathToFileURL(file).href;
  server = spawn(binary, ['server'], { cwd: workspace, stdio: ['pipe', 'pipe', 'inherit'] });
  connection = createMessageConnection(
    new StreamMessageReader(server.stdout!),
    new StreamMessageWriter(server.stdin!),
  );
  connection.onNotification('textDocument/publishDiagnostics', (params: Published) => {
    published.push(params);
  });
  connection.onNotification('window/showMessage', (params: { message: string }) => {
    shownMessages.push(params.message);
  });
  // VS Code answers the server's code lens refresh.
  connection.onRequest('workspace/codeLens/refresh', () => null);
  connection.listen();
});

after(() => {
  connection?.dispose();
  if (server?.exitCode === null) {
    server.kill();
  }
  fs.rmSync(workspace, { recursive: true, force: true });
});

test('initialize with the extension\'s initializationOptions', async () => {
  const result: any = await connection.sendRequest('initialize', {
    processId: process.pid,
    clientInfo: { name: 'Visual Studio Code', version: '1.91.0' },
    rootUri: pathToFileURL(workspace).href,
    workspaceFolders: [{ uri: pathToFileURL(workspace).href, name: 'workspace' }],
    capabilities: {
      general: { positionEncodings: ['utf-16'] },
      textDocument: {
        synchronization: { dynamicRegistration: true, didSave: true },
        publishDiagnostics: { relatedInformation: true, versionSupport: true, codeDescriptionSupport: true, dataSupport: true },
        hover: { contentFormat: ['markdown', 'plaintext'] },
        codeLens: {},
      },
      workspace: { codeLens: { refreshSupport: true }, didChangeConfiguration: {}, executeCommand: {} },
    },
    initializationOptions: initializationOptions(settings({ gpu: 'A10G', headroom: null, select: [], ignore: [] })),
  });
  const capabilities = result.capabilities;
  assert.equal(capabilities.positionEncoding, 'utf-16', 'VS Code speaks UTF-16');
  assert.deepEqual(capabilities.executeCommandProvider.commands, [SHOW_ESTIMATE_COMMAND]);
  assert.equal(capabilities.hoverProvider, true);
  assert.equal(result.serverInfo.name, 'oomlint');
  await connection.sendNotification('initialized', {});
});

test('opening the fixture publishes OOM101 on the precision value, with version, source and data', async () => {
  const seen = published.length;
  await connection.sendNotification('textDocument/didOpen', {
    textDocument: { uri, languageId: 'yaml', version: 1, text: fixture },
  });
  const first = await diagnosticsAfter(seen, (p) => p.version === 1);
  const oom101 = first.diagnostics.find((d) => d.code === 'OOM101');
  assert.ok(oom101, `OOM101 among ${codes(first)}`);
  const line = fixture.split('\n').findIndex((l) => l.startsWith('precision: bf16-mixed'));
  const start = 'precision: '.length;
  assert.deepEqual(oom101.range, {
    start: { line, character: start },
    end: { line, character: start + 'bf16-mixed'.length },
  });
  assert.equal(oom101.source, 'oomlint');
  assert.equal(oom101.data.rule, 'litgpt-quantize-mixed-precision');
  assert.ok(oom101.data.fixes.length > 0, 'the fix travels with the diagnostic');
});

test('a hover on a memory key shows the breakdown in GiB', async () => {
  const line = fixture.split('\n').findIndex((l) => l.startsWith('quantize:'));
  const hover: any = await connection.sendRequest('textDocument/hover', {
    textDocument: { uri },
    position: { line, character: 3 },
  });
  assert.equal(hover.contents.kind, 'markdown');
  assert.match(hover.contents.value, /quantize/);
  assert.match(hover.contents.value, /\d+\.\d+ GiB/);
  assert.equal(hover.range.start.line, line);
});

test('"Show memory estimate": the server answers and the page renders the breakdown the CLI computes', async () => {
  const answer = await showEstimate(uri);
  assert.ok(isEstimateAnswer(answer), JSON.stringify(answer).slice(0, 300));
  const cli = JSON.parse(
    execFileSync(binary, ['estimate', path.join(workspace, 'qlora-precision.yaml'), '--gpu', 'A10G', '--format', 'json'], {
      encoding: 'utf8',
    }),
  );
  const peak = (cli.peak.device_bytes / 1024 ** 3).toFixed(1);
  const capacity = (cli.gpu.memory_bytes / 1024 ** 3).toFixed(1);
  assert.match(answer.summary, new RegExp(`^≈ ${peak} GiB of ${capacity} GiB on A10G — (fits|tight|does not fit)$`));
  const page = estimateMarkdown(answer, 'qlora-precision.yaml');
  assert.ok(page.startsWith(`# Memory estimate: qlora-precision.yaml\n\n${answer.summary}\n`));
  for (const component of cli.components.filter((c: any) => c.phase === cli.peak.phase)) {
    assert.match(page, new RegExp(`\\| ${component.name} \\| ${(component.bytes / 1024 ** 3).toFixed(2)} \\|`));
  }
  assert.ok(cli.levers.length > 0);
  for (const lever of cli.levers) {
    assert.ok(page.includes(`| ${lever.title.replace(/\|/g, '\\|')} | ${(lever.saves_bytes / 1024 ** 3).toFixed(2)} |`), lever.title);
  }
});

test('the summary code lens runs the estimate command with the document URI, as the middleware expects', async () => {
  const lenses: any[] = await connection.sendRequest('textDocument/codeLens', { textDocument: { uri } });
  assert.equal(lenses.length, 1);
  assert.equal(lenses[0].range.start.line, 0);
  assert.equal(lenses[0].command.command, SHOW_ESTIMATE_COMMAND);
  assert.deepEqual(lenses[0].command.arguments, [uri]);
  const answer = await showEstimate(uri);
  assert.ok(isEstimateAnswer(answer));
  assert.equal(lenses[0].command.title, answer.summary);
});

test('a document the server does not have answers no estimate', async () => {
  const answer = await showEstimate(pathToFileURL(path.join(workspace, 'not-open.yaml')).href);
  assert.equal(answer, null);
  assert.match(estimateMarkdown(answer, 'not-open.yaml'), /no memory estimate/);
});

test('edits are published with their version', async () => {
  let seen = published.length;
  await connection.sendNotification('textDocument/didChange', {
    textDocument: { uri, version: 2 },
    contentChanges: [{ text: fixture.replace('precision: bf16-mixed', 'precision: bf16-true') }],
  });
  const fixed = await diagnosticsAfter(seen, (p) => p.version === 2);
  assert.ok(!codes(fixed).includes('OOM101'), `${codes(fixed)}`);
  seen = published.length;
  await connection.sendNotification('textDocument/didChange', {
    textDocument: { uri, version: 3 },
    contentChanges: [{ text: fixture }],
  });
  const broken = await diagnosticsAfter(seen, (p) => p.version === 3);
  assert.ok(codes(broken).includes('OOM101'));
});

test('changed settings reach the server: ignore drops OOM101, the GPU changes the summary', async () => {
  const seen = published.length;
  await connection.sendNotification(
    'workspace/didChangeConfiguration',
    configurationChange(settings({ gpu: 'H100', headroom: 0.2, select: [], ignore: ['OOM101'] })),
  );
  const republished = await diagnosticsAfter(seen, (p) => !codes(p).includes('OOM101'));
  assert.equal(republished.version, 3);
  const answer = await showEstimate(uri);
  assert.ok(isEstimateAnswer(answer));
  assert.match(answer.summary, / on H100\S* — /);
  assert.deepEqual(shownMessages, [], 'valid settings raise no warning');
});

test('an unknown GPU name is reported to the user', async () => {
  const seen = published.length;
  await connection.sendNotification('workspace/didChangeConfiguration', configurationChange(settings({ gpu: 'not-a-gpu' })));
  const deadline = Date.now() + TIMEOUT_MS;
  while (!shownMessages.some((m) => m.includes('not-a-gpu')) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.ok(shownMessages.some((m) => m.includes('not-a-gpu')), JSON.stringify(shownMessages));
  // The warning comes before the republish; this step ends once the document is published
  // with the new settings (nothing ignored any more), so none of it spills into the next.
  await diagnosticsAfter(seen, (p) => codes(p).includes('OOM101'));
});

test('closing clears the diagnostics; shutdown and exit end the process with status 0', async () => {
  const seen = published.length;
  await connection.sendNotification('textDocument/didClose', { textDocument: { uri } });
  // Waits for the empty list, not the next publication.
  const cleared = await diagnosticsAfter(seen, (p) => p.diagnostics.length === 0);
  assert.equal(cleared.version, undefined, 'a closed document has no version');
  const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
  assert.equal(await connection.sendRequest('shutdown'), null);
  await connection.sendNotification('exit');
  assert.equal(await exited, 0);
});
