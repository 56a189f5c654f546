import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TransactionGate } from './transaction-gate.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Milliseconds until `promise` settles. */
async function timeTo(promise: Promise<unknown>): Promise<number> {
  const started = performance.now();
  await promise;
  return performance.now() - started;
}

describe('transaction gate', () => {
  test('a transaction begins at once when no statement ran lately', async () => {
    const gate = new TransactionGate({ graceMs: 50, maxWaitMs: 500 });
    assert.ok((await timeTo(gate.turn())) < 25);
  });

  test('a transaction waits while a statement runs, then for the grace after it', async () => {
    const gate = new TransactionGate({ graceMs: 50, maxWaitMs: 1000 });
    let finish!: () => void;
    const statement = gate.statement(() => new Promise<void>((resolve) => (finish = resolve)));
    const turn = timeTo(gate.turn());
    await sleep(100);
    finish();
    await statement;
    const waited = await turn;
    assert.ok(waited >= 145, `waited ${waited} ms`);
    assert.ok(waited < 400, `waited ${waited} ms`);
  });

  test('a steady stream of statements holds a transaction back no longer than maxWaitMs', async () => {
    const gate = new TransactionGate({ graceMs: 50, maxWaitMs: 150 });
    let streaming = true;
    const stream = (async () => {
      while (streaming) await gate.statement(() => sleep(5));
    })();
    const waited = await timeTo(gate.turn());
    streaming = false;
    await stream;
    assert.ok(waited >= 145 && waited < 400, `waited ${waited} ms`);
  });

  test('a failed statement counts as ended', async () => {
    const gate = new TransactionGate({ graceMs: 20, maxWaitMs: 1000 });
    await assert.rejects(gate.statement(() => Promise.reject(new Error('syntax'))), /syntax/);
    assert.ok((await timeTo(gate.turn())) < 500);
  });
});
