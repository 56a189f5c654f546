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

const chunkCount = Number(process.env.BENCH_CHUNKS ?? 240);
const sentenceCount = Number(process.env.BENCH_SENTENCES ?? 600);
const queryCount = Number(process.env.BENCH_QUERIES ?? 60);

/** Sentences of the kind a support knowledge base holds; recombined, they make distinct texts. */
const sentences = [
  'To reset your password, open the sign-in page and choose "Forgot password".',
  'A reset link is sent to the email address on your account and expires after one hour.',
  'Invoices are generated on the first business day of every month and can be downloaded as PDF files.',
  'Refunds are issued to the original payment method within five to ten business days.',
  'The API accepts up to one hundred requests per minute for each client before it answers with status 429.',
  'Each workspace has its own users, knowledge bases and access tokens, and nothing is shared between workspaces.',
  'If the export takes longer than expected, check the status page for ongoing incidents.',
  'Administrators can invite new members from the team settings and assign them a role.',
  'The mobile app keeps a copy of recent documents so that they stay readable without a connection.',
  'Two-factor authentication adds a one-time code from an authenticator app to every sign-in.',
  'When the database connection pool is exhausted, new requests wait until a connection is released.',
  'Webhooks are retried with exponential backoff for up to twenty-four hours after a failed delivery.',
  'Shipping to most European countries takes three to five days, and tracking numbers are emailed at dispatch.',
  'Customers on the annual plan receive a discount of two months compared with monthly billing.',
  'The search index is updated within a few seconds after a document is created or changed.',
  'Large files are uploaded in parts, so an interrupted upload resumes where it stopped.',
  'Audit logs record who changed a setting, when it happened and the previous value.',
  'Data is encrypted at rest with AES-256 and in transit with TLS 1.2 or later.',
  'To cancel a subscription, open the billing page and select the plan you want to end.',
  'Scheduled reports are delivered by email every Monday morning in the time zone of the workspace.',
  'A knowledge base can be connected to several experiences, each with its own greeting and theme.',
  'Error messages include a request identifier that support can use to find the matching logs.',
  'Guest users can read shared documents but cannot edit them or see the rest of the workspace.',
  'The command line tool reads JSON Lines files and splits them into jobs of a few hundred records.',
  'Our support team answers chat messages on weekdays between eight in the morning and six in the evening.',
  'Passwords must be at least twelve characters long and may not repeat one of the last five passwords.',
  'Product prices include value added tax where the law of the buyer\'s country requires it.',
  'The integration with the calendar creates an event for every booked appointment and updates it when it moves.',
  'Archived projects no longer count towards the limit of the plan and can be restored at any time.',
  'Backups are taken every night and kept for thirty days in a second region.',
];

/** A small deterministic generator (mulberry32), so every run embeds the same texts. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** Paragraphs of whole sentences, cut at the last word boundary before `length` characters. */
function texts(count: number, length: number, seed: number): string[] {
  const next = random(seed);
  return Array.from({ length: count }, () => {
    let text = '';
    while (text.length < length) text += `${text ? ' ' : ''}${sentences[Math.floor(next() * sentences.length)]}`;
    return text.length > length ? text.slice(0, text.lastIndexOf(' ', length)) : text;
  });
}

/** Short questions: a sentence's first words, distinct by their sentence and length. */
function questions(count: number, seed: number): string[] {
  const next = random(seed);
  return Array.from({ length: count }, (_, index) => {
    const words = sentences[Math.floor(next() * sentences.length)]!.split(' ');
    return `${words.slice(0, 5 + (index % 7)).join(' ')}?`;
  });
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!;
}

const round = (value: number, digits = 1) => Number(value.toFixed(digits));

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
