/**
 * Embedder benchmark: throughput on ~660-character chunks and on short sentences, the latency of
 * one search query, peak memory and model load time, printed as one JSON line.
 *
 *   npm run bench:embed
 *   EMBEDDINGS_THREADS=1 EMBEDDINGS_BATCH_SIZE=8 BENCH_CHUNKS=100 npm run bench:embed
 *
 * Uses the provider the environment configures (EMBEDDINGS_PROVIDER, default builtin).
 */
import { loadavg } from 'node:os';
import { loadConfig } from '../src/core/config.ts';
import { BuiltinEmbeddingProvider } from '../src/core/providers/embeddings/builtin.ts';
import { createEmbeddingProvider } from '../src/core/providers/embeddings/create.ts';
import { percentile, questions, round, texts } from './corpus.ts';

const chunkCount = Number(process.env.BENCH_CHUNKS ?? 240);
const sentenceCount = Number(process.env.BENCH_SENTENCES ?? 600);
const queryCount = Number(process.env.BENCH_QUERIES ?? 60);

const config = loadConfig();
const embedder = createEmbeddingProvider(config);
const loadStarted = performance.now();
const loadMs = embedder instanceof BuiltinEmbeddingProvider ? await embedder.warmUp() : undefined;
const warmUpMs = performance.now() - loadStarted;
// Each thread's first batches of a new shape are slower; they are not what ingestion sees.
await embedder.embed([...texts(config.embeddingsThreads * config.embeddingsBatchSize, 660, 7), ...questions(32, 8)]);

/** CPU seconds of the whole process, every thread included. */
function cpuSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

const chunks = texts(chunkCount, 660, 1);
let started = performance.now();
const cpuStarted = cpuSeconds();
await embedder.embed(chunks);
const chunkSeconds = (performance.now() - started) / 1000;
const chunkCpuSeconds = cpuSeconds() - cpuStarted;

const shortTexts = questions(sentenceCount, 2).map((question, index) => `${question} (${index})`);
started = performance.now();
await embedder.embed(shortTexts);
const sentenceSeconds = (performance.now() - started) / 1000;

const latencies: number[] = [];
for (const question of questions(queryCount, 3).map((text, index) => `${text} #${index}`)) {
  started = performance.now();
  await embedder.embed([question]);
  latencies.push(performance.now() - started);
}
await embedder.close();

console.log(
  JSON.stringify({
    provider: embedder.name,
    model: embedder.model,
    threads: config.embeddingsThreads,
    batchSize: config.embeddingsBatchSize,
    chunks: chunkCount,
    chunkChars: round(chunks.reduce((sum, text) => sum + text.length, 0) / chunkCount, 0),
    chunksPerSecond: round(chunkCount / chunkSeconds),
    charsPerSecond: round(chunks.reduce((sum, text) => sum + text.length, 0) / chunkSeconds, 0),
    // Throughput per CPU-second: what each core contributes, less sensitive to other processes.
    chunksPerCpuSecond: round(chunkCount / chunkCpuSeconds),
    loadAverage: round(loadavg()[0]!),
    sentences: sentenceCount,
    sentencesPerSecond: round(sentenceCount / sentenceSeconds),
    queryLatencyMs: { p50: round(percentile(latencies, 0.5)), p95: round(percentile(latencies, 0.95)) },
    modelLoadMs: loadMs === undefined ? null : round(loadMs, 0),
    warmUpMs: round(warmUpMs, 0),
    peakRssMb: round(process.resourceUsage().maxRSS / 1024, 0),
  }),
);
