import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { assertExactError } from '../../../test/assert-error.ts';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../test/fake-openai.ts';
import { ADMIN_KEY, engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { createKnowledgeBase, ingest } from '../../../test/ingestion.ts';
import { parseEvents } from '../../../test/sse.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const TOKEN_SECRET = 'test-token-secret-0123456789-0123456789';

const records = [
  {
    id: 'refunds',
    title: 'Refund policy',
    content: 'Refunds are paid back to the original card within 14 days. A refund can be requested from the billing page for any invoice of the last 60 days.',
    url: 'https://help.example.com/refunds',
  },
  {
    id: 'passwords',
    title: 'Resetting a password',
    content: 'To reset a password, open the sign-in page and choose "Forgot password". The reset link in the e-mail expires after 30 minutes.',
    url: 'https://help.example.com/passwords',
  },
  {
    id: 'exports',
    title: 'Exporting data',
    content: 'Workspace owners can export all data as a ZIP archive of CSV files from Settings, Export. Large exports are e-mailed when ready.',
  },
];

describe(`POST /api/v2/query (${engine})`, () => {
  let fake: FakeOpenAi;
  let server: TestServer;
  let workspaceId: string;
  let token: string;
  let knowledgeBaseId: string;
  let publicExperience: string;
  let privateExperience: string;

  async function createExperience(body: Record<string, unknown>, as = token): Promise<string> {
    const answer = await server.request('POST', '/api/v2/experiences', { token: as, body: { name: 'help', knowledgeBaseIds: [knowledgeBaseId], ...body } });
    assert.equal(answer.status, 201, answer.text);
    return answer.body.id;
  }
  const ask = (body: Record<string, unknown>, options: { token?: string; headers?: Record<string, string> } = {}) =>
    server.request('POST', '/api/v2/query', { body, ...options });

  before(async () => {
    fake = await startFakeOpenAi();
    server = await startTestServer(fakeEmbeddingsEnv(fake));
    ({ workspaceId, token } = await server.tenant(['*']));
    knowledgeBaseId = await createKnowledgeBase(server, token);
    await ingest(server, token, knowledgeBaseId, records);
    publicExperience = await createExperience({
      actions: [{ id: 'human', label: 'Talk to a person', action: { type: 'trigger_handover', agentType: 'billing' } }],
    });
    privateExperience = await createExperience({ requireAuth: true });
  });
  after(async () => {
    await server?.close();
    await fake?.close();
  });

  test('a question answered from the knowledge base: the spec\'s fields, a cited source and a new session', async () => {
    const answer = await ask({ text: 'How long does a refund take to reach my card?', experienceId: publicExperience, userId: 'Ada@Example.COM', metadata: { page: '/pricing' } });
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(Object.keys(answer.body).sort(), ['actions', 'answer', 'format', 'queryId', 'sessionId', 'sources', 'timestamp']);
    assert.match(answer.body.queryId, UUID);
    assert.match(answer.body.sessionId, UUID);
    assert.equal(new Date(answer.body.timestamp).toISOString(), answer.body.timestamp);
    assert.equal(answer.body.format, 'markdown');
    assert.equal(answer.body.sources[0].title, 'Refund policy');
    assert.equal(answer.body.sources[0].url, 'https://help.example.com/refunds');
    assert.match(answer.body.answer, /within 14 days\. \[1\]/);
    assert.deepEqual(
      answer.body.actions.map((action: any) => action.action),
      [{ type: 'open_url', url: 'https://help.example.com/refunds' }, ...answer.body.actions.slice(1).map((action: any) => action.action)],
    );
    assert.ok(!answer.body.actions.some((action: any) => action.id === 'human'), 'no handover for an answered question');
    // The session keeps the lower-cased userId: the same user in another case continues it.
    const again = await ask({ text: 'Can I request a refund for an old invoice?', experienceId: publicExperience, sessionId: answer.body.sessionId, userId: 'ADA@example.com' });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.sessionId, answer.body.sessionId);
    assert.match(again.body.answer, /last 60 days/);
  });

  test('a question the knowledge base cannot answer: the fallback message and the handover action, nothing made up', async () => {
    const answer = await ask({ text: 'Which football team won the 1998 world cup final?', experienceId: publicExperience });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.answer, 'Sorry, I could not find an answer to that in the knowledge base.');
    assert.deepEqual(answer.body.sources, []);
    assert.deepEqual(answer.body.actions, [{ id: 'human', label: 'Talk to a person', action: { type: 'trigger_handover', agentType: 'billing' } }]);
  });

  test('asking for a person brings the handover action even beside an answer', async () => {
    const answer = await ask({ text: 'I want to talk to a human about my refund', experienceId: publicExperience });
    assert.equal(answer.status, 200, answer.text);
    assert.ok(answer.body.actions.some((action: any) => action.id === 'human'), JSON.stringify(answer.body.actions));
  });

  test('Accept: text/event-stream streams meta, deltas, sources, actions and done, in that order', async () => {
    const answer = await ask({ text: 'How do I reset my password?', experienceId: publicExperience }, { headers: { accept: 'text/event-stream' } });
    assert.equal(answer.status, 200, answer.text);
    assert.match(answer.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = parseEvents(answer.text);
    const names = events.map((item) => item.event);
    assert.equal(names[0], 'meta');
    assert.deepEqual(names.slice(-3), ['sources', 'actions', 'done']);
    assert.ok(names.slice(1, -3).length >= 1 && names.slice(1, -3).every((name) => name === 'delta'), names.join(','));
    const done = events.at(-1)!.data;
    assert.deepEqual(events[0]!.data, { queryId: done.queryId, sessionId: done.sessionId, timestamp: events[0]!.data.timestamp });
    assert.equal(events.filter((item) => item.event === 'delta').map((item) => item.data.text).join(''), done.answer);
    assert.deepEqual(events.at(-3)!.data, { sources: done.sources });
    assert.deepEqual(events.at(-2)!.data, { actions: done.actions });
    assert.match(done.answer, /choose "Forgot password"/);
    // The streamed query is stored like any other: feedback on it is accepted.
    const feedback = await server.request('POST', `/api/v2/queries/${done.queryId}/feedback`, { body: { rating: 'up' } });
    assert.equal(feedback.status, 204, feedback.text);
  });

  test('an error before the stream starts is an ordinary JSON error', async () => {
    const answer = await ask({ text: 'hello', experienceId: UNKNOWN_ID }, { headers: { accept: 'text/event-stream' } });
    assertExactError(answer, 404, '/v2/query');
    assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
  });

  test('400: malformed JSON, missing text or experienceId, non-UUID ids, bad userIds', async () => {
    const malformed = await server.request('POST', '/api/v2/query', { raw: '{"text": "hi", ', headers: { 'content-type': 'application/json' } });
    assertExactError(malformed, 400, '/v2/query');
    const cases: [Record<string, unknown>, string][] = [
      [{ experienceId: publicExperience }, ''],
      [{ text: 'hello' }, ''],
      [{ text: '', experienceId: publicExperience }, '/text'],
      [{ text: '   ', experienceId: publicExperience }, '/text'],
      [{ text: 'x'.repeat(4001), experienceId: publicExperience }, '/text'],
      [{ text: 'hello', experienceId: 'not-a-uuid' }, '/experienceId'],
      [{ text: 'hello', experienceId: publicExperience, sessionId: '1234' }, '/sessionId'],
      [{ text: 'hello', experienceId: publicExperience, userId: '' }, '/userId'],
      [{ text: 'hello', experienceId: publicExperience, userId: 'ada lovelace' }, '/userId'],
      [{ text: 'hello', experienceId: publicExperience, userId: 'ada\tlovelace' }, '/userId'],
      [{ text: 'hello', experienceId: publicExperience, userId: 'ada\u0007' }, '/userId'],
      [{ text: 'hello', experienceId: publicExperience, userId: 'a'.repeat(256) }, '/userId'],
      [{ text: 'hello', experienceId: publicExperience, timestamp: 'yesterday' }, '/timestamp'],
      [{ text: 'hello', experienceId: publicExperience, metadata: 'page=1' }, '/metadata'],
    ];
    for (const [body, pointer] of cases) {
      const answer = await ask(body);
      assert.equal(answer.status, 400, `${JSON.stringify(body).slice(0, 80)}: ${answer.text}`);
      assert.equal(answer.body.path, '/v2/query');
      assert.ok(answer.body.errors.length >= 1);
      if (pointer) assert.equal(answer.body.errors[0].path, pointer, answer.text);
    }
    const longest = await ask({ text: 'hello', experienceId: publicExperience, userId: 'a'.repeat(255) });
    assert.equal(longest.status, 200, longest.text);
  });

  test('400: the experience\'s workspace is not active', async () => {
    const other = await server.tenant(['*']);
    const kb = await createKnowledgeBase(server, other.token);
    const created = await server.request('POST', '/api/v2/experiences', { token: other.token, body: { name: 'x', knowledgeBaseIds: [kb] } });
    const suspended = await server.request('PATCH', `/api/v2/admin/workspaces/${other.workspaceId}`, { token: ADMIN_KEY, body: { status: 'suspended' } });
    assert.equal(suspended.status, 200, suspended.text);
    const answer = await ask({ text: 'hello', experienceId: created.body.id });
    assert.equal(assertExactError(answer, 400, '/v2/query'), `The workspace of experience ${created.body.id} is not active.`);
  });

  test('401: the experience requires a token and none, an invalid one or an expired one was sent', async () => {
    const none = await ask({ text: 'hello', experienceId: privateExperience });
    assert.equal(assertExactError(none, 401, '/v2/query'), `Experience ${privateExperience} requires a bearer access token with the scope query:execute.`);
    const forged = await ask({ text: 'hello', experienceId: privateExperience }, { token: `${token.slice(0, -4)}AAAA` });
    assertExactError(forged, 401, '/v2/query');
    const expired = await new SignJWT({ ws: workspaceId, cid: UNKNOWN_ID, scope: '*' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer('lore')
      .setSubject('someone')
      .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(new TextEncoder().encode(TOKEN_SECRET));
    for (const experienceId of [privateExperience, publicExperience]) {
      const answer = await ask({ text: 'hello', experienceId }, { token: expired });
      assert.equal(assertExactError(answer, 401, '/v2/query'), 'The access token has expired.');
    }
    const allowed = await ask({ text: 'How do I reset my password?', experienceId: privateExperience }, { token: await server.token(workspaceId, ['query:execute']) });
    assert.equal(allowed.status, 200, allowed.text);
  });

  test('a token without query:execute: 403 with required and missing on a public experience, 401 where a token is required', async () => {
    const reader = await server.token(workspaceId, ['knowledge-bases:read']);
    const onPublic = await ask({ text: 'hello', experienceId: publicExperience }, { token: reader });
    assertExactError(onPublic, 403, '/v2/query', { required: ['query:execute'], missing: ['query:execute'] });
    const onPrivate = await ask({ text: 'hello', experienceId: privateExperience }, { token: reader });
    assertExactError(onPrivate, 401, '/v2/query', { required: ['query:execute'], missing: ['query:execute'] });
  });

  test('403: a token of another workspace, even with query:execute', async () => {
    const other = await server.tenant(['query:execute']);
    for (const experienceId of [publicExperience, privateExperience]) {
      const answer = await ask({ text: 'hello', experienceId }, { token: other.token });
      assert.equal(assertExactError(answer, 403, '/v2/query'), `The access token belongs to another workspace than experience ${experienceId}.`);
    }
  });

  test('404: an experience that does not exist or was deleted', async () => {
    const missing = await ask({ text: 'hello', experienceId: UNKNOWN_ID });
    assert.equal(assertExactError(missing, 404, '/v2/query'), `Experience ${UNKNOWN_ID} does not exist.`);
    const doomed = await createExperience({});
    assert.equal((await server.request('DELETE', `/api/v2/experiences/${doomed}`, { token })).status, 204);
    assertExactError(await ask({ text: 'hello', experienceId: doomed }), 404, '/v2/query');
  });

  test('sessions: unknown or of another experience 404, another userId 403, completed 409', async () => {
    const first = await ask({ text: 'How do I export data?', experienceId: publicExperience, userId: 'grace' });
    assert.equal(first.status, 200, first.text);
    const { sessionId } = first.body;
    assertExactError(await ask({ text: 'hello', experienceId: publicExperience, sessionId: UNKNOWN_ID }), 404, '/v2/query');
    const elsewhere = await createExperience({});
    assertExactError(await ask({ text: 'hello', experienceId: elsewhere, sessionId, userId: 'grace' }), 404, '/v2/query');
    for (const userId of ['ada', undefined]) {
      const answer = await ask({ text: 'hello', experienceId: publicExperience, sessionId, ...(userId ? { userId } : {}) });
      assert.equal(assertExactError(answer, 403, '/v2/query'), `Session ${sessionId} belongs to another userId than the request's.`);
    }
    const completed = await server.request('POST', `/api/v2/sessions/${sessionId}/complete`, { token });
    assert.equal(completed.status, 200, completed.text);
    const refused = await ask({ text: 'hello', experienceId: publicExperience, sessionId, userId: 'grace' });
    assert.equal(assertExactError(refused, 409, '/v2/query'), `Session ${sessionId} is completed and takes no new queries.`);
  });

  test('feedback: 204 and replaced by a later rating; 400 for a bad rating; 404 for an unknown query', async () => {
    const answer = await ask({ text: 'How do I export data?', experienceId: publicExperience });
    const path = `/api/v2/queries/${answer.body.queryId}/feedback`;
    assert.equal((await server.request('POST', path, { body: { rating: 'down', comment: 'too short' } })).status, 204);
    assert.equal((await server.request('POST', path, { body: { rating: 'up' } })).status, 204);
    const transcript = await server.request('GET', `/api/v2/sessions/${answer.body.sessionId}`, { token });
    assert.equal(transcript.status, 200, transcript.text);
    assert.deepEqual(
      transcript.body.messages.map((message: any) => [message.queryId, message.feedback?.rating, message.feedback?.comment]),
      [[answer.body.queryId, 'up', null]],
    );
    const bad = await server.request('POST', path, { body: { rating: 'meh' } });
    assertExactError(bad, 400, `/v2/queries/${answer.body.queryId}/feedback`, { errors: bad.body.errors });
    assertExactError(await server.request('POST', `/api/v2/queries/${UNKNOWN_ID}/feedback`, { body: { rating: 'up' } }), 404, `/v2/queries/${UNKNOWN_ID}/feedback`);
  });
});
