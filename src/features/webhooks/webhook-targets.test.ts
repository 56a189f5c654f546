/**
 * The SSRF rules with their defaults (no WEBHOOKS_ALLOW_HTTP, no WEBHOOKS_ALLOW_PRIVATE_TARGETS):
 * literal private addresses are refused at creation, and a name that resolves to one at delivery.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError, assertExactError } from '../../../test/assert-error.ts';
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

  test('400: an IPv6 address that carries a private IPv4 address, each with its exact body; one carrying a public address is accepted', async () => {
    const { token } = await server.tenant();
    const refused: Array<[string, string]> = [
      ['https://[::7f00:1]/', '::7f00:1, which carries 127.0.0.1'],
      ['https://[64:ff9b::7f00:1]/', '64:ff9b::7f00:1, which carries 127.0.0.1'],
      ['https://[2002:7f00:1::]/', '2002:7f00:1::, which carries 127.0.0.1'],
      ['https://[64:ff9b:1::a00:1]/', '64:ff9b:1::a00:1, which carries 10.0.0.1'],
      ['https://[::ffff:7f00:1]/', '::ffff:7f00:1, which carries 127.0.0.1'],
      ['https://[::ffff:0:7f00:1]/', '::ffff:0:7f00:1, which carries 127.0.0.1'],
      ['https://[2002:a9fe:a9fe::1]/', '2002:a9fe:a9fe::1, which carries 169.254.169.254'],
      ['https://[2001:0:808:808::80ff:fffe]/', '2001:0:808:808::80ff:fffe, which carries 127.0.0.1'],
    ];
    for (const [url, shown] of refused) {
      const answer = await server.request('POST', HOOKS, { token, body: { url, events: ['job.completed'] } });
      const problem = `must not point at a loopback, private, link-local or metadata address (${shown}); WEBHOOKS_ALLOW_PRIVATE_TARGETS=true allows it`;
      assert.equal(assertExactError(answer, 400, '/v2/webhooks', { errors: [{ path: '/url', message: problem }] }), `url ${problem}.`, url);
    }
    for (const url of ['https://[2002:808:808::]/', 'https://[64:ff9b::808:808]/']) {
      const answer = await server.request('POST', HOOKS, { token, body: { url, events: ['job.completed'] } });
      assert.equal(answer.status, 201, `${url}: ${answer.text}`);
    }
    const listed = await server.request('GET', HOOKS, { token });
    assert.deepEqual(listed.body.webhooks.map((hook: { url: string }) => hook.url).sort(), ['https://[2002:808:808::]/', 'https://[64:ff9b::808:808]/']);
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
    assert.match(
      delivery.lastAttempt.error,
      /^Refused to connect: localhost resolves to a loopback, private, link-local or metadata address \((127\.0\.0\.1|::1)\); WEBHOOKS_ALLOW_PRIVATE_TARGETS is off$/,
    );
    assert.ok(Date.parse(delivery.nextAttemptAt) > Date.now(), 'a retry is scheduled');
    assert.equal(receiver.received.length, 0, 'nothing reached the receiver');
  });
});
