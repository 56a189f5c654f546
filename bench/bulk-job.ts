/**
 * Ingestion jobs for the benchmarks that read one or run one beside a load: a knowledge base of
 * their own, a job of help-center articles submitted through the API, and an ingestion worker of
 * this process to run it (the bench servers start without workers, INGESTION_WORKERS=0).
 */
import type { Config } from '../src/core/config.ts';
import { createLogger } from '../src/core/logger.ts';
import { startWorkers, type RunningServer } from '../src/server.ts';
import { article } from './help-center.ts';
import { call } from './lore-server.ts';

export type BulkJob = {
  jobId: string;
  knowledgeBaseId: string;
  /** Stops the worker; a job still running is left for a later worker. */
  stop(): Promise<void>;
};

export type BulkJobOptions = {
  /** Records of the job. */
  records: number;
  /** Characters per record: 300 is one chunk each, 2,000 about five. */
  recordSize: number;
};

/** Submits a generic-json job of help-center articles into a new knowledge base, and starts a worker on it. */
export async function startBulkJob(server: RunningServer, config: Config, token: string, options: BulkJobOptions): Promise<BulkJob> {
  const knowledgeBase = await call(server.url, 'POST', '/api/v2/knowledge-bases', token, { name: `bulk job of ${options.records}` });
  const records = Array.from({ length: options.records }, (_, index) => {
    const { title, content } = article(index + 1, options.recordSize);
    return { id: `article-${index + 1}`, title, content, contentType: 'markdown' };
  });
  const submitted = await call(server.url, 'POST', '/api/v2/data-ingestion/jobs', token, {
    adapterType: 'generic-json',
    knowledgeBaseId: knowledgeBase.id,
    data: { records },
  });
  const { db, embedder } = server.context;
  const workers = startWorkers(1, config, { db, embedder, log: createLogger(config) });
  return {
    jobId: submitted.jobId,
    knowledgeBaseId: knowledgeBase.id,
    async stop() {
      await Promise.all(workers.map((worker) => worker.stop()));
    },
  };
}

/** Polls the job once a second until `until` holds; returns it as last read. */
export async function waitForJob(base: string, token: string, jobId: string, until: (job: any) => boolean): Promise<any> {
  for (;;) {
    const job = await call(base, 'GET', `/api/v2/data-ingestion/jobs/${jobId}`, token);
    if (until(job)) return job;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

export const finished = (job: { status: string }) => ['completed', 'failed', 'cancelled'].includes(job.status);
