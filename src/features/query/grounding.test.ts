import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RetrievedChunk } from '../retrieval/retrieve.service.ts';
import { DEFAULT_MIN_SCORE, groundingOf, mergedText, relevance } from './grounding.ts';

const RELEVANT_COSINE = 0.3;
const options = { topK: 5, minScore: DEFAULT_MIN_SCORE, relevantCosine: RELEVANT_COSINE };

/** A retrieved chunk; `score` falls with its rank as a fused ranking's does. */
function chunk(entry: string, fields: Partial<RetrievedChunk> = {}): RetrievedChunk {
  return {
    chunkId: `${entry}-${fields.ordinal ?? 0}`,
    entryId: entry,
    knowledgeBaseId: 'kb',
    recordId: entry,
    title: `Title ${entry}`,
    url: `https://docs.example/${entry}`,
    text: `Text of ${entry}.`,
    headingPath: [],
    ordinal: 0,
    start: 0,
    end: 20,
    score: 0.5,
    vectorScore: 0.1,
    keywordScore: 5,
    keywordCoverage: 0.5,
    ...fields,
  };
}

describe('grounding', () => {
  test('relevance is keyword coverage or cosine scaled to the encoder, whichever is larger', () => {
    assert.equal(relevance(chunk('a', { keywordCoverage: 0.6, vectorScore: 0.05 }), RELEVANT_COSINE), 0.6);
    assert.equal(relevance(chunk('a', { keywordCoverage: 0.1, vectorScore: RELEVANT_COSINE }), RELEVANT_COSINE), DEFAULT_MIN_SCORE);
    assert.equal(relevance(chunk('a', { keywordCoverage: 0.1, vectorScore: null }), RELEVANT_COSINE), 0.1);
  });

  test('a top-ranked keyword hit with a low cosine is kept (it was dropped when only the cosine counted)', () => {
    const chunks = [chunk('keyword-hit', { score: 1, keywordCoverage: 0.7, vectorScore: 0.02 }), chunk('weak', { score: 0.4, keywordCoverage: 0.05, vectorScore: 0.05 })];
    const { sources } = groundingOf(chunks, options);
    assert.deepEqual(sources.map((source) => source.entryId), ['keyword-hit']);
  });

  test('an off-topic question, whose best chunks hold little of it, has no sources at all', () => {
    const chunks = ['a', 'b', 'c'].map((entry, index) => chunk(entry, { score: 1 - index / 10, keywordCoverage: 0.2, vectorScore: 0.15 }));
    assert.deepEqual(groundingOf(chunks, options), { sources: [], related: [] });
  });

  test('sources are in the order and with the scores of retrieval, one per entry; entries past topK are related', () => {
    const chunks = [
      chunk('a', { score: 0.9 }),
      chunk('b', { score: 0.8 }),
      chunk('a', { score: 0.7, ordinal: 1, start: 20, end: 40, text: 'More of a.' }),
      chunk('c', { score: 0.6 }),
    ];
    const { sources, related } = groundingOf(chunks, { ...options, topK: 2 });
    assert.deepEqual(
      sources.map((source) => [source.number, source.entryId, source.score]),
      [
        [1, 'a', 0.9],
        [2, 'b', 0.8],
      ],
    );
    assert.equal(sources[0]!.text, 'Text of a.\n\nMore of a.');
    assert.deepEqual(related, [{ entryId: 'c', title: 'Title c' }]);
  });

  test('a page repeating an earlier one nearly word for word does not take a source slot', () => {
    const option = 'The --verbose option prints every statement before it runs, with its timing and the rows it returned.';
    const chunks = [
      chunk('reference-1', { score: 0.9, text: `${option} Use it to debug.` }),
      chunk('reference-2', { score: 0.85, text: `${option} Use it when tuning.` }),
      chunk('guide', { score: 0.8, text: 'Debugging a slow import starts with the logs.' }),
    ];
    const { sources, related } = groundingOf(chunks, options);
    assert.deepEqual(sources.map((source) => source.entryId), ['reference-1', 'guide']);
    assert.deepEqual(related.map((entry) => entry.entryId), ['reference-2']);
  });

  test('overlapping chunks of an entry are joined without repeating their overlap; each part keeps its headings', () => {
    const content = 'First sentence here. Second sentence follows. Third sentence ends it.';
    const first = chunk('a', { start: 0, end: 45, text: content.slice(0, 45), headingPath: ['Intro'] });
    const second = chunk('a', { ordinal: 1, start: 21, end: content.length, text: content.slice(21), headingPath: ['Intro'] });
    assert.deepEqual(mergedText([second, first]), { text: content, sections: [{ start: 0, headingPath: ['Intro'] }] });
    const apart = chunk('a', { ordinal: 5, start: 200, end: 210, text: 'Far later.', headingPath: ['Intro', 'Details'] });
    assert.deepEqual(mergedText([first, apart]), {
      text: `${content.slice(0, 45)}\n\nFar later.`,
      sections: [
        { start: 0, headingPath: ['Intro'] },
        { start: 47, headingPath: ['Intro', 'Details'] },
      ],
    });
  });
});
