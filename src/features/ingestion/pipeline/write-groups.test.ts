import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { firstGroup, pgliteGroupChunks } from './write-groups.ts';

type Write = { id: string; chunks: string[] };
type Batch = { outcomes: string[]; deletes: string[]; writes: Write[] };

const write = (id: string, chunks: number): Write => ({ id, chunks: Array.from({ length: chunks }, (_, index) => `${id}${index}`) });

/** Every group of a batch, as firstGroup cuts them one after another: ids per group. */
function groups(batch: Batch, chunks: number): { outcomes: string[]; items: string[] }[] {
  const cut: { outcomes: string[]; items: string[] }[] = [];
  for (let rest: Batch | undefined = batch; rest; ) {
    const [group, next]: [Batch, Batch | undefined] = firstGroup(rest, chunks);
    cut.push({ outcomes: group.outcomes, items: [...group.deletes, ...group.writes.map((item) => item.id)] });
    rest = next;
  }
  return cut;
}

describe('PGlite write groups', () => {
  test('whole records up to the chunk budget, in the order of the batch, the result rows with the first group', () => {
    const batch = { outcomes: ['skipped'], deletes: ['d1', 'd2'], writes: [write('a', 5), write('b', 10), write('c', 8), write('d', 3), write('e', 30), write('f', 1)] };
    assert.deepEqual(groups(batch, 24), [
      // 2 deletions + 5 + 10 = 17; c's 8 would make 25.
      { outcomes: ['skipped'], items: ['d1', 'd2', 'a', 'b'] },
      { outcomes: [], items: ['c', 'd'] },
      // A record of more chunks than the budget is a group of its own.
      { outcomes: [], items: ['e'] },
      { outcomes: [], items: ['f'] },
    ]);
  });

  test('a budget of 0 writes one deletion or record per transaction, deletions first', () => {
    const batch = { outcomes: [], deletes: ['d1', 'd2'], writes: [write('a', 2), write('b', 1)] };
    assert.deepEqual(
      groups(batch, 0).map((group) => group.items),
      [['d1'], ['d2'], ['a'], ['b']],
    );
  });

  test('a batch of only result rows is one group', () => {
    assert.deepEqual(groups({ outcomes: ['failed', 'skipped'], deletes: [], writes: [] }, 24), [{ outcomes: ['failed', 'skipped'], items: [] }]);
  });

  test('the budget is a record while a question came in the last second', () => {
    const now = 10_000;
    assert.equal(pgliteGroupChunks({ lastQuestion: () => -Infinity }, now), 24);
    assert.equal(pgliteGroupChunks({ lastQuestion: () => now - 999 }, now), 0);
    assert.equal(pgliteGroupChunks({ lastQuestion: () => now - 1000 }, now), 24);
    assert.equal(pgliteGroupChunks({}, now), 24, 'an engine that does not tell');
  });
});
