/**
 * PGlite is one connection: a statement waits for the transaction in progress to end. During a bulk
 * ingestion each record is a transaction of 20-40 ms, begun again 0.2 ms after the last one commits,
 * while a query's next statement comes 1-5 ms after its previous one (a round trip to the main
 * thread and some JavaScript there): in first-come order every statement of a query waited for a
 * record, and query p50 went from 33-42 ms idle to 105-146 ms, p99 to 2.8-4 times idle
 * (bench/healthz-during-ingest.ts). The query path runs no transaction, so transactions give way:
 * one begins only once no statement outside a transaction has run for GRACE_MS, or after MAX_WAIT_MS.
 */

/**
 * Longer than the gap between two statements of one query. 10 ms kept query p99 during an
 * ingestion within 1.04-1.24 times idle; 5 ms let a record in between more often (1.45-1.65).
 */
const GRACE_MS = 10;

/**
 * A transaction is not held back longer than this, so that a steady stream of queries slows a job
 * rather than stopping it: at 50 ms a back-to-back query client left the job 10-11 records/s
 * (24-30 without the gate), at 100 ms 7; at 30 ms query p99 rose to 2.1 times idle.
 */
const MAX_WAIT_MS = 50;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Tracks the statements outside transactions and tells a transaction when it may begin. */
export class TransactionGate {
  private running = 0;
  private lastEnded = -Infinity;

  constructor(private readonly options: { graceMs: number; maxWaitMs: number } = { graceMs: GRACE_MS, maxWaitMs: MAX_WAIT_MS }) {}

  /** Runs a statement outside any transaction, counted while it waits and runs. */
  async statement<T>(run: () => Promise<T>): Promise<T> {
    this.running += 1;
    try {
      return await run();
    } finally {
      this.running -= 1;
      this.lastEnded = performance.now();
    }
  }

  /** Resolves when a transaction may begin. */
  async turn(): Promise<void> {
    const requested = performance.now();
    for (;;) {
      const now = performance.now();
      const quiet = now - this.lastEnded;
      const waited = now - requested;
      if ((this.running === 0 && quiet >= this.options.graceMs) || waited >= this.options.maxWaitMs) return;
      await sleep(Math.max(1, Math.min(this.options.graceMs - quiet, this.options.maxWaitMs - waited)));
    }
  }
}
