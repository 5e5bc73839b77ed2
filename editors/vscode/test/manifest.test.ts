// package.json against the code: what VS Code activates on, the settings it shows, the
// commands it lists.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { LANGUAGES } from '../src/selector';
import { readServerSettings } from '../src/settings';

const root = path.join(__dirname, '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

test('the extension activates on every language it sends to the server', () => {
  const activation: string[] = manifest.activationEvents;
  for (const language of LANGUAGES) {
    assert.ok(activation.includes(`onLanguage:${language}`), `onLanguage:${language}`);
  }
});

test('every setting the server reads is declared, with its default mapping to the server default', () => {
  const properties: Record<string, { default: unknown }> = manifest.contributes.configuration.properties;
  const read: string[] = [];
  const defaults = readServerSettings((key) => {
    read.push(key);
    return properties[`oomlint.${key}`]?.default;
  });
  for (const key of read) {
    assert.ok(`oomlint.${key}` in properties, `oomlint.${key} is declared`);
  }
  assert.deepEqual(read.sort(), ['gpu', 'headroom', 'ignore', 'select']);
  assert.deepEqual(defaults, { settings: { select: [], ignore: [] }, problems: [] });
  assert.ok('oomlint.path' in properties);
});

test('every contributed command is registered by the extension', () => {
  const source = fs.readFileSync(path.join(root, 'src', 'extension.ts'), 'utf8');
  const commands: { command: string; title: string; category: string }[] = manifest.contributes.commands;
  assert.ok(commands.some((c) => `${c.category}: ${c.title}` === 'oomlint: Show memory estimate'));
  for (const { command } of commands) {
    assert.ok(source.includes(`registerCommand('${command}'`), command);
  }
});

test('the package ships only the bundle, the manifest, the README and the license', () => {
  assert.equal(manifest.main, './dist/extension.js');
  const ignore = fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8');
  assert.match(ignore, /^\*\*$/m);
  assert.equal(manifest.vsce.dependencies, false, 'the bundle carries the dependencies');
  assert.equal(manifest.scripts['vscode:prepublish'], 'npm run build', 'vsce package builds first');
  assert.deepEqual(manifest.engines.vscode, `^${manifest.devDependencies['@types/vscode']}`);
});
