/**
 * Query budgets over HTTP: anonymous callers spend a per-IP and a per-session budget (defaults
 * from the environment, overridable per experience) and every caller spends its workspace's; a
 * spent budget is a 429 in the spec's error shape with Retry-After. With REDIS_URL, several API
 * servers spend one budget; with Redis unreachable, queries are still answered.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildApp } from '../../app.ts';
import type { App } from '../../core/http/app-types.ts';
import { assertExactError } from '../../../test/assert-error.ts';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../test/fake-openai.ts';
import { engine, startTestServer, testEnv, type Answer, type RequestOptions, type TestServer } from '../../../test/harness.ts';
import { freePort, LoreServer } from '../../../test/lore-process.ts';
import { askAboutReturns, createQueryExperience } from '../../../test/query-experience.ts';

const IP_PER_MINUTE = 3;
const SESSION_PER_MINUTE = 2;
const WORKSPACE_PER_MINUTE = 6;
const REDIS_URL = 'redis://127.0.0.1:6379';

let fake: FakeOpenAi;
/** Budgets counted in memory (no REDIS_URL). */
let memory: TestServer;
/** Budgets counted in the local Redis. */
let redis: TestServer;
/** REDIS_URL names a port nobody listens on. */
let redisDown: TestServer;

function limitsEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...fakeEmbeddingsEnv(fake),
    RATE_LIMIT_IP_PER_MINUTE: String(IP_PER_MINUTE),
    RATE_LIMIT_SESSION_PER_MINUTE: String(SESSION_PER_MINUTE),
    RATE_LIMIT_WORKSPACE_PER_MINUTE: String(WORKSPACE_PER_MINUTE),
    ...extra,
  };
}

before(async () => {
  fake = await startFakeOpenAi();
  const closedPort = await freePort();
  // One after the other: creating embedded databases side by side on a busy machine can exceed
  // Fastify's plugin start timeout.
  memory = await startTestServer(limitsEnv());
  redis = await startTestServer(limitsEnv({ REDIS_URL }));
  redisDown = await startTestServer(limitsEnv({ REDIS_URL: `redis://127.0.0.1:${closedPort}` }));
});
after(async () => {
  await Promise.all([memory?.close(), redis?.close(), redisDown?.close()]);
  await fake?.close();
});

function assertAnswered(answer: Answer): void {
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.body.sources[0]?.title, 'Returning an item');
}

/** A 429 with the spec's body, a whole-second Retry-After within the minute, and the message naming both. */
function assertLimited(answer: Answer, what: string, perMinute: number): void {
  assert.equal(answer.status, 429, answer.text);
  const retryAfter = answer.headers.get('retry-after') ?? '';
  assert.match(retryAfter, /^\d+$/);
  assert.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= 60, retryAfter);
  assert.equal(assertExactError(answer, 429, '/v2/query'), `Too many queries ${what} (${perMinute} per minute); retry in ${retryAfter} s.`);
}

describe('anonymous budgets', () => {
  test('one client IP gets RATE_LIMIT_IP_PER_MINUTE queries, then 429s its page can read, which spend no workspace budget', async () => {
    const { workspaceId, experienceId } = await createQueryExperience(memory);
    const origin = 'https://shop.example';
    for (let index = 0; index < IP_PER_MINUTE; index += 1) assertAnswered(await askAboutReturns(memory, experienceId, { origin }));
    const limited = await askAboutReturns(memory, experienceId, { origin });
    assertLimited(limited, 'from this address', IP_PER_MINUTE);
    assert.equal(limited.headers.get('access-control-allow-origin'), origin);
    assert.match(limited.headers.get('access-control-expose-headers') ?? '', /retry-after/i);
    for (let index = 0; index < WORKSPACE_PER_MINUTE; index += 1) {
      assertLimited(await askAboutReturns(memory, experienceId), 'from this address', IP_PER_MINUTE);
    }
    // Only the answered queries spent the workspace's budget: a token caller, which the address
    // budget does not concern, gets exactly the rest of it.
    const token = await memory.token(workspaceId, ['query:execute']);
    for (let index = IP_PER_MINUTE; index < WORKSPACE_PER_MINUTE; index += 1) assertAnswered(await askAboutReturns(memory, experienceId, { token }));
    assertLimited(await askAboutReturns(memory, experienceId, { token }), 'for this workspace', WORKSPACE_PER_MINUTE);
  });

  test('an experience sets its own IP budget, counted apart from the other experiences', async () => {
    const { token, knowledgeBaseId, experienceId } = await createQueryExperience(memory, { settings: { rateLimit: { ipPerMinute: 1 } } });
    assertAnswered(await askAboutReturns(memory, experienceId));
    assertLimited(await askAboutReturns(memory, experienceId), 'from this address', 1);
    const other = await memory.request('POST', '/api/v2/experiences', { token, body: { name: 'other', knowledgeBaseIds: [knowledgeBaseId] } });
    assert.equal(other.status, 201, other.text);
    for (let index = 0; index < IP_PER_MINUTE; index += 1) assertAnswered(await askAboutReturns(memory, other.body.id));
    assertLimited(await askAboutReturns(memory, other.body.id), 'from this address', IP_PER_MINUTE);
  });

  test('one session gets RATE_LIMIT_SESSION_PER_MINUTE follow-ups, or its experience\'s sessionPerMinute', async () => {
    for (const [rateLimit, perMinute] of [[{ ipPerMinute: 20 }, SESSION_PER_MINUTE], [{ ipPerMinute: 20, sessionPerMinute: 3 }, 3]] as const) {
      const { experienceId } = await createQueryExperience(memory, { settings: { rateLimit } });
      // The query that opens a session has no session id yet: only the address budget counts it.
      const opened = await askAboutReturns(memory, experienceId);
      assertAnswered(opened);
      const { sessionId } = opened.body;
      for (let index = 0; index < perMinute; index += 1) assertAnswered(await askAboutReturns(memory, experienceId, { sessionId }));
      assertLimited(await askAboutReturns(memory, experienceId, { sessionId }), 'in this session', perMinute);
      // The same visitor may still start another conversation.
      assertAnswered(await askAboutReturns(memory, experienceId));
    }
  });
});

