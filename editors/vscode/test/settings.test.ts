import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configurationChange, initializationOptions, readServerSettings } from '../src/settings';

/** A reader over a plain object, as `vscode.workspace.getConfiguration('oomlint').get` behaves. */
function reader(values: Record<string, unknown>): (key: string) => unknown {
  return (key) => values[key];
}

test('VS Code defaults map to no server options', () => {
  const reading = readServerSettings(reader({ path: '', gpu: '', headroom: null, select: [], ignore: [] }));
  assert.deepEqual(reading, { settings: { select: [], ignore: [] }, problems: [] });
});

test('gpu, headroom and rule selection are passed through, trimmed', () => {
  const reading = readServerSettings(
    reader({ gpu: '  A100 80GB ', headroom: 0.15, select: ['OOM6', ' OOM101 '], ignore: ['low-memory-headroom', ''] }),
  );
  assert.deepEqual(reading.settings, {
    gpu: 'A100 80GB',
    headroom: 0.15,
    select: ['OOM6', 'OOM101'],
    ignore: ['low-memory-headroom'],
  });
  assert.deepEqual(reading.problems, []);
});

test('a comma-separated rule list is read as a list', () => {
  const { settings } = readServerSettings(reader({ ignore: 'OOM602, yaml-syntax,' }));
  assert.deepEqual(settings.ignore, ['OOM602', 'yaml-syntax']);
});

test('malformed values are dropped with one sentence each', () => {
  const reading = readServerSettings(reader({ gpu: 24, headroom: 15, select: ['OOM1', 3], ignore: { a: 1 } }));
  assert.deepEqual(reading.settings, { select: [], ignore: [] });
  assert.equal(reading.problems.length, 4);
  assert.match(reading.problems.find((p) => p.startsWith('oomlint.headroom')) ?? '', /from 0 up to 1.*ignored 15/);
  assert.match(reading.problems.find((p) => p.startsWith('oomlint.gpu')) ?? '', /ignored 24/);
  assert.ok(reading.problems.some((p) => p.startsWith('oomlint.select')));
  assert.ok(reading.problems.some((p) => p.startsWith('oomlint.ignore')));
});

test('headroom bounds: 0 is allowed, 1 is not', () => {
  assert.equal(readServerSettings(reader({ headroom: 0 })).settings.headroom, 0);
  assert.equal(readServerSettings(reader({ headroom: 1 })).settings.headroom, undefined);
  assert.equal(readServerSettings(reader({ headroom: -0.1 })).settings.headroom, undefined);
});

test('both messages carry the settings under `oomlint`', () => {
  const settings = { gpu: 'L4', select: [], ignore: ['OOM602'] };
  assert.deepEqual(initializationOptions(settings), { oomlint: settings });
  assert.deepEqual(configurationChange(settings), { settings: { oomlint: settings } });
});
