import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { WritesInFlight } from './writes-in-flight.ts';

/** A write that runs until `finish` (or `fail`) is called, recording when it starts and ends. */
function controlled(name: string, log: string[]) {
  let finish!: () => void;
  let fail!: (error: Error) => void;
  const write = () =>
    new Promise<void>((resolve, reject) => {
      log.push(`start ${name}`);
      finish = () => {
        log.push(`end ${name}`);
        resolve();
      };
      fail = reject;
    });
  return { write, finish: () => finish(), fail: (error: Error) => fail(error) };
}

/** A WritesInFlight, a log, and a controlled write per name, all recording in that log. */
function scene<const N extends string>(...names: N[]) {
  const log: string[] = [];
  const writes = new WritesInFlight();
  const controls = Object.fromEntries(names.map((name) => [name, controlled(name, log)])) as Record<N, ReturnType<typeof controlled>>;
  return { log, writes, ...controls };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('WritesInFlight', () => {
  test('runs up to its limit at once, and a batch holding a record still written waits for that write', async () => {
    const { log, writes, a, b, c } = scene('a', 'b', 'c');
    await writes.start(new Set(['r1', 'r2']), 2, a.write);
    await writes.start(new Set(['r3']), 2, b.write);
    assert.deepEqual(log, ['start a', 'start b'], 'two writes run at once');

    // c shares r2 with a: it must not start when b ends, only once a has.
    const startingC = writes.start(new Set(['r2', 'r4']), 2, c.write);
    b.finish();
    await tick();
    assert.deepEqual(log, ['start a', 'start b', 'end b']);
    a.finish();
    await startingC;
    assert.deepEqual(log, ['start a', 'start b', 'end b', 'end a', 'start c']);
    c.finish();
    await writes.settle();
    assert.deepEqual(log.at(-1), 'end c');
  });

  test('at the limit, the next write waits for the oldest', async () => {
    const { log, writes, a, b } = scene('a', 'b');
    await writes.start(new Set(['r1']), 1, a.write);
    const startingB = writes.start(new Set(['r2']), 1, b.write);
    await tick();
    assert.deepEqual(log, ['start a']);
    a.finish();
    await startingB;
    assert.deepEqual(log, ['start a', 'end a', 'start b']);
    b.finish();
    await writes.settle();
  });

  test('a failed write is thrown by the next start that reaches it, and settle waits for the others first', async () => {
    const { log, writes, a, b } = scene('a', 'b');
    await writes.start(new Set(['r1']), 2, a.write);
    await writes.start(new Set(['r2']), 2, b.write);
    a.fail(new Error('batch a failed'));
    await tick();
    // The failed write still counts: a third one waits for it, and gets its error.
    await assert.rejects(
      writes.start(new Set(['r3']), 2, () => Promise.resolve()),
      /batch a failed/,
    );
    const settling = writes.settle();
    let settled = false;
    void settling.catch(() => (settled = true));
    await tick();
    assert.equal(settled, false, 'settle waits for b, still running');
    b.finish();
    await assert.rejects(settling, /batch a failed/);
    assert.deepEqual(log, ['start a', 'start b', 'end b']);
  });
});
