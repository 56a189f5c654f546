/**
 * TRUST_PROXY names the proxies in front of lore: the client IP the per-address budget counts is
 * the last address in X-Forwarded-For that none of them appended, so a client that sends its own
 * X-Forwarded-For through a proxy (which appends the client's real address, as nginx's
 * $proxy_add_x_forwarded_for does), or straight to lore, still spends its own budget. The budget's
 * keys in a Redis of the test's own show which address was counted.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertExactError } from '../../../test/assert-error.ts';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../test/fake-openai.ts';
import { ForwardingProxy, postFrom } from '../../../test/forwarding-proxy.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { PrivateRedis } from '../../../test/private-redis.ts';
import { createQueryExperience } from '../../../test/query-experience.ts';

const IP_PER_MINUTE = 3;
const QUESTIONS = 10;
// Every address of 127.0.0.0/8 is this host's: each party of the test connects from its own.
const CLIENT = '127.0.0.2';
const PROXY = '127.0.0.3';
const OUTER_PROXY = '127.0.0.4';
const DIRECT_CLIENT = '127.0.0.5';

let fake: FakeOpenAi;
let redis: PrivateRedis;
let server: TestServer;
let proxy: ForwardingProxy;
let outerProxy: ForwardingProxy;

before(async () => {
  fake = await startFakeOpenAi();
  redis = await PrivateRedis.start();
  server = await startTestServer({
    ...fakeEmbeddingsEnv(fake),
    REDIS_URL: redis.url,
    RATE_LIMIT_IP_PER_MINUTE: String(IP_PER_MINUTE),
    TRUST_PROXY: `${PROXY}, ${OUTER_PROXY}`,
  });
  proxy = await ForwardingProxy.start(server.url, PROXY);
  outerProxy = await ForwardingProxy.start(proxy.url, OUTER_PROXY);
});
after(async () => {
  await outerProxy?.close();
  await proxy?.close();
  await server?.close();
  await redis?.close();
  await fake?.close();
});

/**
 * QUESTIONS anonymous questions from `from` to `url`, each claiming another address in its own
 * X-Forwarded-For: IP_PER_MINUTE are answered and the rest refused, and the only address counted
 * is `counted`.
 */
async function assertOneBudget(url: string, from: string, counted: string): Promise<void> {
  const { workspaceId, experienceId } = await createQueryExperience(server);
  const statuses: number[] = [];
  for (let index = 0; index < QUESTIONS; index += 1) {
    const answer = await postFrom(`${url}/api/v2/query`, from, { text: 'How long do I have to return an item?', experienceId }, { 'x-forwarded-for': `203.0.113.${index + 1}` });
    statuses.push(answer.status);
    if (answer.status === 429) {
      assert.equal(
        assertExactError(answer, 429, '/v2/query'),
        `Too many queries from this address (${IP_PER_MINUTE} per minute); retry in ${answer.headers.get('retry-after')} s.`,
      );
    } else assert.equal(answer.status, 200, answer.text);
  }
  assert.deepEqual(statuses, [...Array<number>(IP_PER_MINUTE).fill(200), ...Array<number>(QUESTIONS - IP_PER_MINUTE).fill(429)]);
  const keys = (await redis.keys('lore-rate-limit:*')).filter((key) => key.includes(experienceId) || key.includes(workspaceId));
  assert.deepEqual(keys, [`lore-rate-limit:ip:${experienceId}:${counted}`, `lore-rate-limit:workspace:${workspaceId}`]);
  assert.equal(await redis.client.get(keys[0]!), String(QUESTIONS));
  assert.equal(await redis.client.get(keys[1]!), String(IP_PER_MINUTE));
}

describe(`TRUST_PROXY with a spoofed X-Forwarded-For (${engine})`, () => {
  test('through one proxy: the address the proxy appended is counted', async () => {
    await assertOneBudget(proxy.url, CLIENT, CLIENT);
  });

  test('through two proxies, both named: the address the outer one appended is counted', async () => {
    await assertOneBudget(outerProxy.url, CLIENT, CLIENT);
  });

  test('straight to lore, past the proxies: the connection\'s own address is counted', async () => {
    await assertOneBudget(server.url, DIRECT_CLIENT, DIRECT_CLIENT);
  });
});
