/**
 * Long fuzz run: FUZZ_REQUESTS (20000) hostile requests generated from the server's /openapi.json
 * (test/fuzz/), against lore started in-process on a database of its own (embedded PGlite, or a
 * fresh database on the PostgreSQL server DATABASE_URL names), with fake embeddings. Unlike
 * test/fuzz.test.ts it does not stop at the first failure: it counts them, and keeps one example
 * of each of the first FUZZ_EXAMPLES (10) failure classes. FUZZ_SEED (random by default) replays
 * a run. Prints one JSON line:
 *
 *   {"requests", "status5xx", "shapeViolations", "seed", "durationMs", "engine", "examples": [...]}
 *
 * `shapeViolations` counts error answers out of the spec's shape, requests that got no answer
 * (reset, timeout), and invalid requests that changed state (a 2xx); each example says which.
 *
 *   npm run bench:fuzz
 *   FUZZ_REQUESTS=100000 FUZZ_SEED=42 DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:fuzz
 */
import fc from 'fast-check';
import { startFakeOpenAi } from '../test/fake-openai.ts';
import { attemptClasses, describeAttempt, startCampaign } from '../test/fuzz/campaign.ts';
import { createFuzzFixture, fuzzServerEnv } from '../test/fuzz/fixture.ts';
import { ADMIN_KEY, TestServer } from '../test/harness.ts';
import { benchDatabase, benchEnv, startBenchServer } from './lore-server.ts';

const requests = Number(process.env.FUZZ_REQUESTS ?? 20_000);
const seed = process.env.FUZZ_SEED === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.FUZZ_SEED);
const maxExamples = Number(process.env.FUZZ_EXAMPLES ?? 10);

const fake = await startFakeOpenAi();
const database = await benchDatabase(process.env.DATABASE_URL);
// The fixture builder speaks to the server as the tests do (harness admin key), so the bench
// server takes that key instead of the other benchmarks' one.
const { server: running } = await startBenchServer(benchEnv(database, { ...fuzzServerEnv(fake), ADMIN_API_KEY: ADMIN_KEY, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' }));
const server = new TestServer(running, database);

try {
  const { fixture } = await createFuzzFixture(server);
  const campaign = await startCampaign(server, fixture);
  const counts = { status5xx: 0, shapeViolations: 0 };
  const examples: { class: string; detail: string }[] = [];
  const seen = new Set<string>();
  const started = performance.now();
  await fc.check(
    fc.asyncProperty(campaign.requests, async (request) => {
      const attempt = await campaign.attempt(request);
      for (const problem of attempt.problems) {
        if (problem.kind === 'status5xx') counts.status5xx += 1;
        else counts.shapeViolations += 1;
      }
      for (const failureClass of attemptClasses(attempt)) {
        if (seen.has(failureClass)) continue;
        seen.add(failureClass);
        if (examples.length < maxExamples) examples.push({ class: failureClass, detail: describeAttempt(attempt) });
      }
      // Never fails: a long run counts every failure instead of stopping at the first.
      return true;
    }),
    { seed, numRuns: requests },
  );
  const durationMs = Math.round(performance.now() - started);
  console.log(JSON.stringify({ requests, ...counts, seed, durationMs, engine: running.context.db.engine, examples }));
} finally {
  await server.close();
  await fake.close();
}
