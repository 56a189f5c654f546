/**
 * Ingestion benchmark: generates N records of realistic Markdown, ingests them through the HTTP
 * API on the engine DATABASE_URL chooses (embedded PGlite without it), and prints one JSON line:
 * records/s, chunks/s, submit-to-completed latency per job, peak RSS, the cost split by stage, the
 * share of the machine's CPU busy while the jobs ran (`machineCpuBusy`, every process: the
 * database's too), and the time the embedder alone needs for the same chunks (measured on a sample,
 * see BENCH_BASELINE).
 *
 *   npm run bench:ingest
 *   BENCH_RECORDS=2000 npm run bench:ingest
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres BENCH_WORKER_PROCESSES=2 EMBEDDINGS_THREADS=1 npm run bench:ingest
 *
 * BENCH_WORKER_PROCESSES>0 (PostgreSQL only) runs that many `lore worker` processes and no worker
 * in the API process. BENCH_FAKE_EMBEDDINGS=1 embeds through a local OpenAI-compatible server that
 * answers hashed bag-of-words vectors at once: it measures the pipeline without the model.
 * BENCH_MODE=files measures the files adapter on generated PDFs and DOCX files instead (see
 * ingest-files.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/core/config.ts';
import { BuiltinEmbeddingProvider } from '../src/core/providers/embeddings/builtin.ts';
import { createEmbeddingProvider } from '../src/core/providers/embeddings/create.ts';
import { chunkContent } from '../src/features/ingestion/pipeline/chunking/chunk-content.ts';
import { embeddingText } from '../src/features/ingestion/pipeline/embedding-text.ts';
import { fakeEmbeddingsEnv, startFakeOpenAi } from '../test/fake-openai.ts';
import { markdownDocument, percentile, round } from './corpus.ts';
import { benchFiles } from './ingest-files.ts';
import { startMachineCpuMeter } from './process-cpu.ts';
import { benchDatabase, benchEnv, benchTenant, call, ingestJobs, startBenchServer } from './lore-server.ts';

const recordCount = Number(process.env.BENCH_RECORDS ?? 10_000);
const recordSize = Number(process.env.BENCH_RECORD_SIZE ?? 2000);
const recordsPerJob = Number(process.env.BENCH_RECORDS_PER_JOB ?? 500);
const workerProcesses = Number(process.env.BENCH_WORKER_PROCESSES ?? 0);
const baselineSample = Number(process.env.BENCH_BASELINE ?? 600);
const serverUrl = process.env.DATABASE_URL;

const fake = process.env.BENCH_FAKE_EMBEDDINGS === '1' ? await startFakeOpenAi() : undefined;
if (fake) Object.assign(process.env, fakeEmbeddingsEnv(fake, 384));
if (process.env.BENCH_MODE === 'files') {
  await benchFiles();
  await fake?.close();
  process.exit(0);
}

const records = Array.from({ length: recordCount }, (_, index) => {
  const { title, content } = markdownDocument(index + 1, recordSize);
  return { id: `bench-${index}`, title, content, contentType: 'markdown' as const, tags: ['bench'] };
});

/** The embedder alone on a sample of the same chunk texts the pipeline embeds. */
async function embedderBaseline(): Promise<{ chunks: number; chunksPerSecond: number }> {
  const all = records.flatMap((record) =>
    chunkContent(record.content, record.contentType, { chunkSize: 800, chunkOverlap: 100 }).map((chunk) => embeddingText(record, chunk)),
  );
  const embedder = createEmbeddingProvider(loadConfig({ ...process.env, DATABASE_URL: undefined }));
  if (embedder instanceof BuiltinEmbeddingProvider) await embedder.warmUp();
  const sample = all.slice(0, Math.min(baselineSample, all.length));
  await embedder.embed(sample.slice(0, 32));
  const started = performance.now();
  await embedder.embed(sample.slice(32));
  const seconds = (performance.now() - started) / 1000;
  await embedder.close();
  return { chunks: all.length, chunksPerSecond: (sample.length - 32) / seconds };
}

async function peakRssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return round(kb / 1024, 0);
}

