// Which `oomlint` binary the extension starts: the `oomlint.path` setting, else the first
// `oomlint` on PATH. Pure apart from `systemEnvironment`, which reads the real machine.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** What the resolution looks at; tests pass a fake one. */
export interface PathEnvironment {
  platform: NodeJS.Platform;
  /** The PATH variable. */
  searchPath: string | undefined;
  /** Windows' PATHEXT (executable extensions). */
  pathExt: string | undefined;
  home: string;
  /** The first workspace folder, against which a relative `oomlint.path` is resolved. */
  workspaceFolder: string | undefined;
  isExecutableFile(file: string): boolean;
}

export type Resolution =
  | { kind: 'found'; path: string; from: 'setting' | 'PATH' }
  | { kind: 'missing'; message: string };

/** The command users run to install the server, as the README shows it. */
export const INSTALL_HINT = 'cargo install --locked --path . (in a clone of oomlint)';

/** Resolves the binary to start; `setting` is `oomlint.path` (empty or absent: search PATH). */
export function resolveServerPath(setting: string | undefined, env: PathEnvironment): Resolution {
  const p = env.platform === 'win32' ? path.win32 : path.posix;
  const configured = setting?.trim() ?? '';
  if (configured !== '') {
    const expanded = expandVariables(configured, env);
    const absolute = p.isAbsolute(expanded) ? expanded : p.resolve(env.workspaceFolder ?? env.home, expanded);
    const candidates = env.platform === 'win32' && p.extname(absolute) === '' ? [absolute, `${absolute}.exe`] : [absolute];
    const found = candidates.find((candidate) => env.isExecutableFile(candidate));
    if (found !== undefined) {
      return { kind: 'found', path: found, from: 'setting' };
    }
    return {
      kind: 'missing',
      message:
        `oomlint.path is set to "${configured}", but there is no executable file at ${absolute}. ` +
        'Correct the setting, or clear it to use the oomlint on PATH.',
    };
  }
  const names = executableNames('oomlint', env);
  for (const dir of (env.searchPath ?? '').split(env.platform === 'win32' ? ';' : ':')) {
    if (dir === '') {
      continue;
    }
    for (const name of names) {
      const candidate = p.join(dir, name);
      if (env.isExecutableFile(candidate)) {
        return { kind: 'found', path: candidate, from: 'PATH' };
      }
    }
  }
  return {
    kind: 'missing',
    message:
      'The oomlint language server was not found: oomlint.path is empty and no oomlint is on PATH. ' +
      `Install it with ${INSTALL_HINT}, or set oomlint.path to the binary.`,
  };
}

/** Expands `~`, `${userHome}` and `${workspaceFolder}` as VS Code users write them. */
function expandVariables(value: string, env: PathEnvironment): string {
  let out = value.replace(/\$\{userHome\}/g, env.home);
  if (env.workspaceFolder !== undefined) {
    out = out.replace(/\$\{workspaceFolder\}/g, env.workspaceFolder);
  }
  if (out === '~' || out.startsWith('~/') || out.startsWith('~\\')) {
    out = env.home + out.slice(1);
  }
  return out;
}

/** `oomlint`, or on Windows `oomlint.exe` and the other PATHEXT forms. */
function executableNames(name: string, env: PathEnvironment): string[] {
  if (env.platform !== 'win32') {
    return [name];
  }
  const extensions = (env.pathExt ?? '.EXE;.CMD;.BAT').split(';').filter((ext) => ext !== '');
  return extensions.map((ext) => name + ext.toLowerCase());
}

/** The environment of this process. */
export function systemEnvironment(workspaceFolder: string | undefined): PathEnvironment {
  return {
    platform: process.platform,
    searchPath: process.env.PATH,
    pathExt: process.env.PATHEXT,
    home: os.homedir(),
    workspaceFolder,
    isExecutableFile(file: string): boolean {
      try {
        if (!fs.statSync(file).isFile()) {
          return false;
        }
        fs.accessSync(file, process.platform === 'win32' ? fs.constants.F_OK : fs.constants.X_OK);
        return true;
      } catch {
        return false;
      }
    },
  };
}