describe('workspace budget', () => {
  test('token callers spend only their workspace budget, which then stops everyone in it and no other workspace', async () => {
    const first = await createQueryExperience(memory);
    const token = await memory.token(first.workspaceId, ['query:execute']);
    const opened = await askAboutReturns(memory, first.experienceId, { token });
    assertAnswered(opened);
    // Well beyond the IP and session budgets, all in one session from one address.
    for (let index = 1; index < WORKSPACE_PER_MINUTE; index += 1) {
      assertAnswered(await askAboutReturns(memory, first.experienceId, { token, sessionId: opened.body.sessionId }));
    }
    assertLimited(await askAboutReturns(memory, first.experienceId, { token }), 'for this workspace', WORKSPACE_PER_MINUTE);
    assertLimited(await askAboutReturns(memory, first.experienceId), 'for this workspace', WORKSPACE_PER_MINUTE);

    const second = await createQueryExperience(memory);
    assertAnswered(await askAboutReturns(memory, second.experienceId, { token: await memory.token(second.workspaceId, ['query:execute']) }));
    assertAnswered(await askAboutReturns(memory, second.experienceId));
  });
});

/** Requests to a server that is not a TestServer, in TestServer's terms (JSON bodies). */
function requester(url: string): Pick<TestServer, 'request'> {
  return {
    async request(method: string, path: string, options: RequestOptions = {}) {
      const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      const response = await fetch(url + path, { method, headers, body: JSON.stringify(options.body) });
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: JSON.parse(text), text };
    },
  };
}

/**
 * Alternates anonymous queries between two servers: each sees fewer than the IP budget, so only a
 * shared count refuses the last one.
 */
async function assertOneBudget(one: Pick<TestServer, 'request'>, two: Pick<TestServer, 'request'>, experienceId: string): Promise<void> {
  for (let index = 0; index < IP_PER_MINUTE; index += 1) assertAnswered(await askAboutReturns(index % 2 === 0 ? one : two, experienceId));
  assertLimited(await askAboutReturns(IP_PER_MINUTE % 2 === 0 ? one : two, experienceId), 'from this address', IP_PER_MINUTE);
  assertLimited(await askAboutReturns(IP_PER_MINUTE % 2 === 0 ? two : one, experienceId), 'from this address', IP_PER_MINUTE);
}

describe('REDIS_URL', () => {
  if (engine === 'postgres') {
    test('a second `lore start` process on the same database and Redis spends the same budget', async () => {
      const { experienceId } = await createQueryExperience(redis);
      const dataDir = await mkdtemp(join(tmpdir(), 'lore-rate-'));
      const env = testEnv(
        { DATABASE_URL: redis.context.config.databaseUrl!, DATA_DIR: dataDir },
        // The log line "lore is listening" tells the test the process is up.
        limitsEnv({ REDIS_URL, PORT: String(await freePort()), LOG_LEVEL: 'info', INGESTION_WORKERS: '0' }),
      );
      const second = LoreServer.start({ env, cwd: dataDir });
      try {
        await assertOneBudget(redis, requester(await second.listening()), experienceId);
      } finally {
        await second.kill();
        await rm(dataDir, { recursive: true, force: true });
      }
    });
  } else {
    // An embedded PGlite database belongs to one process, so a second process cannot open it:
    // several API processes need PostgreSQL, where the test above starts a real second process.
    // Here a second application, with its own rate-limit store and Redis connection, serves the
    // same database handle: the budget can only be shared through Redis.
    test('a second application on the same database and Redis spends the same budget', async () => {
      const { experienceId } = await createQueryExperience(redis);
      const second: App = await buildApp(redis.context, { logger: redis.context.log });
      try {
        await second.listen({ port: 0, host: '127.0.0.1' });
        const address = second.server.address();
        assert.ok(address && typeof address === 'object');
        await assertOneBudget(redis, requester(`http://127.0.0.1:${address.port}`), experienceId);
      } finally {
        await second.close();
      }
    });
  }

  test('with Redis unreachable, queries are answered without limits rather than refused', async () => {
    const { experienceId } = await createQueryExperience(redisDown);
    for (let index = 0; index < IP_PER_MINUTE + 2; index += 1) assertAnswered(await askAboutReturns(redisDown, experienceId));
  });
});