const baseline = await embedderBaseline();
const database = await benchDatabase(serverUrl);
const env = benchEnv(database, { INGESTION_WORKERS: workerProcesses > 0 ? '0' : (process.env.INGESTION_WORKERS ?? '1') });
const { config, server } = await startBenchServer(env);
const workers: ChildProcess[] = [];
for (let index = 0; index < workerProcesses; index += 1) {
  const bin = fileURLToPath(new URL('../bin/lore.js', import.meta.url));
  workers.push(spawn(process.execPath, [bin, 'worker'], { env, stdio: ['ignore', 'ignore', 'inherit'] }));
}
try {
  const base = server.url;
  const { token } = await benchTenant(base, 'bench');
  const knowledgeBase = await call(base, 'POST', '/api/v2/knowledge-bases', token, { name: 'bench' });
  // Model loading (or, for builtin-fast, building its table in DATA_DIR) is not ingestion.
  if (workerProcesses === 0) {
    const { embedder } = server.context;
    await (embedder instanceof BuiltinEmbeddingProvider ? embedder.warmUp() : embedder.embed(['warm up']));
  }

  // The API process's event loop while jobs run: on the embedded engine the database shares it.
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const machine = await startMachineCpuMeter();
  const started = performance.now();
  const jobs = await ingestJobs(base, token, knowledgeBase.id, records, recordsPerJob);
  const seconds = (performance.now() - started) / 1000;
  const machineBusy = await machine.stop();
  loopDelay.disable();
  const failedJobs = jobs.filter((job) => job.status !== 'completed').length;
  const chunks = jobs.reduce((sum, job) => sum + job.result.embeddingsGenerated, 0);
  const latencies = jobs.map((job) => (Date.parse(job.completed_at) - Date.parse(job.created_at)) / 1000);
  const stages: Record<string, number> = {};
  for (const job of jobs) for (const [stage, ms] of Object.entries(job.data.timings as Record<string, number>)) stages[stage] = (stages[stage] ?? 0) + ms / 1000;
  const embedderSeconds = chunks / baseline.chunksPerSecond;
  console.log(
    JSON.stringify({
      engine: server.context.db.engine,
      embedder: `${server.context.embedder.name}/${server.context.embedder.model}`,
      embeddingThreads: config.embeddingsThreads,
      workerProcesses,
      inProcessWorkers: config.ingestionWorkers,
      records: recordCount,
      recordChars: recordSize,
      jobs: jobs.length,
      failedJobs,
      ...(failedJobs > 0 ? { jobErrors: jobs.filter((job) => job.status !== 'completed').map((job) => job.result.error ?? job.status) } : {}),
      chunks,
      seconds: round(seconds),
      recordsPerSecond: round(recordCount / seconds),
      chunksPerSecond: round(chunks / seconds),
      jobLatencySeconds: { p50: round(percentile(latencies, 0.5)), p95: round(percentile(latencies, 0.95)) },
      stageSeconds: Object.fromEntries(Object.entries(stages).map(([stage, value]) => [stage, round(value)])),
      embedderAlone: { chunksPerSecond: round(baseline.chunksPerSecond), seconds: round(embedderSeconds), sampledChunks: Math.min(baselineSample, baseline.chunks) },
      pipelineOverEmbedder: round(seconds / embedderSeconds, 2),
      // Of every core, whoever used it: 0.95 with one worker leaves no room for a second.
      machineCpuBusy: round(machineBusy, 2),
      apiEventLoopDelayMs: { p99: round(loopDelay.percentile(99) / 1e6), max: round(loopDelay.max / 1e6) },
      peakRssMb: {
        api: round(process.resourceUsage().maxRSS / 1024, 0),
        workers: await Promise.all(workers.map((worker) => peakRssMb(worker.pid!))),
      },
    }),
  );
} finally {
  for (const worker of workers) worker.kill('SIGTERM');
  await Promise.all(workers.map((worker) => new Promise((resolve) => (worker.exitCode !== null ? resolve(null) : worker.once('exit', resolve)))));
  await server.close();
  await database.drop();
  await fake?.close();
}
