import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { assertError } from '../../../test/assert-error.ts';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../test/fake-openai.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { createKnowledgeBase, submit, waitForJob } from '../../../test/ingestion.ts';
import { WebhookReceiver } from '../../../test/webhook-receiver.ts';

const HOOKS = '/api/v2/webhooks';
const ALL_EVENTS = ['job.started', 'job.progress', 'job.completed', 'job.failed', 'job.cancelled'];
const MISSING = '00000000-0000-4000-8000-000000000000';

describe(`webhooks (${engine})`, () => {
  let server: TestServer;
  let fake: FakeOpenAi;
  const receivers: WebhookReceiver[] = [];

  before(async () => {
    fake = await startFakeOpenAi();
    server = await startTestServer({
      ...fakeEmbeddingsEnv(fake),
      // The receivers listen on loopback over plain http.
      WEBHOOKS_ALLOW_HTTP: 'true',
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOKS_RETRY_SCHEDULE: '300ms,600ms,1200ms',
      WEBHOOKS_TIMEOUT_MS: '3000',
      INGESTION_POLL_MS: '50',
    });
  });
  after(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await server.close();
    await fake.close();
  });

  /** A new workspace with a knowledge base, a receiver, and an endpoint pointing at it. */
  async function setUp(events = ALL_EVENTS) {
    const { workspaceId, token } = await server.tenant();
    const knowledgeBaseId = await createKnowledgeBase(server, token);
    const receiver = await WebhookReceiver.start();
    receivers.push(receiver);
    const created = await server.request('POST', HOOKS, { token, body: { url: receiver.url, events } });
    assert.equal(created.status, 201, created.text);
    receiver.secret = created.body.secret;
    return { workspaceId, token, knowledgeBaseId, receiver, endpoint: created.body };
  }

  /** The job as GET shows it, without the per-record results. */
  async function jobWithoutResults(token: string, jobId: string) {
    const job = (await server.request('GET', `/api/v2/data-ingestion/jobs/${jobId}`, { token })).body;
    delete job.data.results;
    return job;
  }

  test('POST answers 201 with the endpoint and its secret, shown only there', async () => {
    const { token } = await server.tenant();
    const created = await server.request('POST', HOOKS, {
      token,
      body: { url: 'https://hooks.example.com/lore', events: ['job.completed', 'job.failed'], description: 'CI' },
    });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(Object.keys(created.body).sort(), ['createdAt', 'description', 'disabledReason', 'enabled', 'events', 'id', 'secret', 'updatedAt', 'url']);
    assert.match(created.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.ok(Buffer.from(created.body.secret.slice(6), 'base64').length >= 24);
    assert.deepEqual(
      { url: created.body.url, events: created.body.events, description: created.body.description, enabled: created.body.enabled, disabledReason: created.body.disabledReason },
      { url: 'https://hooks.example.com/lore', events: ['job.completed', 'job.failed'], description: 'CI', enabled: true, disabledReason: null },
    );
    const { secret, ...shown } = created.body;
    assert.ok(secret);
    const got = await server.request('GET', `${HOOKS}/${created.body.id}`, { token });
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, shown);
    const list = await server.request('GET', HOOKS, { token });
    assert.equal(list.status, 200);
    assert.deepEqual(list.body, { total: 1, webhooks: [shown] });
    const noDescription = await server.request('POST', HOOKS, { token, body: { url: 'https://hooks.example.com/2', events: ['job.started'] } });
    assert.equal(noDescription.body.description, '');
    const newestFirst = await server.request('GET', `${HOOKS}?limit=1`, { token });
    assert.deepEqual([newestFirst.body.total, newestFirst.body.webhooks.map((hook: any) => hook.id)], [2, [noDescription.body.id]]);
  });

  test('PATCH changes fields and answers 200; DELETE answers 204, then 404', async () => {
    const { token } = await server.tenant();
    const { id } = (await server.request('POST', HOOKS, { token, body: { url: 'https://a.example.com/', events: ['job.started'] } })).body;
    const changed = await server.request('PATCH', `${HOOKS}/${id}`, {
      token,
      body: { url: 'https://b.example.com/', events: ['job.failed'], description: 'ops', enabled: false },
    });
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual(
      [changed.body.url, changed.body.events, changed.body.description, changed.body.enabled, changed.body.disabledReason, changed.body.secret],
      ['https://b.example.com/', ['job.failed'], 'ops', false, null, undefined],
    );
    assert.ok(changed.body.updatedAt >= changed.body.createdAt);
    assertError(await server.request('PATCH', `${HOOKS}/${id}`, { token, body: {} }), 400, `/v2/webhooks/${id}`);
    const deleted = await server.request('DELETE', `${HOOKS}/${id}`, { token });
    assert.equal(deleted.status, 204);
    assert.equal(deleted.text, '');
    assertError(await server.request('GET', `${HOOKS}/${id}`, { token }), 404, `/v2/webhooks/${id}`);
    assertError(await server.request('DELETE', `${HOOKS}/${id}`, { token }), 404, `/v2/webhooks/${id}`);
  });

  test('400: events empty, repeated or unknown; url missing, not a URL, with credentials, not http(s)', async () => {
    const { token } = await server.tenant();
    const cases: Array<[unknown, string]> = [
      [{ url: 'https://x.example.com/', events: [] }, '/events'],
      [{ url: 'https://x.example.com/', events: ['job.started', 'job.started'] }, '/events'],
      [{ url: 'https://x.example.com/', events: ['job.exploded'] }, '/events/0'],
      [{ events: ['job.started'] }, '/url'],
      [{ url: 'not a url', events: ['job.started'] }, '/url'],
      [{ url: 'https://user:pass@x.example.com/', events: ['job.started'] }, '/url'],
      [{ url: 'ftp://x.example.com/', events: ['job.started'] }, '/url'],
      [{ url: 'https://x.example.com/', events: ['job.started'], secret: 'mine' }, ''],
    ];
    for (const [body, pointer] of cases) {
      const answer = await server.request('POST', HOOKS, { token, body });
      assertError(answer, 400, '/v2/webhooks', pointer ? [pointer] : []);
    }
    const credentials = await server.request('POST', HOOKS, { token, body: { url: 'https://u:p@x.example.com/', events: ['job.started'] } });
    assert.match(credentials.body.message, /credentials/);
  });

  test('401 without a token; 403 without the webhooks scopes', async () => {
    assertError(await server.request('GET', HOOKS), 401, '/v2/webhooks');
    const { workspaceId, token } = await server.tenant();
    const { id } = (await server.request('POST', HOOKS, { token, body: { url: 'https://a.example.com/', events: ['job.started'] } })).body;
    const reader = await server.token(workspaceId, ['webhooks:read']);
    assert.equal((await server.request('GET', HOOKS, { token: reader })).status, 200);
    assert.equal((await server.request('GET', `${HOOKS}/${id}/deliveries`, { token: reader })).status, 200);
    const writes: Array<[string, string, unknown?]> = [
      ['POST', HOOKS, { url: 'https://a.example.com/', events: ['job.started'] }],
      ['PATCH', `${HOOKS}/${id}`, { enabled: false }],
      ['DELETE', `${HOOKS}/${id}`],
      ['POST', `${HOOKS}/${id}/rotate-secret`],
      ['POST', `${HOOKS}/${id}/deliveries/${MISSING}/redeliver`],
    ];
    for (const [method, path, body] of writes) {
      const answer = await server.request(method, path, { token: reader, body });
      assertError(answer, 403, path.slice(4));
      assert.deepEqual(answer.body.missing, ['webhooks:write']);
    }
    const other = await server.token(workspaceId, ['data-ingestion:read', 'webhooks:write']);
    for (const path of [HOOKS, `${HOOKS}/${id}`, `${HOOKS}/${id}/deliveries`, `${HOOKS}/${id}/deliveries/${MISSING}`]) {
      const answer = await server.request('GET', path, { token: other });
      assertError(answer, 403, path.slice(4));
      assert.deepEqual(answer.body.missing, ['webhooks:read']);
    }
  });

  test('every event of a completed job arrives, signed, with the job as GET shows it without results', async () => {
    const { token, knowledgeBaseId, receiver, endpoint } = await setUp();
    const jobId = await submit(server, token, knowledgeBaseId, [
      { id: 'a', content: 'Alpha is the first letter.' },
      { id: 'b', content: 'Beta is the second.' },
    ]);
    const completed = await receiver.event('job.completed', jobId);
    const started = await receiver.event('job.started', jobId);
    assert.ok(receiver.received.every((item) => item.verifyError === undefined), JSON.stringify(receiver.received.map((item) => item.verifyError)));
    assert.equal(started.data.status, 'processing');
    assert.equal(started.data.completed_at, null);
    assert.deepEqual(started.data.data.progress, { processed: 0, total: 2, successful: 0, failed: 0, skipped: 0 });
    assert.equal(completed.data.status, 'completed');
    assert.equal(completed.data.data.results, undefined);
    assert.deepEqual(completed.data, await jobWithoutResults(token, jobId));
    assert.equal(completed.timestamp, completed.data.completed_at);
    assert.equal(started.timestamp, started.data.started_at);

    const request = receiver.received.find((item) => item.payload === completed)!;
    assert.equal(request.headers['content-type'], 'application/json');
    assert.match(request.headers['webhook-signature']!, /^v1,[A-Za-z0-9+/=]+$/);
    assert.ok(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000) < 60);
    const deliveries = await server.request('GET', `${HOOKS}/${endpoint.id}/deliveries`, { token });
    assert.equal(deliveries.status, 200);
    assert.equal(deliveries.body.total, 2);
    const [newest, oldest] = deliveries.body.deliveries;
    assert.deepEqual([newest.event, oldest.event], ['job.completed', 'job.started']);
    assert.equal(newest.id, request.headers['webhook-id']);
    await waitUntil(async () => (await server.request('GET', `${HOOKS}/${endpoint.id}/deliveries/${newest.id}`, { token })).body.status === 'delivered');
    const detail = await server.request('GET', `${HOOKS}/${endpoint.id}/deliveries/${newest.id}`, { token });
    assert.equal(detail.status, 200);
    assert.deepEqual(Object.keys(detail.body).sort(), ['attemptLog', 'attempts', 'createdAt', 'event', 'id', 'jobId', 'lastAttempt', 'nextAttemptAt', 'payload', 'status']);
    assert.deepEqual([detail.body.jobId, detail.body.status, detail.body.attempts, detail.body.nextAttemptAt], [jobId, 'delivered', 1, null]);
    assert.equal(detail.body.attemptLog.length, 1);
    assert.deepEqual(detail.body.lastAttempt, detail.body.attemptLog[0]);
    assert.equal(detail.body.lastAttempt.statusCode, 204);
    assert.equal(detail.body.lastAttempt.error, null);
    assert.equal(typeof detail.body.lastAttempt.latencyMs, 'number');
    assert.deepEqual(detail.body.payload, completed);
  });

  test('a job long enough sends job.progress, at most one every 5 s, showing the job as it was', async () => {
    const { token, knowledgeBaseId, receiver } = await setUp(['job.progress', 'job.completed']);
    const records = Array.from({ length: 800 }, (_, index) => ({ id: `p${index}`, content: `Progress record ${index} of a long job.` }));
    fake.delayMs = 900;
    try {
      const jobId = await submit(server, token, knowledgeBaseId, records);
      await receiver.event('job.completed', jobId, 40_000);
    } finally {
      fake.delayMs = 0;
    }
    const progress = receiver.payloads.filter((payload) => payload.type === 'job.progress');
    assert.ok(progress.length >= 1, 'at least one progress event');
    for (const event of progress) {
      assert.equal(event.data.status, 'processing');
      assert.ok(event.data.data.progress.processed > 0 && event.data.data.progress.processed < 800, JSON.stringify(event.data.data.progress));
      assert.ok(event.data.data.eta && event.data.data.eta.recordsPerSecond > 0);
    }
    const times = progress.map((event) => Date.parse(event.timestamp));
    for (let index = 1; index < times.length; index += 1) assert.ok(times[index]! - times[index - 1]! >= 4_900, `${times}`);
  });

  test('no job.progress once every record is processed: the update before completion (timings, a lease renewal) is not sent as one', async () => {
    const { workspaceId, token, knowledgeBaseId, endpoint } = await setUp(['job.progress']);
    const jobId = await submit(server, token, knowledgeBaseId, [
      { id: 'a', content: 'Alpha is the first letter.' },
      { id: 'b', content: 'Beta is the second.' },
    ]);
    assert.equal((await waitForJob(server, token, jobId)).status, 'completed');
    const rolledBack = new Error('rolled back');
    let counted: number[][] = [];
    // The job is put back to processing inside a transaction that is rolled back, so no worker
    // sees it; each timings update then passes through the trigger as a worker's would.
    await server.context.db
      .transaction(async (tx) => {
        const progressEvents = async () => {
          await tx.query(`UPDATE ingestion_jobs SET timings = '{"batches": 1}' WHERE workspace_id = $1 AND id = $2`, [workspaceId, jobId]);
          const { rows } = await tx.query<{ processed: number }>(
            `SELECT (snapshot -> 'counts' ->> 'processed')::int AS processed FROM webhook_deliveries
             WHERE workspace_id = $1 AND endpoint_id = $2 AND event = 'job.progress'`,
            [workspaceId, endpoint.id],
          );
          return rows.map((row) => row.processed);
        };
        await tx.query(`UPDATE ingestion_jobs SET status = 'processing', completed_at = NULL WHERE workspace_id = $1 AND id = $2`, [workspaceId, jobId]);
        const allProcessed = await progressEvents();
        await tx.query('DELETE FROM ingestion_job_results WHERE workspace_id = $1 AND job_id = $2 AND ordinal = 1', [workspaceId, jobId]);
        counted = [allProcessed, await progressEvents()];
        throw rolledBack;
      })
      .catch((error: unknown) => {
        if (error !== rolledBack) throw error;
      });
    assert.deepEqual(counted, [[], [1]]);
  });

  test('job.failed and job.cancelled arrive', async () => {
    const { token, knowledgeBaseId, receiver } = await setUp();
    fake.failWith = 500;
    let failedId: string;
    try {
      failedId = await submit(server, token, knowledgeBaseId, [{ id: 'doomed', content: 'The embedder is down.' }]);
      assert.equal((await waitForJob(server, token, failedId)).status, 'failed');
    } finally {
      fake.failWith = undefined;
    }
    const failed = await receiver.event('job.failed', failedId);
    assert.equal(failed.data.status, 'failed');
    assert.equal(typeof failed.data.result.error, 'string');

    fake.delayMs = 1000;
    try {
      const records = Array.from({ length: 300 }, (_, index) => ({ id: `c${index}`, content: `Cancelled record ${index}.` }));
      const jobId = await submit(server, token, knowledgeBaseId, records);
      await receiver.event('job.started', jobId);
      assert.equal((await server.request('DELETE', `/api/v2/data-ingestion/jobs/${jobId}`, { token })).status, 204);
      const cancelled = await receiver.event('job.cancelled', jobId);
      assert.equal(cancelled.data.status, 'cancelled');
      assert.deepEqual(cancelled.data, await jobWithoutResults(token, jobId));
    } finally {
      fake.delayMs = 0;
    }
  });

  test('a receiver answering 500 gets retries with growing delays, then the endpoint is disabled with the reason', async () => {
    const { token, knowledgeBaseId, receiver, endpoint } = await setUp(['job.completed']);
    receiver.respond = () => 500;
    const jobId = await submit(server, token, knowledgeBaseId, [{ id: 'r', content: 'Retried.' }]);
    const attempts = await receiver.waitFor('4 attempts', (received) => (received.length >= 4 ? received : undefined));
    assert.ok(attempts.every((item) => item.payload?.data.id === jobId));
    assert.equal(new Set(attempts.map((item) => item.headers['webhook-id'])).size, 1, 'the same webhook-id on every attempt');
    const gaps = attempts.slice(1).map((item, index) => item.at - attempts[index]!.at);
    // The schedule waits 300, 600 and 1200 ms.
    assert.ok(gaps[0]! >= 250 && gaps[1]! > gaps[0]! && gaps[2]! > gaps[1]! && gaps[2]! >= 1100, `gaps ${gaps}`);

    await waitUntil(async () => !(await server.request('GET', `${HOOKS}/${endpoint.id}`, { token })).body.enabled);
    const disabled = (await server.request('GET', `${HOOKS}/${endpoint.id}`, { token })).body;
    assert.match(disabled.disabledReason, /failed 4 attempts.*500/);
    const [delivery] = (await server.request('GET', `${HOOKS}/${endpoint.id}/deliveries`, { token })).body.deliveries;
    assert.deepEqual([delivery.status, delivery.attempts, delivery.nextAttemptAt, delivery.lastAttempt.statusCode], ['failed', 4, null, 500]);
    assert.match(delivery.lastAttempt.error, /answered 500: receiver says no/);
    const detail = (await server.request('GET', `${HOOKS}/${endpoint.id}/deliveries/${delivery.id}`, { token })).body;
    assert.deepEqual(detail.attemptLog.map((attempt: any) => attempt.statusCode), [500, 500, 500, 500]);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(receiver.received.length, 4, 'no attempt after the last of the schedule');

    // Redelivering needs the endpoint enabled; enabling clears the reason.
    const path = `${HOOKS}/${endpoint.id}/deliveries/${delivery.id}/redeliver`;
    assertError(await server.request('POST', path, { token }), 409, path.slice(4));
    const enabled = await server.request('PATCH', `${HOOKS}/${endpoint.id}`, { token, body: { enabled: true } });
    assert.deepEqual([enabled.body.enabled, enabled.body.disabledReason], [true, null]);
    receiver.respond = () => 200;
    const queued = await server.request('POST', path, { token });
    assert.equal(queued.status, 202, queued.text);
    const redelivered = await receiver.waitFor('the redelivery', (received) => (received.length >= 5 ? received[4] : undefined));
    assert.equal(redelivered.headers['webhook-id'], delivery.id);
    await waitUntil(async () => (await server.request('GET', `${HOOKS}/${endpoint.id}/deliveries/${delivery.id}`, { token })).body.status === 'delivered');
    assertError(await server.request('POST', `${HOOKS}/${endpoint.id}/deliveries/${MISSING}/redeliver`, { token }), 404, `/v2/webhooks/${endpoint.id}/deliveries/${MISSING}/redeliver`);
  });

  test('a 410 Gone disables the endpoint at once', async () => {
    const { token, knowledgeBaseId, receiver, endpoint } = await setUp(['job.completed']);
    receiver.respond = () => 410;
    await submit(server, token, knowledgeBaseId, [{ id: 'g', content: 'Gone.' }]);
    await receiver.waitFor('one attempt', (received) => received[0]);
    await waitUntil(async () => !(await server.request('GET', `${HOOKS}/${endpoint.id}`, { token })).body.enabled);
    const disabled = (await server.request('GET', `${HOOKS}/${endpoint.id}`, { token })).body;
    assert.match(disabled.disabledReason, /410 Gone/);
    assert.equal(receiver.received.length, 1);
  });

  test('rotate-secret answers the new secret; the old one still verifies during the grace period', async () => {
    const { token, knowledgeBaseId, receiver, endpoint } = await setUp(['job.completed']);
    const rotated = await server.request('POST', `${HOOKS}/${endpoint.id}/rotate-secret`, { token });
    assert.equal(rotated.status, 200, rotated.text);
    assert.match(rotated.body.secret, /^whsec_/);
    assert.notEqual(rotated.body.secret, endpoint.secret);
    assert.equal(rotated.body.id, endpoint.id);
    assert.equal((await server.request('GET', `${HOOKS}/${endpoint.id}`, { token })).body.secret, undefined);
    receiver.secret = rotated.body.secret;
    const jobId = await submit(server, token, knowledgeBaseId, [{ id: 'k', content: 'Rotated.' }]);
    await receiver.event('job.completed', jobId);
    const request = receiver.received[0]!;
    assert.equal(request.headers['webhook-signature']!.split(' ').length, 2);
    assert.ok(new Webhook(endpoint.secret).verify(request.body, request.headers), 'the old secret verifies too');
    assertError(await server.request('POST', `${HOOKS}/${MISSING}/rotate-secret`, { token }), 404, `/v2/webhooks/${MISSING}/rotate-secret`);
  });

  test("another workspace's webhooks are 404, never listed, and never receive this workspace's events", async () => {
    const mine = await setUp(['job.completed', 'job.started']);
    const theirs = await setUp(['job.completed', 'job.started']);
    const base = `${HOOKS}/${theirs.endpoint.id}`;
    const requests: Array<[string, string, unknown?]> = [
      ['GET', base],
      ['PATCH', base, { enabled: false }],
      ['DELETE', base],
      ['POST', `${base}/rotate-secret`],
      ['GET', `${base}/deliveries`],
      ['GET', `${base}/deliveries/${MISSING}`],
      ['POST', `${base}/deliveries/${MISSING}/redeliver`],
    ];
    for (const [method, path, body] of requests) {
      assertError(await server.request(method, path, { token: mine.token, body }), 404, path.slice(4));
    }
    const list = await server.request('GET', HOOKS, { token: mine.token });
    assert.deepEqual(list.body.webhooks.map((hook: any) => hook.id), [mine.endpoint.id]);

    const jobId = await submit(server, mine.token, mine.knowledgeBaseId, [{ id: 'mine', content: 'Only mine.' }]);
    await mine.receiver.event('job.completed', jobId);
    const theirJob = await submit(server, theirs.token, theirs.knowledgeBaseId, [{ id: 'theirs', content: 'Only theirs.' }]);
    await theirs.receiver.event('job.completed', theirJob);
    assert.ok(theirs.receiver.payloads.every((payload) => payload.data.id === theirJob));
    assert.ok(mine.receiver.payloads.every((payload) => payload.data.id === jobId));
    // A delivery of mine is not reachable through their endpoint either.
    const [delivery] = (await server.request('GET', `${HOOKS}/${mine.endpoint.id}/deliveries`, { token: mine.token })).body.deliveries;
    assertError(await server.request('GET', `${base}/deliveries/${delivery.id}`, { token: theirs.token }), 404, `/v2/webhooks/${theirs.endpoint.id}/deliveries/${delivery.id}`);
  });

  test('a disabled endpoint receives nothing; a job of a workspace without endpoints delivers nothing', async () => {
    const { token, knowledgeBaseId, receiver, endpoint } = await setUp(['job.completed']);
    await server.request('PATCH', `${HOOKS}/${endpoint.id}`, { token, body: { enabled: false } });
    await waitForJob(server, token, await submit(server, token, knowledgeBaseId, [{ id: 'off', content: 'Nobody listens.' }]));
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(receiver.received.length, 0);
    assert.equal((await server.request('GET', `${HOOKS}/${endpoint.id}/deliveries`, { token })).body.total, 0);
  });
});

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('the condition did not hold in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
