// The `oomlint.*` settings as the language server reads them: sent as
// `initializationOptions` when the server starts and as `workspace/didChangeConfiguration`
// whenever they change, both under the `oomlint` key. Pure: no `vscode` import, so it is
// unit-tested outside VS Code.

/** What the server reads (server/src/lsp/options.rs). Absent means the server's default. */
export interface ServerSettings {
  gpu?: string;
  headroom?: number;
  select: string[];
  ignore: string[];
}

/** The settings plus one sentence per value that was dropped because it is malformed. */
export interface SettingsReading {
  settings: ServerSettings;
  problems: string[];
}

/** Reads one `oomlint.<key>` setting (the key without the `oomlint.` prefix). */
export type SettingReader = (key: string) => unknown;

/** Maps the editor settings onto the server's; malformed values are dropped and reported. */
export function readServerSettings(read: SettingReader): SettingsReading {
  const problems: string[] = [];
  const settings: ServerSettings = {
    select: ruleList(read('select'), 'select', problems),
    ignore: ruleList(read('ignore'), 'ignore', problems),
  };
  const gpu = read('gpu');
  if (typeof gpu === 'string' && gpu.trim() !== '') {
    settings.gpu = gpu.trim();
  } else if (gpu !== undefined && gpu !== null && typeof gpu !== 'string') {
    problems.push(`oomlint.gpu must be a GPU name such as "A10G" or "auto"; ignored ${JSON.stringify(gpu)}.`);
  }
  const headroom = read('headroom');
  if (typeof headroom === 'number' && headroom >= 0 && headroom < 1) {
    settings.headroom = headroom;
  } else if (headroom !== undefined && headroom !== null && headroom !== '') {
    problems.push(
      `oomlint.headroom must be a share of GPU memory from 0 up to 1 (e.g. 0.15); ignored ${JSON.stringify(headroom)}.`,
    );
  }
  return { settings, problems };
}

/** Rule selectors from a list or a comma-separated string, trimmed, empties dropped. */
function ruleList(value: unknown, key: string, problems: string[]): string[] {
  if (value === undefined || value === null) {
    return [];
  }
  const items = typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value : undefined;
  if (items === undefined || items.some((item) => typeof item !== 'string')) {
    problems.push(`oomlint.${key} must be a list of rule codes, code prefixes or names; ignored ${JSON.stringify(value)}.`);
    return [];
  }
  return items.map((item: string) => item.trim()).filter((item) => item !== '');
}

/** `initializationOptions` of the `initialize` request. */
export function initializationOptions(settings: ServerSettings): { oomlint: ServerSettings } {
  return { oomlint: settings };
}

/** Parameters of `workspace/didChangeConfiguration`. */
export function configurationChange(settings: ServerSettings): { settings: { oomlint: ServerSettings } } {
  return { settings: { oomlint: settings } };
}
