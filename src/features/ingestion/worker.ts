import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Db } from '../../core/db/db.ts';
import { Poller } from '../../core/poller.ts';
import { AppError } from '../../core/errors.ts';
import { DatabaseUnavailableError } from '../../core/db/unavailable.ts';
import { vacuumWhereDue } from '../../core/db/embedded-vacuum.ts';
import type { EmbeddingProvider } from '../../core/providers/embeddings/provider.ts';
import type { ExtractionBounds } from './adapters/files/bounds.ts';
import { DocumentExtractor } from './adapters/files/extractor.ts';
import { UnrecoverableJobError } from './job-errors.ts';
import { processJob } from './pipeline/process-job.ts';
import { claimJob, completeJob, failJob, releaseJob, renewLease, type ClaimedJob } from './queue.ts';

/**
 * How often an idle worker on PGlite checks whether deletions made outside jobs (an entry, a
 * knowledge base) left tables due for a vacuum: one statistics read a minute is nothing.
 */
const IDLE_TIDY_MS = 60_000;

export type WorkerOptions = {
  leaseSeconds: number;
  pollMs: number;
  maxAttempts: number;
  /** The bounds of extracting one uploaded document. */
  extraction: ExtractionBounds;
};

/**
 * One ingestion worker: claims a job, runs it while a heartbeat renews its lease, and polls for
 * the next. Runs inside an API process (INGESTION_WORKERS) or in `lore worker` processes; any
 * number of them share one PostgreSQL database.
 */
export class IngestionWorker {
  readonly id = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private running = false;
  private loop: Promise<void> | undefined;
  private readonly poller: Poller;
  private tidiedAt = 0;
  /** Its own extraction thread: documents of one job are extracted one at a time, off this thread. */
  private readonly extractor: DocumentExtractor;

  constructor(
    private readonly deps: { db: Db; embedder: EmbeddingProvider; log: Logger },
    private readonly options: WorkerOptions,
  ) {
    this.extractor = new DocumentExtractor(options.extraction);
    this.poller = new Poller({
      pollMs: options.pollMs,
      log: deps.log,
      lostMessage: 'ingestion worker could not claim a job; retrying',
      backMessage: 'ingestion worker reaches the database again',
    });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Looks for a job now instead of at the next poll (after a submit in this process). */
  nudge(): void {
    this.poller.wake();
  }

  /** Stops after the current batch; a job in progress is released for another worker to continue. */
  async stop(): Promise<void> {
    this.running = false;
    this.nudge();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (this.running) {
      const job = await this.poller.claim(() => claimJob(this.deps.db, this.id, this.options.leaseSeconds));
      if (job) await this.work(job);
      else {
        if (performance.now() - this.tidiedAt > IDLE_TIDY_MS) await this.tidyUp();
        await this.poller.idle();
      }
    }
    await this.extractor.close();
  }

  /**
   * PGlite runs without autovacuum: after a job, and now and then when idle, the bulk tables are
   * vacuumed or analyzed where PostgreSQL's autovacuum would (embedded-vacuum.ts). PostgreSQL's
   * autovacuum does this by itself.
   */
  private async tidyUp(): Promise<void> {
    if (this.deps.db.engine !== 'pglite') return;
    this.tidiedAt = performance.now();
    try {
      const done = await vacuumWhereDue(this.deps.db);
      if (done.vacuumed.length + done.analyzed.length > 0) this.deps.log.info({ ...done, ms: Math.round(performance.now() - this.tidiedAt) }, 'tables vacuumed');
    } catch (error) {
      this.deps.log.warn({ err: error }, 'VACUUM failed');
    }
  }

  private async work(job: ClaimedJob): Promise<void> {
    const { db, log } = this.deps;
    const jobLog = log.child({ jobId: job.id, workspaceId: job.workspaceId, attempt: job.attempts });
    // Only attempts that made no progress count: a worker killed after writing records (a
    // restart, a deploy) is not the job's fault, while a job that crashes its worker every time
    // still ends after the limit.
    if (job.attemptsWithoutProgress > this.options.maxAttempts) {
      await failJob(db, job, `Gave up after ${this.options.maxAttempts} attempts without progress; see the worker logs.`);
      return;
    }
    let owned = true;
    // The heartbeat renews the lease at a third of its length, so two missed beats still keep it.
    const heartbeat = setInterval(() => {
      renewLease(db, job, this.options.leaseSeconds)
        .then((renewed) => {
          if (!renewed) owned = false;
        })
        .catch((error: unknown) => jobLog.warn({ err: error }, 'lease renewal failed'));
    }, (this.options.leaseSeconds * 1000) / 3);
    const started = performance.now();
    try {
      jobLog.info('ingestion job started');
      // Renewing at every batch boundary is also how a cancellation is noticed within one batch.
      const shouldContinue = async () => {
        if (owned && this.running) owned = await renewLease(db, job, this.options.leaseSeconds);
        return owned && this.running;
      };
      const ending = await processJob({ ...this.deps, log: jobLog, extractor: this.extractor }, job, shouldContinue);
      if (ending === 'done') {
        await completeJob(db, job);
        jobLog.info({ ms: Math.round(performance.now() - started) }, 'ingestion job finished');
        await this.tidyUp();
      } else if (!this.running) {
        await releaseJob(db, job);
        jobLog.info('ingestion job released at shutdown');
      } else {
        jobLog.info('ingestion job stopped: cancelled or taken over');
      }
    } catch (error) {
      const unrecoverable = error instanceof UnrecoverableJobError || (error instanceof AppError && error.status >= 500);
      if (error instanceof DatabaseUnavailableError) {
        // Its lease expires while the database is away; once it is back, this worker or another
        // claims the job again and resumes it from its result rows.
        jobLog.warn({ err: error }, 'ingestion job interrupted: the database is unreachable; it resumes when the database is back');
      } else if (unrecoverable || job.attemptsWithoutProgress >= this.options.maxAttempts) {
        jobLog.error({ err: error }, 'ingestion job failed');
        await failJob(db, job, error instanceof Error ? error.message : String(error)).catch(() => undefined);
      } else {
        // Another transient error: leave the lease to expire, and the job is claimed again, by
        // this worker or another, and resumes from its results.
        jobLog.warn({ err: error }, 'ingestion job interrupted; it will be retried');
      }
    } finally {
      clearInterval(heartbeat);
    }
  }
}
