import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fuse } from './retrieve.service.ts';

describe('fuse: weighted combination of min-max normalized scores', () => {
  test('scores are normalized per ranking, weighted and summed; an item missing from a ranking gets nothing from it', () => {
    const keyword = [
      { id: 'a', score: 12 },
      { id: 'b', score: 7 },
      { id: 'c', score: 2 },
    ];
    const vector = [
      { id: 'c', score: 0.9 },
      { id: 'd', score: 0.7 },
      { id: 'a', score: 0.5 },
    ];
    assert.deepEqual(
      fuse([
        { ranking: keyword, weight: 0.8 },
        { ranking: vector, weight: 0.2 },
      ]).map(({ id, score }) => [id, Number(score.toFixed(10))]),
      [
        ['a', 0.8],
        ['b', 0.4],
        ['c', 0.2],
        ['d', 0.1],
      ],
    );
  });

  test('a ranking whose scores are all equal gives its items the full weight; empty rankings add nothing', () => {
    assert.deepEqual(
      fuse([
        { ranking: [{ id: 'x', score: 3 }], weight: 0.8 },
        { ranking: [], weight: 0.2 },
      ]),
      [{ id: 'x', score: 0.8 }],
    );
  });
});
