// The documents the extension sends to the server. Pure data, shared by the extension and
// its tests (which check it against package.json's activation events).

/** One entry of a VS Code document selector (a subset of `vscode.DocumentFilter`). */
export interface DocumentFilter {
  scheme: string;
  language?: string;
  pattern?: string;
}

/** Languages whose files may be training configs, env files or launch scripts. */
export const LANGUAGES = ['yaml', 'json', 'jsonc', 'toml', 'dotenv', 'shellscript', 'python'] as const;

/**
 * File patterns matched whatever language VS Code gives the file: `.env` files (often
 * plain text or `properties`), TOML without a TOML extension, notebooks opened as JSON.
 */
export const PATTERNS = ['**/{.env,.env.*,*.env}', '**/*.toml', '**/*.ipynb'] as const;

/**
 * Python cells of Jupyter notebooks. The server syncs them as notebooks (its
 * `notebookDocumentSync` capability), so all cells are read as one program; this filter
 * sends it their hover, completion and code action requests.
 */
export const NOTEBOOK_CELLS: DocumentFilter = { scheme: 'vscode-notebook-cell', language: 'python' };

export const DOCUMENT_SELECTOR: DocumentFilter[] = [
  ...LANGUAGES.map((language) => ({ scheme: 'file', language })),
  ...PATTERNS.map((pattern) => ({ scheme: 'file', pattern })),
  NOTEBOOK_CELLS,
];
