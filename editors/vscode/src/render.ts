// "oomlint: Show memory estimate": the answer of the server's `oomlint.showEstimate`
// command (`{summary, markdown, estimate}`, see server/src/lsp/mod.rs) rendered as one
// Markdown document, and the HTML page that shows it. Pure, unit-tested outside VS Code.

/** The server command that answers the estimate of an open document (its URI as argument). */
export const SHOW_ESTIMATE_COMMAND = 'oomlint.showEstimate';

interface Lever {
  title: string;
  saves_bytes: number;
  side_effect?: string;
}

interface Solve {
  max_micro_batch: number;
  max_seq_length: number;
  smallest_fitting_combination: string[];
  combination_fits: boolean;
}

/** The parts of the server's answer the page uses. */
export interface EstimateAnswer {
  summary: string;
  markdown: string;
  estimate: {
    parameters?: number;
    trainable_parameters?: number;
    levers?: Lever[];
    solve?: Solve | null;
    missing_inputs?: string[];
  };
}

const GIB = 1024 ** 3;

function gib(bytes: number): string {
  return (bytes / GIB).toFixed(2);
}

/** `7.6 B`, `48.6 M`: parameter counts as people say them. */
export function parameterCount(count: number): string {
  if (count >= 1e9) {
    return `${(count / 1e9).toFixed(1)} B`;
  }
  if (count >= 1e6) {
    return `${(count / 1e6).toFixed(1)} M`;
  }
  return String(count);
}

/** Whether `value` has the shape of the server's answer. */
export function isEstimateAnswer(value: unknown): value is EstimateAnswer {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const answer = value as Record<string, unknown>;
  return (
    typeof answer.summary === 'string' &&
    typeof answer.markdown === 'string' &&
    typeof answer.estimate === 'object' &&
    answer.estimate !== null
  );
}

/** Escapes text for Markdown table cells and emphasis. */
function cell(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

/**
 * The whole page as Markdown: title, the one-line summary, the server's per-component
 * breakdown, then the levers ranked by GiB saved, what fits, and the assumptions made.
 * `answer` is the server's reply; `null` (or anything else) when it has no estimate.
 */
export function estimateMarkdown(answer: unknown, fileName: string): string {
  const title = `# Memory estimate: ${fileName}\n\n`;
  if (!isEstimateAnswer(answer)) {
    return (
      title +
      'oomlint has no memory estimate for this file: it is not a training config oomlint recognises, ' +
      'or the model it names could not be resolved. The Problems panel lists why.\n'
    );
  }
  const { estimate } = answer;
  const parts = [`${title}${answer.summary}\n`];
  if (estimate.parameters !== undefined) {
    const trainable =
      estimate.trainable_parameters !== undefined
        ? `, ${parameterCount(estimate.trainable_parameters)} trainable`
        : '';
    parts.push(`Model: ${parameterCount(estimate.parameters)} parameters${trainable}.\n`);
  }
  parts.push(answer.markdown.trimEnd() + '\n');
  const levers = [...(estimate.levers ?? [])].sort((a, b) => b.saves_bytes - a.saves_bytes);
  if (levers.length > 0) {
    const rows = levers.map(
      (lever) => `| ${cell(lever.title)} | ${gib(lever.saves_bytes)} | ${cell(lever.side_effect ?? '')} |`,
    );
    parts.push(
      '## Levers\n\nEach is a code action on the keys it edits.\n\n' +
        '| lever | saves GiB | side effect |\n|---|---:|---|\n' +
        rows.join('\n') +
        '\n',
    );
  }
  const solve = estimate.solve;
  if (solve) {
    const lines = [
      `- largest micro batch that fits: ${solve.max_micro_batch === 0 ? 'none (not even 1)' : solve.max_micro_batch}`,
      `- longest sequence that fits at this micro batch: ${solve.max_seq_length === 0 ? 'none' : solve.max_seq_length}`,
    ];
    if (solve.smallest_fitting_combination.length > 0) {
      lines.push(`- fewest levers that fit together: ${solve.smallest_fitting_combination.join(' + ')}`);
    } else if (!solve.combination_fits) {
      lines.push('- no combination of the levers fits');
    }
    parts.push(`## What fits (with 10 % headroom)\n\n${lines.join('\n')}\n`);
  }
  const missing = estimate.missing_inputs ?? [];
  if (missing.length > 0) {
    parts.push(`## Assumptions\n\n${missing.map((sentence) => `- ${sentence}`).join('\n')}\n`);
  }
  return parts.join('\n');
}

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/**
 * The webview page around `bodyHtml` (the Markdown rendered by VS Code's own renderer).
 * Scripts and remote content are refused by the content security policy.
 */
export function estimatePage(title: string, bodyHtml: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline';">
<title>${escapeHtml(title)}</title>
<style>
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 1.5em; line-height: 1.5; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid var(--vscode-panel-border, #8884); padding: 0.2em 0.6em; text-align: left; }
td:nth-child(2) { text-align: right; font-variant-numeric: tabular-nums; }
code, pre { font-family: var(--vscode-editor-font-family); }
</style>
</head>
<body>
${bodyHtml}
</body>
</html>
`;
}

/** The page body when VS Code's Markdown renderer is unavailable: the Markdown as text. */
export function preformatted(markdown: string): string {
  return `<pre>${escapeHtml(markdown)}</pre>`;
}
