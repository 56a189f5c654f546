/**
 * Kill -9 between a job's state change and its webhook's delivery: the outbox row was committed
 * with the job, so another process delivers it (at least once, the same webhook-id). The
 * receiver holds the first request open and the process sending it is killed while it waits, so
 * the attempt never finishes. On PostgreSQL a `lore worker` is killed and a second one delivers
 * once the lease ends; on the embedded engine the server is killed and started again.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from './fake-openai.ts';
import { ADMIN_KEY, engine, startTestServer, type TestServer } from './harness.ts';
import { freePort, LoreServer, send } from './lore-process.ts';
import { WebhookReceiver } from './webhook-receiver.ts';

const TOKEN_SECRET = 'webhook-crash-secret-0123456789-0123456789';

describe(`webhooks: kill -9 before the delivery (${engine})`, () => {
  let fake: FakeOpenAi;
  let receiver: WebhookReceiver;
  let dir: string;
  const children: LoreServer[] = [];

  before(async () => {
    fake = await startFakeOpenAi();
    receiver = await WebhookReceiver.start();
    dir = await mkdtemp(join(tmpdir(), 'lore-webhook-crash-'));
  });
  after(async () => {
    await Promise.all(children.map((child) => child.kill()));
    await receiver.close();
    await fake.close();
    await rm(dir, { recursive: true, force: true });
  });

  const webhookEnv = {
    WEBHOOKS_ALLOW_HTTP: 'true',
    WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
    // A 2 s attempt limit makes a 7 s lease: how long the second worker waits on PostgreSQL.
    WEBHOOKS_TIMEOUT_MS: '2000',
    INGESTION_POLL_MS: '100',
  };
  const childEnv = (extra: Record<string, string>) => ({
    ...fakeEmbeddingsEnv(fake),
    ...webhookEnv,
    TOKEN_SECRET,
    ADMIN_API_KEY: ADMIN_KEY,
    BOOTSTRAP: 'never',
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'warn',
    ...extra,
  });

  /** A workspace with a knowledge base and an endpoint on the receiver, through the API at `base`. */
  async function setUp(base: string): Promise<{ token: string; knowledgeBaseId: string; endpointId: string }> {
    const workspace = await send('POST', `${base}/api/v2/admin/workspaces`, { token: ADMIN_KEY, json: { name: 'crash' } });
    const client = await send('POST', `${base}/api/v2/admin/workspaces/${workspace.body.id}/access-token-clients`, {
      token: ADMIN_KEY,
      json: { name: 'crash', scopes: ['*'] },
    });
    const grant = await send('POST', `${base}/v2/auth/access-tokens`, { json: { clientId: client.body.clientId, clientSecret: client.body.clientSecret } });
    const token = grant.body.access_token as string;
    const knowledgeBaseId = (await send('POST', `${base}/api/v2/knowledge-bases`, { token, json: { name: 'crash' } })).body.id as string;
    const endpoint = await send('POST', `${base}/api/v2/webhooks`, { token, json: { url: receiver.url, events: ['job.completed'] } });
    assert.equal(endpoint.status, 201, JSON.stringify(endpoint.body));
    receiver.secret = endpoint.body.secret;
    return { token, knowledgeBaseId, endpointId: endpoint.body.id };
  }

  /** Submits a job; resolves once the receiver holds its job.completed request open. */
  async function completeAndHold(base: string, token: string, knowledgeBaseId: string): Promise<string> {
    receiver.respond = () => (receiver.received.length === 1 ? 'hang' : 204);
    const submitted = await send('POST', `${base}/api/v2/data-ingestion/jobs`, {
      token,
      json: { adapterType: 'generic-json', knowledgeBaseId, data: { records: [{ id: 'r', content: 'Delivered despite the crash.' }] } },
    });
    assert.equal(submitted.status, 202);
    const held = await receiver.waitFor('the first job.completed request', (received) => received[0], 60_000);
    assert.equal(held.payload.type, 'job.completed');
    assert.equal(held.payload.data.id, submitted.body.jobId);
    return held.headers['webhook-id']!;
  }

  /** The delivery, once it is delivered, as the API shows it. */
  async function delivered(base: string, token: string, endpointId: string, deliveryId: string): Promise<any> {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const reply = await send('GET', `${base}/api/v2/webhooks/${endpointId}/deliveries/${deliveryId}`, { token }).catch(() => undefined);
      if (reply?.body.status === 'delivered') return reply.body;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`delivery ${deliveryId} was not delivered in time`);
  }

  function assertRedelivered(webhookId: string, detail: any): void {
    const again = receiver.received.filter((item) => item.headers['webhook-id'] === webhookId);
    assert.ok(again.length >= 2, 'sent again after the crash');
    assert.ok(again.every((item) => item.verifyError === undefined && item.payload.type === 'job.completed'));
    assert.equal(again[0]!.body, again.at(-1)!.body, 'the same payload');
    // The killed attempt never finished, so it is not in the log.
    assert.deepEqual(detail.attemptLog.map((attempt: any) => attempt.statusCode), [204]);
  }

  if (engine === 'postgres') {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ ...fakeEmbeddingsEnv(fake), ...webhookEnv, INGESTION_WORKERS: '0', TOKEN_SECRET });
    });
    after(() => server?.close());

    test('a lore worker killed while it delivers job.completed: another worker delivers it', async () => {
      const { token, knowledgeBaseId, endpointId } = await setUp(server.url);
      const env = childEnv({ DATABASE_URL: server.context.config.databaseUrl! });
      const first = LoreServer.spawn(['worker'], { env, cwd: dir });
      children.push(first);
      const webhookId = await completeAndHold(server.url, token, knowledgeBaseId);
      await first.kill();
      const pending = await server.request('GET', `/api/v2/webhooks/${endpointId}/deliveries/${webhookId}`, { token });
      assert.deepEqual([pending.body.status, pending.body.attempts], ['pending', 0]);

      const second = LoreServer.spawn(['worker'], { env, cwd: dir });
      children.push(second);
      assertRedelivered(webhookId, await delivered(server.url, token, endpointId, webhookId));
    });
  } else {
    test('the embedded server killed while it delivers job.completed: restarted, it delivers it', async () => {
      const port = await freePort();
      const env = childEnv({ DATA_DIR: join(dir, 'data'), PORT: String(port), LOG_LEVEL: 'info' });
      const first = LoreServer.start({ env, cwd: dir });
      children.push(first);
      const base = await first.listening();
      const { token, knowledgeBaseId, endpointId } = await setUp(base);
      const webhookId = await completeAndHold(base, token, knowledgeBaseId);
      await first.kill();

      const second = LoreServer.start({ env, cwd: dir });
      children.push(second);
      await second.listening();
      assertRedelivered(webhookId, await delivered(base, token, endpointId, webhookId));
      assert.equal((await second.stop()).code, 0);
    });
  }
});
