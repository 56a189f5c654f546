/**
 * The SSRF rules with their defaults (no WEBHOOKS_ALLOW_HTTP, no WEBHOOKS_ALLOW_PRIVATE_TARGETS):
 * literal private addresses are refused at creation, and a name that resolves to one at delivery.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError } from '../../../test/assert-error.ts';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../test/fake-openai.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { createKnowledgeBase, submit, waitForJob } from '../../../test/ingestion.ts';
import { WebhookReceiver } from '../../../test/webhook-receiver.ts';

const HOOKS = '/api/v2/webhooks';

describe(`webhook targets (${engine})`, () => {
  let server: TestServer;
  let fake: FakeOpenAi;
  let receiver: WebhookReceiver;

  before(async () => {
    fake = await startFakeOpenAi();
    receiver = await WebhookReceiver.start();
    server = await startTestServer({ ...fakeEmbeddingsEnv(fake), INGESTION_POLL_MS: '50' });
  });
  after(async () => {
    await server.close();
    await receiver.close();
    await fake.close();
  });

  test('400: literal loopback, private, link-local and metadata addresses, and plain http', async () => {
    const { token } = await server.tenant();
    for (const url of ['https://127.0.0.1/hook', receiver.url, 'https://[::1]/', 'https://10.0.0.8/', 'https://169.254.169.254/latest', 'https://2130706433/']) {
      const answer = await server.request('POST', HOOKS, { token, body: { url, events: ['job.completed'] } });
      const message = assertError(answer, 400, '/v2/webhooks', ['/url']);
      assert.match(message, /http|loopback, private, link-local or metadata/, url);
    }
    const http = await server.request('POST', HOOKS, { token, body: { url: 'http://hooks.example.com/', events: ['job.completed'] } });
    assert.match(assertError(http, 400, '/v2/webhooks', ['/url']), /WEBHOOKS_ALLOW_HTTP/);
    const { id } = (await server.request('POST', HOOKS, { token, body: { url: 'https://hooks.example.com/', events: ['job.completed'] } })).body;
    assertError(await server.request('PATCH', `${HOOKS}/${id}`, { token, body: { url: 'https://192.168.0.1/' } }), 400, `/v2/webhooks/${id}`, ['/url']);
  });

  test('a name resolving to 127.0.0.1 is accepted at creation and refused at delivery, with the reason on the attempt', async () => {
    const { token } = await server.tenant();
    const knowledgeBaseId = await createKnowledgeBase(server, token);
    const port = new URL(receiver.url).port;
    const created = await server.request('POST', HOOKS, { token, body: { url: `https://localhost:${port}/hook`, events: ['job.completed'] } });
    assert.equal(created.status, 201, created.text);
    await waitForJob(server, token, await submit(server, token, knowledgeBaseId, [{ id: 'x', content: 'Inside the network.' }]));
    const deliveries = `${HOOKS}/${created.body.id}/deliveries`;
    let delivery: any;
    const deadline = Date.now() + 10_000;
    while (!delivery?.lastAttempt && Date.now() < deadline) {
      delivery = (await server.request('GET', deliveries, { token })).body.deliveries[0];
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(delivery.status, 'pending');
    assert.equal(delivery.lastAttempt.statusCode, null);
    assert.match(delivery.lastAttempt.error, /Refused to connect: .*(127\.0\.0\.1|::1).*host:localhost.*private IP address.*WEBHOOKS_ALLOW_PRIVATE_TARGETS/);
    assert.ok(Date.parse(delivery.nextAttemptAt) > Date.now(), 'a retry is scheduled');
    assert.equal(receiver.received.length, 0, 'nothing reached the receiver');
  });
});
