/**
 * Decision 24's restriction on every route that reaches a knowledge base: a `*` token of a client
 * restricted to KB1 meets KB2's jobs, entries, experiences, sessions, insights and webhook
 * deliveries. A route that names KB2 itself answers 403 (decision 24); an object of KB2 is a 404,
 * worded as for an object of another workspace; a list leaves KB2's objects out. None of KB2's
 * content (payloads, per-record results, entries, answers) is ever in an answer to that token.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Logger } from 'pino';
import { assertExactError } from '../../../test/assert-error.ts';
import { engine, startTestServer, type Answer, type TestServer } from '../../../test/harness.ts';
import { createKnowledgeBase, submit, waitForJob } from '../../../test/ingestion.ts';
import { WebhookReceiver } from '../../../test/webhook-receiver.ts';
import { startWorkers } from '../../server.ts';

const JOBS = '/api/v2/data-ingestion/jobs';
const HOOKS = '/api/v2/webhooks';
/** A word only KB2's records hold: it must never reach the restricted token. */
const SECRET = 'zebracorn';

/** The request path as the error body shows it: without `/api` and the query string. */
const shownPath = (path: string) => path.slice(4).split('?')[0]!;

describe(`a token restricted to one knowledge base, on every route that reaches another (${engine})`, () => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  let star: string;
  let restricted: string;
  /** The ids the rows below name as {kb1}, {done2}...: KB1's and KB2's objects. */
  const ids: Record<string, string> = {};
  const resolve = (text: string) => text.replace(/\{(\w+)\}/g, (_, name: string) => ids[name] ?? `{${name}}`);

  const as = (token: string, method: string, path: string, body?: unknown) => server.request(method, path, { token, body });
  const ok = async (answer: Promise<Answer>, status = 200) => {
    const settled = await answer;
    assert.equal(settled.status, status, settled.text);
    return settled.body;
  };

  before(async () => {
    server = await startTestServer({ INGESTION_WORKERS: '0', INGESTION_POLL_MS: '50', WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' });
    ({ token: star } = await server.tenant());
    ids.kb1 = await createKnowledgeBase(server, star, { name: 'kb1' });
    ids.kb2 = await createKnowledgeBase(server, star, { name: 'kb2' });
    receiver = await WebhookReceiver.start();
    const hook = await ok(as(star, 'POST', HOOKS, { url: receiver.url, events: ['job.started', 'job.completed'] }), 201);
    receiver.secret = hook.secret;
    ids.endpoint = hook.id;

    // Two finished jobs, then two left pending (the server runs no worker of its own).
    ids.done1 = await submit(server, star, ids.kb1, [{ id: 'aardvark-guide', content: 'An aardvark is an animal that digs burrows and eats ants.' }]);
    ids.done2 = await submit(server, star, ids.kb2, [{ id: `${SECRET}-guide`, content: `A ${SECRET} is a striped horse with one horn.` }]);
    const { config, db, embedder, log } = server.context;
    const workers = startWorkers(1, config, { db, embedder, log: log as Logger });
    try {
      for (const id of [ids.done1, ids.done2]) assert.equal((await waitForJob(server, star, id!)).status, 'completed');
    } finally {
      await Promise.all(workers.map((worker) => worker.stop()));
    }
    ids.pending1 = await submit(server, star, ids.kb1, [{ id: 'aardvark-later', content: 'Aardvarks dig burrows.' }]);
    ids.pending2 = await submit(server, star, ids.kb2, [{ id: `${SECRET}-later`, content: `The ${SECRET} is a secret of KB2.` }]);

    ids.entry2 = (await ok(as(star, 'GET', `/api/v2/knowledge-bases/${ids.kb2}/entries`))).entries[0].id;
    const experience = async (name: string, knowledgeBaseIds: string[]) =>
      (await ok(as(star, 'POST', '/api/v2/experiences', { name, knowledgeBaseIds }), 201)).id as string;
    ids.own = await experience('own', [ids.kb1]);
    ids.other = await experience('other', [ids.kb2]);
    ids.mixed = await experience('mixed', [ids.kb1, ids.kb2]);
    ids.ownSession = (await ok(as(star, 'POST', '/api/v2/query', { text: 'What is an aardvark?', experienceId: ids.own }))).sessionId;
    const otherAnswer = await ok(as(star, 'POST', '/api/v2/query', { text: `What is a ${SECRET}?`, experienceId: ids.other }));
    assert.ok(otherAnswer.sources[0].snippet.includes(SECRET), 'the other experience answers from KB2');
    ids.otherSession = otherAnswer.sessionId;
    ids.otherQuery = otherAnswer.queryId;

    const { deliveries } = await ok(as(star, 'GET', `${HOOKS}/${ids.endpoint}/deliveries?limit=100`));
    ids.ownDelivery = deliveries.find((delivery: any) => delivery.jobId === ids.done1).id;
    ids.otherDelivery = deliveries.find((delivery: any) => delivery.jobId === ids.done2).id;

    const client = await ok(as(star, 'POST', '/api/v2/access-token-clients', { name: 'kb1 only', scopes: ['*'], knowledgeBaseIds: [ids.kb1] }), 201);
    restricted = (await ok(as(star, 'POST', '/v2/auth/access-tokens', { clientId: client.clientId, clientSecret: client.clientSecret }))).access_token;
  });
  after(async () => {
    await server?.close();
    await receiver?.close();
  });

  /** What only KB2's objects carry: its secret word and the ids of its jobs, entry, experiences, session, query and delivery. */
  function assertNothingOfKb2(answer: Answer): void {
    const marks = [SECRET, ...['done2', 'pending2', 'entry2', 'other', 'mixed', 'otherSession', 'otherQuery', 'otherDelivery'].map((name) => ids[name]!)];
    for (const mark of marks) assert.ok(!answer.text.includes(mark), `${mark} in ${answer.text.slice(0, 300)}`);
  }

  // Each list as the restricted token reads it: [path, what the answer shows, what it must show].
  const lists: Array<[path: string, shown: (body: any) => unknown[], expected: string[]]> = [
    [`${JOBS}?includePayload=true&limit=100`, (body) => [body.total, ...body.jobs.map((job: any) => job.id)], ['2', '{pending1}', '{done1}']],
    [`${JOBS}?status=pending`, (body) => [body.total, ...body.jobs.map((job: any) => job.id)], ['1', '{pending1}']],
    ['/api/v2/knowledge-bases', (body) => [body.total, ...body.knowledgeBases.map((kb: any) => kb.id)], ['1', '{kb1}']],
    ['/api/v2/experiences?limit=100', (body) => [body.total, ...body.experiences.map((experience: any) => experience.id)], ['1', '{own}']],
    ['/api/v2/sessions', (body) => [body.total, ...body.sessions.map((session: any) => session.id)], ['1', '{ownSession}']],
    ['/api/v2/sessions?experienceId={other}', (body) => [body.total], ['0']],
    // KB2's question (its gap too) would bring its secret word, which assertNothingOfKb2 looks for.
    ['/api/v2/insights', (body) => [body.totals.queries], ['1']],
    [`${HOOKS}/{endpoint}/deliveries?limit=100`, (body) => [...new Set(body.deliveries.map((delivery: any) => delivery.jobId))], ['{done1}']],
  ];

  for (const [template, shown, expected] of lists) {
    test(`GET ${template} leaves KB2's objects out`, async () => {
      const answer = await as(restricted, 'GET', resolve(template));
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(shown(answer.body).map(String), expected.map(resolve));
      assertNothingOfKb2(answer);
    });
  }

  const kb2Refused = 'This access token is restricted to other knowledge bases than {kb2}.';
  const webhooksRefused = 'A token restricted to some knowledge bases cannot manage webhook endpoints: they receive the events of every knowledge base.';
  const missingJob = (job: string) => `Ingestion job {${job}} does not exist.`;

  // {name} stands for the id of that name (`ids`). Reads first, then writes, the destructive ones
  // last, so that on a server without the restriction each row still meets the object it names.
  const refusals: Array<[method: string, path: string, status: number, message: string, body?: unknown]> = [
    ['GET', `${JOBS}/{done2}`, 404, missingJob('done2')],
    ['GET', `${JOBS}/{done2}?includePayload=true`, 404, missingJob('done2')],
    ['GET', `${JOBS}/{pending2}?includePayload=true`, 404, missingJob('pending2')],
    ['GET', '/api/v2/knowledge-bases/{kb2}', 403, kb2Refused],
    ['GET', '/api/v2/knowledge-bases/{kb2}/entries', 403, kb2Refused],
    ['GET', '/api/v2/knowledge-bases/{kb2}/entries/{entry2}', 403, kb2Refused],
    ['GET', '/api/v2/knowledge-bases/{kb1}/entries/{entry2}', 404, 'Entry {entry2} does not exist.'],
    ['POST', '/api/v2/knowledge-bases/{kb2}/retrieve', 403, kb2Refused, { query: SECRET }],
    ['GET', '/api/v2/experiences/{other}', 404, 'Experience {other} does not exist.'],
    ['GET', '/api/v2/experiences/{mixed}', 404, 'Experience {mixed} does not exist.'],
    ['GET', '/api/v2/experiences/{other}/widget', 403, 'This access token is restricted to other knowledge bases than those of experience {other}.'],
    ['POST', '/api/v2/query', 403, 'This access token is restricted to other knowledge bases than those of experience {mixed}.', { text: `What is a ${SECRET}?`, experienceId: '{mixed}' }],
    ['GET', '/api/v2/sessions/{otherSession}', 404, 'Session {otherSession} does not exist.'],
    ['GET', '/api/v2/insights?experienceId={other}', 404, 'Experience {other} does not exist.'],
    ['GET', `${HOOKS}/{endpoint}/deliveries/{otherDelivery}`, 404, 'Delivery {otherDelivery} does not exist.'],
    ['POST', JOBS, 403, kb2Refused, { adapterType: 'generic-json', knowledgeBaseId: '{kb2}', data: { records: [{ id: 'sneaky', content: 'Written into KB2.' }] } }],
    ['POST', `${JOBS}/{done2}/retry`, 404, missingJob('done2')],
    ['POST', `${JOBS}/{pending2}/retry`, 404, missingJob('pending2')],
    ['POST', '/api/v2/knowledge-bases', 403, 'A token restricted to some knowledge bases cannot create new ones.', { name: 'sneaky' }],
    ['PATCH', '/api/v2/knowledge-bases/{kb2}', 403, kb2Refused, { name: 'renamed' }],
    ['POST', '/api/v2/experiences', 403, kb2Refused, { name: 'sneaky', knowledgeBaseIds: ['{kb2}'] }],
    ['PATCH', '/api/v2/experiences/{own}', 403, kb2Refused, { knowledgeBaseIds: ['{kb1}', '{kb2}'] }],
    ['PATCH', '/api/v2/experiences/{other}', 404, 'Experience {other} does not exist.', { name: 'renamed' }],
    ['PATCH', '/api/v2/experiences/{mixed}', 404, 'Experience {mixed} does not exist.', { knowledgeBaseIds: ['{kb1}'] }],
    ['POST', '/api/v2/queries/{otherQuery}/feedback', 403, 'This access token is restricted to other knowledge bases than those of experience {other}.', { rating: 'down' }],
    ['POST', '/api/v2/sessions', 404, 'Experience {other} does not exist.', { experienceId: '{other}' }],
    ['PATCH', '/api/v2/sessions/{otherSession}', 404, 'Session {otherSession} does not exist.', { metadata: { tagged: true } }],
    ['POST', '/api/v2/sessions/{otherSession}/complete', 404, 'Session {otherSession} does not exist.'],
    ['POST', `${HOOKS}/{endpoint}/deliveries/{otherDelivery}/redeliver`, 404, 'Delivery {otherDelivery} does not exist.'],
    ['POST', HOOKS, 403, webhooksRefused, { url: 'https://hooks.example.com/all', events: ['job.completed'] }],
    ['PATCH', `${HOOKS}/{endpoint}`, 403, webhooksRefused, { url: 'https://hooks.example.com/stolen' }],
    ['POST', `${HOOKS}/{endpoint}/rotate-secret`, 403, webhooksRefused],
    ['DELETE', `${HOOKS}/{endpoint}`, 403, webhooksRefused],
    ['DELETE', `${JOBS}/{pending2}`, 404, missingJob('pending2')],
    ['DELETE', `${JOBS}/{done2}`, 404, missingJob('done2')],
    ['DELETE', '/api/v2/knowledge-bases/{kb1}/entries/{entry2}', 404, 'Entry {entry2} does not exist.'],
    ['DELETE', '/api/v2/knowledge-bases/{kb2}/entries/{entry2}', 403, kb2Refused],
    ['DELETE', '/api/v2/experiences/{mixed}', 404, 'Experience {mixed} does not exist.'],
    ['DELETE', '/api/v2/experiences/{other}', 404, 'Experience {other} does not exist.'],
    ['DELETE', '/api/v2/knowledge-bases/{kb2}', 403, kb2Refused],
  ];

  for (const [method, template, status, message, body] of refusals) {
    test(`${method} ${template}: ${status}`, async () => {
      const path = resolve(template);
      const answer = await as(restricted, method, path, body === undefined ? undefined : JSON.parse(resolve(JSON.stringify(body))));
      assert.equal(assertExactError(answer, status, shownPath(path)), resolve(message));
      assert.ok(!answer.text.includes(SECRET), answer.text);
    });
  }

  test('what the refused requests named is as it was: KB2\'s jobs, entry, experiences, session and endpoint', async () => {
    const all = await ok(as(star, 'GET', `${JOBS}?limit=100`));
    const states = all.jobs.map((job: any) => `${job.id} ${job.status}`).sort();
    const expected = [['done1', 'completed'], ['done2', 'completed'], ['pending1', 'pending'], ['pending2', 'pending']];
    assert.deepEqual(states, expected.map(([name, status]) => `${ids[name!]} ${status}`).sort(), 'no job cancelled, retried or submitted');
    assert.equal((await ok(as(star, 'GET', `/api/v2/knowledge-bases/${ids.kb2}`))).name, 'kb2');
    assert.equal((await ok(as(star, 'GET', `/api/v2/knowledge-bases/${ids.kb2}/entries/${ids.entry2}`))).id, ids.entry2);
    assert.equal((await ok(as(star, 'GET', `/api/v2/experiences/${ids.other}`))).name, 'other');
    assert.deepEqual((await ok(as(star, 'GET', `/api/v2/experiences/${ids.mixed}`))).knowledgeBaseIds, [ids.kb1, ids.kb2]);
    assert.deepEqual((await ok(as(star, 'GET', `/api/v2/experiences/${ids.own}`))).knowledgeBaseIds, [ids.kb1]);
    const session = await ok(as(star, 'GET', `/api/v2/sessions/${ids.otherSession}`));
    assert.deepEqual([session.status, session.metadata, session.messages[0].feedback], ['active', {}, null]);
    const hook = await ok(as(star, 'GET', `${HOOKS}/${ids.endpoint}`));
    assert.deepEqual([hook.url, hook.updatedAt], [receiver.url, hook.createdAt]);
    assert.equal((await ok(as(star, 'GET', HOOKS))).total, 1);
    assert.equal((await ok(as(star, 'GET', '/api/v2/knowledge-bases'))).total, 2);
  });

  test('the restricted token still reaches KB1\'s own objects', async () => {
    const job = await as(restricted, 'GET', `${JOBS}/${ids.done1}?includePayload=true`);
    assert.equal(job.status, 200, job.text);
    assert.ok(job.text.includes('aardvark-guide'));
    assertNothingOfKb2(job);
    // Found, unlike KB2's: its 409 says what a retry of it would meet.
    const retry = await as(restricted, 'POST', `${JOBS}/${ids.done1}/retry`);
    assert.equal(assertExactError(retry, 409, `/v2/data-ingestion/jobs/${ids.done1}/retry`), 'The job has no failed or unprocessed records to retry.');
    await ok(as(restricted, 'DELETE', `${JOBS}/${ids.pending1}`), 204);
    assert.equal((await ok(as(restricted, 'GET', `/api/v2/experiences/${ids.own}`))).id, ids.own);
    const transcript = await as(restricted, 'GET', `/api/v2/sessions/${ids.ownSession}`);
    assert.equal(transcript.status, 200, transcript.text);
    assertNothingOfKb2(transcript);
    assert.equal((await ok(as(restricted, 'GET', `/api/v2/insights?experienceId=${ids.own}`))).totals.queries, 1);
    assert.equal((await ok(as(restricted, 'GET', `${HOOKS}/${ids.endpoint}/deliveries/${ids.ownDelivery}`))).jobId, ids.done1);
    assert.equal((await ok(as(restricted, 'GET', HOOKS))).webhooks[0].id, ids.endpoint);
    const answer = await as(restricted, 'POST', '/api/v2/query', { text: 'What is an aardvark?', experienceId: ids.own });
    assert.equal(answer.status, 200, answer.text);
    assertNothingOfKb2(answer);
    assert.equal((await ok(as(restricted, 'POST', '/api/v2/sessions', { experienceId: ids.own }), 201)).experienceId, ids.own);
  });
});
