import assert from 'node:assert/strict';
import { test } from 'node:test';
import { estimateMarkdown, estimatePage, isEstimateAnswer, parameterCount, preformatted } from '../src/render';

const GIB = 1024 ** 3;

/** An answer shaped like the server's `oomlint.showEstimate` reply. */
function answer(overrides: Record<string, unknown> = {}) {
  return {
    summary: '≈ 11.2 GiB of 22.2 GiB on A10G — fits',
    markdown: '**Peak ≈ 11.20 GiB** in the backward phase\n\n| component | GiB | |\n|---|---:|---|\n| weights | 2.94 | `█████` |\n',
    estimate: {
      parameters: 3_606_752_256,
      trainable_parameters: 48_627_712,
      levers: [
        { title: 'Enable gradient checkpointing', saves_bytes: 2 * GIB, side_effect: 'about 30 % slower steps' },
        { title: 'Halve the micro batch to 1 | keep the global batch', saves_bytes: 3.5 * GIB, side_effect: '' },
      ],
      solve: { max_micro_batch: 4, max_seq_length: 3072, smallest_fitting_combination: [], combination_fits: true },
      missing_inputs: ['No sequence length in the file: assumed 2048 tokens.'],
      ...overrides,
    },
  };
}

test('the page: title, summary, model size, the server breakdown, levers by GiB saved, solve, assumptions', () => {
  const markdown = estimateMarkdown(answer(), 'qlora.yaml');
  const expected = [
    '# Memory estimate: qlora.yaml',
    '',
    '≈ 11.2 GiB of 22.2 GiB on A10G — fits',
    '',
    'Model: 3.6 B parameters, 48.6 M trainable.',
    '',
    '**Peak ≈ 11.20 GiB** in the backward phase',
    '',
    '| component | GiB | |',
    '|---|---:|---|',
    '| weights | 2.94 | `█████` |',
    '',
    '## Levers',
    '',
    'Each is a code action on the keys it edits.',
    '',
    '| lever | saves GiB | side effect |',
    '|---|---:|---|',
    '| Halve the micro batch to 1 \\| keep the global batch | 3.50 |  |',
    '| Enable gradient checkpointing | 2.00 | about 30 % slower steps |',
    '',
    '## What fits (with 10 % headroom)',
    '',
    '- largest micro batch that fits: 4',
    '- longest sequence that fits at this micro batch: 3072',
    '',
    '## Assumptions',
    '',
    '- No sequence length in the file: assumed 2048 tokens.',
    '',
  ].join('\n');
  assert.equal(markdown, expected);
});

test('an estimate that does not fit names the fewest levers, or says none fits', () => {
  const some = estimateMarkdown(
    answer({
      solve: {
        max_micro_batch: 0,
        max_seq_length: 0,
        smallest_fitting_combination: ['Use QLoRA', 'Enable gradient checkpointing'],
        combination_fits: true,
      },
    }),
    'full.yaml',
  );
  assert.match(some, /largest micro batch that fits: none \(not even 1\)/);
  assert.match(some, /longest sequence that fits at this micro batch: none/);
  assert.match(some, /fewest levers that fit together: Use QLoRA \+ Enable gradient checkpointing/);
  const none = estimateMarkdown(
    answer({ solve: { max_micro_batch: 0, max_seq_length: 0, smallest_fitting_combination: [], combination_fits: false } }),
    'full.yaml',
  );
  assert.match(none, /no combination of the levers fits/);
});

test('without a GPU there is no solve section and no levers section when there are none', () => {
  const markdown = estimateMarkdown(answer({ solve: null, levers: [], missing_inputs: [] }), 'a.yaml');
  assert.doesNotMatch(markdown, /## Levers|## What fits|## Assumptions/);
});

test('no estimate: an explanation instead of a breakdown', () => {
  for (const reply of [null, undefined, {}, { summary: 'x' }, 'text']) {
    const markdown = estimateMarkdown(reply, 'notes.yaml');
    assert.match(markdown, /^# Memory estimate: notes\.yaml\n\noomlint has no memory estimate for this file/);
    assert.equal(isEstimateAnswer(reply), false);
  }
  assert.equal(isEstimateAnswer(answer()), true);
});

test('parameter counts', () => {
  assert.equal(parameterCount(7_615_616_512), '7.6 B');
  assert.equal(parameterCount(20_185_088), '20.2 M');
  assert.equal(parameterCount(4096), '4096');
});

test('the HTML page escapes the title and refuses scripts', () => {
  const page = estimatePage('Memory: <x>.yaml', '<table></table>');
  assert.match(page, /<title>Memory: &lt;x&gt;\.yaml<\/title>/);
  assert.match(page, /content="default-src 'none'; style-src 'unsafe-inline';"/);
  assert.doesNotMatch(page, /script-src/);
  assert.match(page, /<body>\n<table><\/table>\n<\/body>/);
  assert.equal(preformatted('a < b & "c"'), '<pre>a &lt; b &amp; &quot;c&quot;</pre>');
});
