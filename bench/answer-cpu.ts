/**
 * What turning retrieved chunks into an answer costs the API process: on a database kept by
 * `bench:query` (BENCH_REUSE=<its DATA_DIR>), retrieves the chunks of BENCH_QUESTIONS (300)
 * help-centre questions as the query path does (hybrid, 15 chunks, builtin-fast), then times what
 * follows retrieval, on the same thread as a question: grounding, the sources' snippets and the
 * extractive answer. BENCH_PASSES (25) passes over the questions; the machine's other work only adds
 * time, so the fastest pass and the median are printed, in milliseconds per answer, with a hash of
 * the answers (equal between two revisions: the change left every answer as it was).
 *
 *   BENCH_REUSE=/tmp/lore-bench-XXXXXX npm run bench:answer-cpu
 */
import { createHash } from 'node:crypto';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { openDb } from '../src/core/db/open.ts';
import { BuiltinFastEmbeddingProvider } from '../src/core/providers/embeddings/builtin-fast.ts';
import { ExtractiveAnswerGenerator } from '../src/core/providers/generation/extractive.ts';
import { DEFAULT_MIN_SCORE, groundingOf, publicSource } from '../src/features/query/grounding.ts';
import { retrieve, type RetrievedChunk } from '../src/features/retrieval/retrieve.service.ts';
import { percentile, round } from './corpus.ts';
import { helpQuestions } from './help-center.ts';
import { keptDatabase } from './kept-database.ts';

const questionCount = Number(process.env.BENCH_QUESTIONS ?? 300);
const passes = Number(process.env.BENCH_PASSES ?? 25);
const kept = keptDatabase();

const db = await openDb({ dataDir: kept.env.DATA_DIR, databaseUrl: kept.env.DATABASE_URL, databasePoolSize: 2, ingestionLeaseSeconds: 60 });
const embedder = new BuiltinFastEmbeddingProvider({ modelsDir: join(kept.env.DATA_DIR, 'models'), threads: 1 });
const asked: { question: string; chunks: RetrievedChunk[] }[] = [];
for (const question of helpQuestions(questionCount, kept.built.articles, 42)) {
  // What answer-query.ts asks for: DEFAULT_TOP_K (5) sources of 3 chunks.
  const input = { workspaceId: kept.built.workspaceId, knowledgeBaseIds: [kept.built.knowledgeBaseId], query: question, topK: 15, mode: 'hybrid' as const };
  asked.push({ question, chunks: await retrieve(db, embedder, input) });
}
await embedder.close();
await db.close();

const generator = new ExtractiveAnswerGenerator();
const grounded = (chunks: RetrievedChunk[]) => groundingOf(chunks, { topK: 5, minScore: DEFAULT_MIN_SCORE, relevantCosine: embedder.relevantCosine });
async function answer({ question, chunks }: (typeof asked)[number]): Promise<string> {
  const grounding = grounded(chunks);
  const snippets = grounding.sources.map(publicSource);
  let text = '';
  const request = { question, standaloneQuestion: question, history: [], sources: grounding.sources, instructions: '', fallbackMessage: '' };
  for await (const delta of generator.generate(request)) text += delta;
  return JSON.stringify([text, snippets]);
}

const answers: string[] = [];
for (const item of asked) answers.push(await answer(item));
const loadAverage = loadavg()[0]!;
const perAnswer: number[] = [];
for (let pass = 0; pass < passes; pass += 1) {
  const started = performance.now();
  for (const item of asked) await answer(item);
  perAnswer.push((performance.now() - started) / asked.length);
}
console.log(
  JSON.stringify({
    questions: asked.length,
    sourcesPerAnswer: round(asked.reduce((sum, item) => sum + grounded(item.chunks).sources.length, 0) / asked.length, 2),
    fastestMsPerAnswer: round(Math.min(...perAnswer), 3),
    medianMsPerAnswer: round(percentile(perAnswer, 0.5), 3),
    answersHash: createHash('sha256').update(answers.join('\n')).digest('hex').slice(0, 16),
    loadAverage: [round(loadAverage), round(loadavg()[0]!)],
  }),
);
