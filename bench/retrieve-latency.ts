/**
 * The latency of `retrieve()` alone (hybrid, topK 15, as the query path asks) for every question
 * of bench:answers, on a database `npm run bench:answers -- --data-dir DIR` kept: one warm-up
 * round, then ROUNDS timed ones, one question at a time. Prints one JSON line with p50/p95 and a
 * checksum of every coverage and cosine returned, so two versions can be compared for speed and
 * for sameness.
 *
 *   node --import tsx bench/retrieve-latency.ts --data-dir /tmp/ans-fast [--rounds 2]
 */
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { retrieve } from '../src/features/retrieval/retrieve.service.ts';
import { readQuestions } from './answers/questions.ts';
import { percentile, round } from './corpus.ts';
import { benchEnv, startBenchServer } from './lore-server.ts';

const { values: options } = parseArgs({ options: { 'data-dir': { type: 'string' }, rounds: { type: 'string', default: '2' } } });
const dir = options['data-dir'];
if (!dir) throw new Error('--data-dir DIR: a database bench:answers kept.');
const state = JSON.parse(await readFile(join(dir, 'answers-bench.json'), 'utf8')) as { workspaceId: string; knowledgeBaseId: string };
const { server } = await startBenchServer(benchEnv({ env: { DATA_DIR: dir }, drop: async () => undefined }));
try {
  const { db, embedder } = server.context;
  const questions = await readQuestions('all');
  const times: number[] = [];
  let checksum = 0;
  for (let pass = 0; pass <= Number(options.rounds); pass += 1) {
    for (const question of questions) {
      const started = performance.now();
      const chunks = await retrieve(db, embedder, {
        workspaceId: state.workspaceId,
        knowledgeBaseIds: [state.knowledgeBaseId],
        query: question.question,
        topK: 15,
        mode: 'hybrid',
      });
      if (pass === 0) continue;
      times.push(performance.now() - started);
      checksum += chunks.reduce((sum, chunk) => sum + chunk.keywordCoverage + (chunk.vectorScore ?? 0), 0);
    }
  }
  console.log(
    JSON.stringify({
      queries: times.length,
      engine: db.engine,
      embedder: `${embedder.name}/${embedder.model}`,
      p50Ms: round(percentile(times, 0.5)),
      p95Ms: round(percentile(times, 0.95)),
      checksum: checksum.toFixed(6),
      loadAverage: round(loadavg()[0]!),
    }),
  );
} finally {
  await server.close();
}
