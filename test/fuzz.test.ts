/**
 * Property-based fuzz over the OpenAPI document: about 2,500 hostile requests (every route and
 * method, each request breaking at least one rule) against a server on a fresh database. Every
 * answer must be below 500, every error in the spec's shape, and the fixture unchanged afterwards.
 *
 * Replay: FUZZ_SEED=<seed> FUZZ_PATH=<path> as printed on failure (the shrunk case; FUZZ_SHRINK=0
 * reports the first failure unshrunk); FUZZ_REQUESTS changes the count. The long run, which counts
 * failures instead of stopping at the first, is `npm run bench:fuzz`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { startFakeOpenAi, type FakeOpenAi } from './fake-openai.ts';
import { attemptClasses, describeAttempt, startCampaign, type Attempt, type Campaign } from './fuzz/campaign.ts';
import { createFuzzFixture, fuzzServerEnv, snapshot, type Read } from './fuzz/fixture.ts';
import { engine, startTestServer, type TestServer } from './harness.ts';

// A fixed seed keeps `npm test` deterministic; a failure prints the seed and path that replay it.
const seed = Number(process.env.FUZZ_SEED ?? 20_240_917);
const numRuns = Number(process.env.FUZZ_REQUESTS ?? 2_500);
const path = process.env.FUZZ_PATH;

describe(`fuzz: hostile requests from /openapi.json (${engine})`, () => {
  let fake: FakeOpenAi;
  let server: TestServer;
  let campaign: Campaign;
  let reads: Read[];
  let before_: Record<string, unknown>;

  before(async () => {
    fake = await startFakeOpenAi();
    server = await startTestServer(fuzzServerEnv(fake));
    const created = await createFuzzFixture(server);
    reads = created.reads;
    before_ = await snapshot(server, reads);
    campaign = await startCampaign(server, created.fixture);
  });

  after(async () => {
    await server?.close();
    await fake?.close();
  });

  test(`${numRuns} requests: no 5xx, errors in the spec's shape, always an answer`, async () => {
    let lastFailure: Attempt | undefined;
    const details = await fc.check(
      fc.asyncProperty(campaign.requests, async (request) => {
        const attempt = await campaign.attempt(request);
        if (attempt.problems.length === 0) return true;
        lastFailure = attempt;
        return false;
      }),
      // Shrinking drops the noise around a failure (a few dozen requests more); FUZZ_SHRINK=0 skips it.
      { seed, numRuns, path, endOnFailure: process.env.FUZZ_SHRINK === '0' },
    );
    if (!details.failed) return;
    const replay = `FUZZ_SEED=${details.seed} FUZZ_PATH=${details.counterexamplePath}`;
    // Without a failed attempt, the property itself threw: show that error.
    const what = lastFailure ? `class: ${attemptClasses(lastFailure).join(' | ')}\n${describeAttempt(lastFailure)}` : String(details.errorInstance);
    assert.fail(`fuzz failure after ${details.numRuns} requests (replay: ${replay})\n${what}`);
  });

  test('afterwards the service is healthy and the fixture reads back unchanged', async () => {
    const health = await server.request('GET', '/healthz');
    assert.equal(health.status, 200, health.text);
    assert.deepEqual(await snapshot(server, reads), before_);
  });
});
