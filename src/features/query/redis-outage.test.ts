/**
 * The query budgets in a Redis of the test's own: the keys lore writes, and what happens when that
 * Redis stops answering (SIGSTOP keeps its connections open and answers nothing, as a hung or
 * overloaded server does): queries are answered within a bound, without limits, the outage is
 * logged once and shown by /readyz, and the limits apply again once Redis answers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertExactError } from '../../../test/assert-error.ts';
import { captureLog } from '../../../test/captured-log.ts';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../test/fake-openai.ts';
import { engine, startTestServer, type Answer, type TestServer } from '../../../test/harness.ts';
import { PrivateRedis } from '../../../test/private-redis.ts';
import { askAboutReturns, createQueryExperience } from '../../../test/query-experience.ts';

const IP_PER_MINUTE = 3;
/**
 * What a query may take while Redis is stopped: Redis's bound (250 ms, once) and the answer
 * itself; the first took 588 ms and the others 16-233 ms at a load average of 20 on 2 cores.
 */
const ANSWER_WITHIN_MS = 2_000;

let fake: FakeOpenAi;
let redis: PrivateRedis;
let server: TestServer;
const log = captureLog();

before(async () => {
  fake = await startFakeOpenAi();
  redis = await PrivateRedis.start();
  server = await startTestServer({ ...fakeEmbeddingsEnv(fake), REDIS_URL: redis.url, RATE_LIMIT_IP_PER_MINUTE: String(IP_PER_MINUTE) }, log.logger);
});
after(async () => {
  await server?.close();
  await redis?.close();
  await fake?.close();
});

/** The log lines about Redis so far. */
function redisLines(): Array<Record<string, unknown>> {
  return log.lines.filter((line) => /redis/i.test(String(line.msg)));
}

/** An anonymous question, failed after 10 s rather than waiting for ever; with how long it took. */
async function timedQuestion(experienceId: string): Promise<{ answer: Answer; ms: number }> {
  const started = performance.now();
  const response = await fetch(`${server.url}/api/v2/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text: 'How long do I have to return an item?', experienceId }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  return { answer: { status: response.status, headers: response.headers, body: JSON.parse(text), text }, ms: Math.round(performance.now() - started) };
}

async function readyz(): Promise<Answer> {
  return server.request('GET', '/readyz');
}

/** The IP budget holds: IP_PER_MINUTE answers, then the spec's 429. */
async function assertIpBudgetHolds(experienceId: string): Promise<void> {
  for (let index = 0; index < IP_PER_MINUTE; index += 1) {
    const answer = await askAboutReturns(server, experienceId);
    assert.equal(answer.status, 200, answer.text);
  }
  const limited = await askAboutReturns(server, experienceId);
  assert.equal(
    assertExactError(limited, 429, '/v2/query'),
    `Too many queries from this address (${IP_PER_MINUTE} per minute); retry in ${limited.headers.get('retry-after')} s.`,
  );
}

describe(`query budgets in Redis (${engine})`, () => {
  test('the keys are named after the budget they count, with their counts and a one-minute expiry', async () => {
    const { workspaceId, experienceId } = await createQueryExperience(server);
    const opened = await askAboutReturns(server, experienceId);
    assert.equal(opened.status, 200, opened.text);
    const followUp = await askAboutReturns(server, experienceId, { sessionId: opened.body.sessionId });
    assert.equal(followUp.status, 200, followUp.text);
    const widget = await server.request('GET', `/api/v2/experiences/${experienceId}/widget`);
    assert.equal(widget.status, 200, widget.text);

    const expected = {
      [`lore-rate-limit:ip:${experienceId}:127.0.0.1`]: '2',
      [`lore-rate-limit:session:${opened.body.sessionId}`]: '1',
      [`lore-rate-limit:widget-config:ip:${experienceId}:127.0.0.1`]: '1',
      [`lore-rate-limit:widget-config:workspace:${workspaceId}`]: '1',
      [`lore-rate-limit:workspace:${workspaceId}`]: '2',
    };
    const keys = (await redis.keys('lore-rate-limit:*')).filter((key) => key.includes(experienceId) || key.includes(workspaceId) || key.includes(opened.body.sessionId));
    assert.deepEqual(keys, Object.keys(expected).sort());
    for (const [key, count] of Object.entries(expected)) {
      assert.equal(await redis.client.get(key), count, key);
      const ttl = await redis.client.pttl(key);
      assert.ok(ttl > 0 && ttl <= 60_000, `${key}: ${ttl}`);
    }
  });

  test('a stopped Redis: answered within the bound, logged once, shown by /readyz; limits again after it continues', async () => {
    const before = await readyz();
    assert.equal(before.status, 200, before.text);
    assert.deepEqual(before.body, { status: 'ready', engine, details: { redis: { state: 'ok' } } });
    const { experienceId } = await createQueryExperience(server);
    const linesBefore = redisLines().length;

    redis.stop();
    const stoppedAt = Date.now();
    try {
      // Beyond the IP budget: without Redis, nothing is counted and every question is answered.
      const timings: number[] = [];
      for (let index = 0; index < IP_PER_MINUTE + 3; index += 1) {
        const { answer, ms } = await timedQuestion(experienceId);
        assert.equal(answer.status, 200, answer.text);
        timings.push(ms);
      }
      assert.ok(Math.max(...timings) < ANSWER_WITHIN_MS, `answered in ${timings.join(', ')} ms`);
      // The client keeps reconnecting meanwhile (every 0.05 to 2 s): still one line for the outage.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const outage = redisLines().slice(linesBefore);
      assert.equal(outage.length, 1, JSON.stringify(outage));
      assert.equal(outage[0]!.level, 40);
      assert.match(String(outage[0]!.msg), /^Redis for rate limits is not answering; queries are answered without rate limits until it answers again$/);

      const down = await readyz();
      assert.equal(down.status, 200, down.text);
      const since = Date.parse(down.body.details.redis.since);
      assert.ok(since >= stoppedAt - 1_000 && since <= Date.now(), down.body.details.redis.since);
      assert.deepEqual(down.body, { status: 'ready', engine, details: { redis: { state: 'down', since: down.body.details.redis.since } } });
    } finally {
      redis.resume();
    }

    const deadline = Date.now() + 10_000;
    let state = 'down';
    while (state !== 'ok' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      state = (await readyz()).body.details?.redis?.state;
    }
    assert.equal(state, 'ok');
    const lines = redisLines().slice(linesBefore);
    assert.equal(lines.length, 2, JSON.stringify(lines));
    assert.equal(lines[1]!.level, 30);
    assert.match(String(lines[1]!.msg), /^Redis for rate limits answers again after \d+(\.\d)? s; queries are rate limited again$/);

    // A fresh budget (another experience counts apart) is counted in Redis again.
    await assertIpBudgetHolds((await createQueryExperience(server)).experienceId);
  });
});
