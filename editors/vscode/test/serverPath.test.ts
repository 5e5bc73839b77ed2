import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { type PathEnvironment, resolveServerPath, systemEnvironment } from '../src/serverPath';

function environment(executables: string[], overrides: Partial<PathEnvironment> = {}): PathEnvironment {
  return {
    platform: 'linux',
    searchPath: '/usr/bin:/home/me/.cargo/bin',
    pathExt: undefined,
    home: '/home/me',
    workspaceFolder: '/work/project',
    isExecutableFile: (file) => executables.includes(file),
    ...overrides,
  };
}

test('without a setting, the first oomlint on PATH', () => {
  const env = environment(['/home/me/.cargo/bin/oomlint', '/opt/oomlint']);
  assert.deepEqual(resolveServerPath('', env), { kind: 'found', path: '/home/me/.cargo/bin/oomlint', from: 'PATH' });
  assert.deepEqual(resolveServerPath(undefined, env), resolveServerPath('  ', env));
});

test('the setting wins over PATH; relative paths and variables are resolved', () => {
  const env = environment(['/home/me/.cargo/bin/oomlint', '/opt/oomlint', '/work/project/target/debug/oomlint']);
  assert.deepEqual(resolveServerPath('/opt/oomlint', env), { kind: 'found', path: '/opt/oomlint', from: 'setting' });
  assert.equal(resolveServerPath('target/debug/oomlint', env).kind, 'found');
  assert.deepEqual(resolveServerPath('${workspaceFolder}/target/debug/oomlint', env), {
    kind: 'found',
    path: '/work/project/target/debug/oomlint',
    from: 'setting',
  });
  assert.deepEqual(resolveServerPath('~/.cargo/bin/oomlint', env), {
    kind: 'found',
    path: '/home/me/.cargo/bin/oomlint',
    from: 'setting',
  });
});

test('a setting that names nothing says so and does not fall back to PATH', () => {
  const resolution = resolveServerPath('/nowhere/oomlint', environment(['/usr/bin/oomlint']));
  assert.equal(resolution.kind, 'missing');
  assert.match(resolution.kind === 'missing' ? resolution.message : '', /oomlint\.path is set to "\/nowhere\/oomlint"/);
});

test('neither setting nor PATH: the message says how to install', () => {
  const resolution = resolveServerPath('', environment([]));
  assert.equal(resolution.kind, 'missing');
  const message = resolution.kind === 'missing' ? resolution.message : '';
  assert.match(message, /no oomlint is on PATH/);
  assert.match(message, /cargo install --locked --path \./);
  assert.match(message, /oomlint\.path/);
});

test('Windows: PATHEXT names and ; separators', () => {
  const env = environment(['C:\\tools\\oomlint.exe'], {
    platform: 'win32',
    searchPath: 'C:\\Windows;C:\\tools',
    pathExt: '.COM;.EXE',
    home: 'C:\\Users\\me',
    workspaceFolder: undefined,
  });
  assert.deepEqual(resolveServerPath('', env), { kind: 'found', path: 'C:\\tools\\oomlint.exe', from: 'PATH' });
  assert.deepEqual(resolveServerPath('C:\\tools\\oomlint', env), {
    kind: 'found',
    path: 'C:\\tools\\oomlint.exe',
    from: 'setting',
  });
});

test('the real environment tells executables from plain files and directories', (t) => {
  if (process.platform === 'win32') {
    t.skip('POSIX permissions only');
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oomlint-path-'));
  try {
    const binary = path.join(dir, 'oomlint');
    fs.writeFileSync(binary, '#!/bin/sh\n', { mode: 0o644 });
    const env = { ...systemEnvironment(dir), searchPath: dir };
    assert.equal(resolveServerPath('', env).kind, 'missing', 'not executable');
    fs.chmodSync(binary, 0o755);
    assert.deepEqual(resolveServerPath('', env), { kind: 'found', path: binary, from: 'PATH' });
    assert.equal(resolveServerPath(dir, env).kind, 'missing', 'a directory is not a binary');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
