import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError, assertExactError } from '../../../test/assert-error.ts';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../test/fake-openai.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { createKnowledgeBase, ingest } from '../../../test/ingestion.ts';
import { seedSession, type SeededQuery } from '../../../test/seed-queries.ts';
import { MAX_METADATA_BYTES } from './sessions.schemas.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

type Tenant = { workspaceId: string; token: string };

describe(`sessions (${engine})`, () => {
  let server: TestServer;
  let fake: FakeOpenAi;
  let tenantA: Tenant;
  let tenantB: Tenant;
  let experienceOfA: string;
  let secondExperienceOfA: string;
  let experienceOfB: string;
  let deletedExperienceOfA: string;

  const call = (token: string | undefined, method: string, path: string, body?: unknown) => server.request(method, path, { token, body });

  async function experience(token: string, name: string): Promise<string> {
    const answer = await call(token, 'POST', '/api/v2/experiences', { name });
    assert.equal(answer.status, 201, answer.text);
    return answer.body.id;
  }

  async function createSession(token: string, body: Record<string, unknown>): Promise<Record<string, any>> {
    const answer = await call(token, 'POST', '/api/v2/sessions', body);
    assert.equal(answer.status, 201, answer.text);
    return answer.body;
  }

  before(async () => {
    // Embeddings from a local fake keep the transcript test (which ingests and queries) fast.
    fake = await startFakeOpenAi();
    server = await startTestServer(fakeEmbeddingsEnv(fake));
    tenantA = await server.tenant();
    tenantB = await server.tenant();
    experienceOfA = await experience(tenantA.token, 'widget');
    secondExperienceOfA = await experience(tenantA.token, 'help centre');
    experienceOfB = await experience(tenantB.token, 'other workspace');
    deletedExperienceOfA = await experience(tenantA.token, 'gone');
    assert.equal((await call(tenantA.token, 'DELETE', `/api/v2/experiences/${deletedExperienceOfA}`)).status, 204);
  });
  after(async () => {
    await server.close();
    await fake.close();
  });

  test('POST with every field answers 201 with the session; GET reads it back with no messages', async () => {
    const metadata = { source: 'widget', device: { kind: 'mobile', width: 390 }, tags: ['pricing'], campaign: null };
    const created = await createSession(tenantA.token, { experienceId: experienceOfA, userId: 'Alice.Martin@Example.COM', metadata });
    const { id, createdAt, updatedAt, ...fields } = created;
    assert.match(id, UUID);
    assert.equal(new Date(createdAt).toISOString(), createdAt);
    assert.equal(updatedAt, createdAt);
    assert.deepEqual(fields, {
      experienceId: experienceOfA,
      userId: 'alice.martin@example.com',
      metadata,
      status: 'active',
      queryCount: 0,
      lastQueryAt: null,
      completedAt: null,
    });
    const read = await call(tenantA.token, 'GET', `/api/v2/sessions/${id}`);
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(read.body, { ...created, messages: [] });
  });

  test('POST without userId and metadata, or with userId null, creates an anonymous session with {} metadata', async () => {
    for (const body of [{ experienceId: experienceOfA }, { experienceId: experienceOfA, userId: null }]) {
      const created = await createSession(tenantA.token, body);
      assert.equal(created.userId, null);
      assert.deepEqual(created.metadata, {});
      assert.deepEqual((await call(tenantA.token, 'GET', `/api/v2/sessions/${created.id}`)).body, { ...created, messages: [] });
    }
  });

  test('POST accepts a userId of 255 characters, an e-mail address and a UUID, lower-cased', async () => {
    const cases: Array<[string, string]> = [
      ['u'.repeat(255), 'u'.repeat(255)],
      ['Team+Sales@Example.org', 'team+sales@example.org'],
      ['3F2504E0-4F89-41D3-9A0C-0305E82C3301', '3f2504e0-4f89-41d3-9a0c-0305e82c3301'],
      ['ÉLODIE', 'élodie'],
    ];
    for (const [userId, stored] of cases) {
      assert.equal((await createSession(tenantA.token, { experienceId: experienceOfA, userId })).userId, stored);
    }
  });

  test('POST with a bad userId is a 400 naming /userId, and nothing is created', async () => {
    const before = (await call(tenantA.token, 'GET', '/api/v2/sessions?limit=1')).body.total;
    const patternError = { path: '/userId', message: 'must not contain whitespace or control characters' };
    const cases: Array<[unknown, { path: string; message: string } | Array<{ path: string; message: string }>]> = [
      ['', { path: '/userId', message: 'must not be empty' }],
      ['u'.repeat(256), { path: '/userId', message: 'must have at most 255 characters (has 256)' }],
      ['alice martin', patternError],
      [' alice', patternError],
      ['alice\t', patternError],
      ['alice\nmartin', patternError],
      ['alice\u00a0martin', patternError],
      ['alice\u2003martin', patternError],
      // A NUL is refused for every string by the input guard, before the field's own pattern.
      ['alice\u0000', { path: '/userId', message: 'must not contain NUL characters or unpaired surrogates' }],
      ['alice\u0007', patternError],
      ['alice\u007f', patternError],
      ['alice\u0085', patternError],
      [42, { path: '/userId', message: 'must be a string or null' }],
    ];
    for (const [userId, error] of cases) {
      const answer = await call(tenantA.token, 'POST', '/api/v2/sessions', { experienceId: experienceOfA, userId });
      assertExactError(answer, 400, '/v2/sessions', { errors: Array.isArray(error) ? error : [error] });
    }
    assert.equal((await call(tenantA.token, 'GET', '/api/v2/sessions?limit=1')).body.total, before);
  });

  test('POST with a bad body is a 400 at the offending field', async () => {
    const newSessionFields = 'experienceId, userId, metadata';
    const cases: Array<[unknown, { path: string; message: string }]> = [
      [{}, { path: '/experienceId', message: 'is required' }],
      [{ experienceId: 'not-a-uuid' }, { path: '/experienceId', message: 'must be a UUID' }],
      [{ experienceId: experienceOfA, metadata: 'source=widget' }, { path: '/metadata', message: 'must be an object' }],
      [{ experienceId: experienceOfA, metadata: ['widget'] }, { path: '/metadata', message: 'must be an object' }],
      [{ experienceId: experienceOfA, sessionId: UNKNOWN_ID }, { path: '/sessionId', message: `is not a known field (known fields: ${newSessionFields})` }],
      [{ experienceId: experienceOfA, status: 'completed' }, { path: '/status', message: `is not a known field (known fields: ${newSessionFields})` }],
    ];
    for (const [body, error] of cases) {
      assertExactError(await call(tenantA.token, 'POST', '/api/v2/sessions', body), 400, '/v2/sessions', { errors: [error] });
    }
    const malformed = await server.request('POST', '/api/v2/sessions', {
      token: tenantA.token,
      raw: '{"experienceId": ',
      headers: { 'content-type': 'application/json' },
    });
    assertExactError(malformed, 400, '/v2/sessions');
  });

  test(`metadata up to ${MAX_METADATA_BYTES} bytes of JSON is accepted; one byte more is a 400`, async () => {
    // {"note":"…"} is 11 bytes around the note.
    const largest = { note: 'x'.repeat(MAX_METADATA_BYTES - 11) };
    assert.equal(Buffer.byteLength(JSON.stringify(largest)), MAX_METADATA_BYTES);
    const created = await createSession(tenantA.token, { experienceId: experienceOfA, metadata: largest });
    assert.deepEqual(created.metadata, largest);

    const tooLarge = { note: `${largest.note}x` };
    const error = { path: '/metadata', message: `must have at most ${MAX_METADATA_BYTES} bytes as JSON (has ${MAX_METADATA_BYTES + 1})` };
    const refused = await call(tenantA.token, 'POST', '/api/v2/sessions', { experienceId: experienceOfA, metadata: tooLarge });
    assert.equal(assertExactError(refused, 400, '/v2/sessions', { errors: [error] }), `metadata ${error.message}.`);
    // Characters count as the UTF-8 bytes they take: 8,198 characters, 16,385 bytes.
    const accented = await call(tenantA.token, 'POST', '/api/v2/sessions', { experienceId: experienceOfA, metadata: { note: 'é'.repeat(8187) } });
    assertError(accented, 400, '/v2/sessions', ['/metadata']);

    const patched = await call(tenantA.token, 'PATCH', `/api/v2/sessions/${created.id}`, { metadata: tooLarge });
    assertExactError(patched, 400, `/v2/sessions/${created.id}`, { errors: [error] });
    assert.deepEqual((await call(tenantA.token, 'GET', `/api/v2/sessions/${created.id}`)).body.metadata, largest);
  });

  test('POST for an unknown, deleted or other workspace\'s experience is a 404', async () => {
    for (const experienceId of [UNKNOWN_ID, deletedExperienceOfA, experienceOfB]) {
      const answer = await call(tenantA.token, 'POST', '/api/v2/sessions', { experienceId });
      const message = assertExactError(answer, 404, '/v2/sessions');
      assert.equal(message, `Experience ${experienceId} does not exist.`);
    }
  });

  test('every route answers 401 without a token or with an invalid one', async () => {
    const routes: Array<[string, string, unknown]> = [
      ['POST', '/api/v2/sessions', { experienceId: experienceOfA }],
      ['GET', '/api/v2/sessions', undefined],
      ['GET', `/api/v2/sessions/${UNKNOWN_ID}`, undefined],
      ['PATCH', `/api/v2/sessions/${UNKNOWN_ID}`, { metadata: {} }],
      ['POST', `/api/v2/sessions/${UNKNOWN_ID}/complete`, undefined],
    ];
    for (const [method, path, body] of routes) {
      const missing = await call(undefined, method, path, body);
      assert.equal(assertExactError(missing, 401, path.slice(4)), 'An Authorization header with a bearer token is required.');
      assertExactError(await call('not.a.token', method, path, body), 401, path.slice(4));
    }
  });

  test('a token lacking the route\'s scope is a 403 with required and missing', async () => {
    const created = await createSession(tenantA.token, { experienceId: experienceOfA, metadata: { kept: true } });
    const readOnly = await server.token(tenantA.workspaceId, ['sessions:read', 'experiences:write']);
    const writeOnly = await server.token(tenantA.workspaceId, ['sessions:write']);
    const writes: Array<[string, string, unknown]> = [
      ['POST', '/api/v2/sessions', { experienceId: experienceOfA }],
      ['PATCH', `/api/v2/sessions/${created.id}`, { metadata: { changed: true } }],
      ['POST', `/api/v2/sessions/${created.id}/complete`, undefined],
    ];
    for (const [method, path, body] of writes) {
      const answer = await call(readOnly, method, path, body);
      const message = assertExactError(answer, 403, path.slice(4), { required: ['sessions:write'], missing: ['sessions:write'] });
      assert.equal(message, 'The access token lacks the scope sessions:write.');
    }
    for (const path of ['/api/v2/sessions', `/api/v2/sessions/${created.id}`]) {
      const answer = await call(writeOnly, 'GET', path);
      assertExactError(answer, 403, path.slice(4), { required: ['sessions:read'], missing: ['sessions:read'] });
    }
    // The refused writes changed nothing.
    assert.deepEqual((await call(readOnly, 'GET', `/api/v2/sessions/${created.id}`)).body, { ...created, messages: [] });
  });

  test('a session of another workspace, or an unknown one, is a 404 on every route and stays unchanged', async () => {
    const ofB = await createSession(tenantB.token, { experienceId: experienceOfB, userId: 'bob', metadata: { owner: 'b' } });
    for (const id of [ofB.id, UNKNOWN_ID]) {
      const path = `/api/v2/sessions/${id}`;
      const message = assertExactError(await call(tenantA.token, 'GET', path), 404, path.slice(4));
      assert.equal(message, `Session ${id} does not exist.`);
      assertExactError(await call(tenantA.token, 'PATCH', path, { metadata: { owner: 'a' } }), 404, path.slice(4));
      assertExactError(await call(tenantA.token, 'POST', `${path}/complete`), 404, `${path.slice(4)}/complete`);
    }
    assert.deepEqual((await call(tenantB.token, 'GET', `/api/v2/sessions/${ofB.id}`)).body, { ...ofB, messages: [] });
    const listedByA = await call(tenantA.token, 'GET', `/api/v2/sessions?experienceId=${experienceOfB}`);
    assert.deepEqual(listedByA.body, { total: 0, sessions: [] });
  });

  test('an id that is not a UUID is a 400 at params:/id', async () => {
    const error = { path: 'params:/id', message: 'must be a UUID' };
    assertExactError(await call(tenantA.token, 'GET', '/api/v2/sessions/42'), 400, '/v2/sessions/42', { errors: [error] });
    assertExactError(await call(tenantA.token, 'PATCH', '/api/v2/sessions/42', { metadata: {} }), 400, '/v2/sessions/42', { errors: [error] });
    assertExactError(await call(tenantA.token, 'POST', '/api/v2/sessions/42/complete'), 400, '/v2/sessions/42/complete', { errors: [error] });
  });

  test('PATCH replaces the metadata and changes nothing else', async () => {
    const created = await createSession(tenantA.token, { experienceId: experienceOfA, userId: 'carol', metadata: { page: '/pricing', device: 'desktop' } });
    const path = `/api/v2/sessions/${created.id}`;
    const patched = await call(tenantA.token, 'PATCH', path, { metadata: { resolved: true } });
    assert.equal(patched.status, 200, patched.text);
    assert.ok(Date.parse(patched.body.updatedAt) >= Date.parse(created.updatedAt));
    assert.deepEqual({ ...patched.body, updatedAt: created.updatedAt }, { ...created, metadata: { resolved: true } });
    assert.deepEqual((await call(tenantA.token, 'GET', path)).body, { ...patched.body, messages: [] });

    const emptied = await call(tenantA.token, 'PATCH', path, { metadata: {} });
    assert.deepEqual(emptied.body.metadata, {});
  });

  test('PATCH with a bad body is a 400 and leaves the session unchanged', async () => {
    const created = await createSession(tenantA.token, { experienceId: experienceOfA, metadata: { step: 1 } });
    const path = `/api/v2/sessions/${created.id}`;
    const cases: Array<[unknown, { path: string; message: string }]> = [
      [{}, { path: '/metadata', message: 'is required' }],
      [{ metadata: null }, { path: '/metadata', message: 'must be an object' }],
      [{ metadata: 'x' }, { path: '/metadata', message: 'must be an object' }],
      [{ metadata: {}, userId: 'mallory' }, { path: '/userId', message: 'is not a known field (known fields: metadata)' }],
      [{ metadata: {}, status: 'active' }, { path: '/status', message: 'is not a known field (known fields: metadata)' }],
    ];
    for (const [body, error] of cases) {
      assertExactError(await call(tenantA.token, 'PATCH', path, body), 400, path.slice(4), { errors: [error] });
    }
    assert.deepEqual((await call(tenantA.token, 'GET', path)).body, { ...created, messages: [] });
  });

  test('complete marks the session completed; completing it again answers it unchanged; its metadata stays editable', async () => {
    const created = await createSession(tenantA.token, { experienceId: experienceOfA, userId: 'dave' });
    const path = `/api/v2/sessions/${created.id}`;
    const completed = await call(tenantA.token, 'POST', `${path}/complete`);
    assert.equal(completed.status, 200, completed.text);
    const { completedAt } = completed.body;
    assert.equal(new Date(completedAt).toISOString(), completedAt);
    assert.ok(Date.parse(completedAt) >= Date.parse(created.createdAt));
    assert.deepEqual(completed.body, { ...created, status: 'completed', completedAt, updatedAt: completedAt });

    const again = await call(tenantA.token, 'POST', `${path}/complete`);
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(again.body, completed.body);
    assert.deepEqual((await call(tenantA.token, 'GET', path)).body, { ...completed.body, messages: [] });

    const tagged = await call(tenantA.token, 'PATCH', path, { metadata: { outcome: 'resolved' } });
    assert.equal(tagged.status, 200, tagged.text);
    assert.deepEqual({ ...tagged.body, updatedAt: completedAt }, { ...completed.body, metadata: { outcome: 'resolved' } });
  });

  describe('listing', () => {
    let tenant: Tenant;
    let first: string;
    let second: string;
    // Newest first, as the list answers them.
    let all: Array<Record<string, any>>;

    before(async () => {
      tenant = await server.tenant();
      first = await experience(tenant.token, 'first');
      second = await experience(tenant.token, 'second');
      const inputs = [
        { experienceId: first, userId: 'Alice' },
        { experienceId: first, userId: 'bob' },
        { experienceId: second, userId: 'alice' },
        { experienceId: first },
        { experienceId: second, userId: 'ALICE' },
      ];
      const created = [];
      for (const input of inputs) created.push(await createSession(tenant.token, input));
      assert.equal((await call(tenant.token, 'POST', `/api/v2/sessions/${created[1]!.id}/complete`)).status, 200);
      assert.equal((await call(tenant.token, 'POST', `/api/v2/sessions/${created[4]!.id}/complete`)).status, 200);
      all = [];
      for (const session of created.reverse()) all.push((await call(tenant.token, 'GET', `/api/v2/sessions/${session.id}`)).body);
      const names = { [first]: 'first', [second]: 'second' };
      for (const session of all) {
        delete session.messages;
        Object.assign(session, { experienceName: names[session.experienceId], firstQuestion: null });
      }
    });

    test('without filters: every session of the workspace, newest first, with the default page of 20', async () => {
      const answer = await call(tenant.token, 'GET', '/api/v2/sessions');
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(answer.body, { total: 5, sessions: all });
    });

    test('filters by experience, user (any case), status, and any combination of them', async () => {
      const ids = (sessions: Array<Record<string, any>>) => sessions.map((session) => session.id);
      const cases: Array<[string, (session: Record<string, any>) => boolean]> = [
        [`experienceId=${first}`, (session) => session.experienceId === first],
        [`experienceId=${second}`, (session) => session.experienceId === second],
        ['userId=aLiCe', (session) => session.userId === 'alice'],
        ['userId=bob', (session) => session.userId === 'bob'],
        ['userId=nobody', () => false],
        ['status=active', (session) => session.status === 'active'],
        ['status=completed', (session) => session.status === 'completed'],
        [`experienceId=${second}&userId=ALICE&status=completed`, (session) => session.experienceId === second && session.status === 'completed'],
        [`experienceId=${first}&status=active`, (session) => session.experienceId === first && session.status === 'active'],
        [`experienceId=${UNKNOWN_ID}`, () => false],
      ];
      for (const [query, keep] of cases) {
        const expected = all.filter(keep);
        const answer = await call(tenant.token, 'GET', `/api/v2/sessions?${query}`);
        assert.equal(answer.status, 200, `${query}: ${answer.text}`);
        assert.deepEqual({ total: answer.body.total, ids: ids(answer.body.sessions) }, { total: expected.length, ids: ids(expected) }, query);
      }
      // Sanity of the fixture: the filters above each select a proper, non-empty subset.
      assert.equal(all.filter((session) => session.userId === 'alice').length, 3);
      assert.equal(all.filter((session) => session.status === 'completed').length, 2);
    });

    test('pages with limit and offset; total counts every match', async () => {
      const pages = [];
      for (const offset of [0, 2, 4]) {
        const answer = await call(tenant.token, 'GET', `/api/v2/sessions?limit=2&offset=${offset}`);
        assert.equal(answer.status, 200, answer.text);
        assert.equal(answer.body.total, 5);
        pages.push(...answer.body.sessions);
      }
      assert.deepEqual(pages, all);
      assert.deepEqual((await call(tenant.token, 'GET', '/api/v2/sessions?offset=5')).body, { total: 5, sessions: [] });
      const filtered = await call(tenant.token, 'GET', '/api/v2/sessions?userId=alice&limit=1&offset=1');
      assert.deepEqual(filtered.body, { total: 3, sessions: [all.filter((session) => session.userId === 'alice')[1]] });
      assert.equal((await call(tenant.token, 'GET', '/api/v2/sessions?limit=100')).body.sessions.length, 5);
    });

    test('out-of-range or malformed parameters are a 400 naming the parameter', async () => {
      const cases: Array<[string, { path: string; message: string }]> = [
        ['limit=0', { path: 'querystring:/limit', message: 'must be at least 1' }],
        ['limit=101', { path: 'querystring:/limit', message: 'must be at most 100' }],
        ['limit=ten', { path: 'querystring:/limit', message: 'must be an integer' }],
        ['offset=-1', { path: 'querystring:/offset', message: 'must be at least 0' }],
        ['offset=1.5', { path: 'querystring:/offset', message: 'must be an integer' }],
        ['experienceId=widget', { path: 'querystring:/experienceId', message: 'must be a UUID' }],
        ['status=open', { path: 'querystring:/status', message: 'must be one of: active, completed' }],
        ['userId=alice%20martin', { path: 'querystring:/userId', message: 'must not contain whitespace or control characters' }],
        [`userId=${'u'.repeat(256)}`, { path: 'querystring:/userId', message: 'must have at most 255 characters (has 256)' }],
        ['user_id=alice', { path: 'querystring:/user_id', message: 'is not a known field (known fields: experienceId, userId, status, feedback, unanswered, limit, offset)' }],
        ['feedback=down-vote', { path: 'querystring:/feedback', message: 'must be one of: down, up' }],
        ['unanswered=yes', { path: 'querystring:/unanswered', message: 'must be a boolean' }],
        ['feedbacks=down', { path: 'querystring:/feedbacks', message: 'is not a known field (known fields: experienceId, userId, status, feedback, unanswered, limit, offset)' }],
      ];
      for (const [query, error] of cases) {
        assertExactError(await call(tenant.token, 'GET', `/api/v2/sessions?${query}`), 400, '/v2/sessions', { errors: [error] });
      }
      // The empty string is too short and matches no pattern: one message for the field, the first.
      const empty = await call(tenant.token, 'GET', '/api/v2/sessions?userId=');
      const message = assertExactError(empty, 400, '/v2/sessions', { errors: [{ path: 'querystring:/userId', message: 'must not be empty' }] });
      assert.equal(message, 'Query parameter userId must not be empty.');
    });
  });

  describe('first questions, and the feedback and unanswered filters', () => {
    let tenant: Tenant;
    let widget: string;
    let help: string;
    // The seeded sessions, by what they hold.
    const ids: Record<string, string> = {};

    before(async () => {
      tenant = await server.tenant();
      widget = await experience(tenant.token, 'Pricing widget');
      help = await experience(tenant.token, 'Help centre');
      const db = server.context.db;
      const seed = async (name: string, experienceId: string, queries: SeededQuery[]) => {
        ids[name] = (await seedSession(db, tenant.workspaceId, experienceId, queries)).sessionId;
      };
      // Oldest first; the list answers them newest first.
      await seed('rated down', widget, [
        { text: 'How much is the pro plan?', grounded: true, at: '2026-11-01T09:00:00.000Z' },
        { text: 'And for teams?', grounded: true, at: '2026-11-01T09:01:00.000Z', rating: 'down' },
      ]);
      await seed('unanswered', help, [
        { text: 'Do you ship to Mars?', grounded: false, at: '2026-11-02T09:00:00.000Z' },
        { text: 'What about the Moon?', grounded: true, at: '2026-11-02T09:01:00.000Z', rating: 'up' },
      ]);
      await seed('rated up', widget, [{ text: 'Is there a free trial?', grounded: true, at: '2026-11-03T09:00:00.000Z', rating: 'up' }]);
      ids.empty = (await createSession(tenant.token, { experienceId: help })).id;
      // Another workspace's session with a rated-down, unanswered query never shows up.
      await seedSession(db, tenantB.workspaceId, experienceOfB, [{ text: 'Elsewhere?', grounded: false, at: '2026-11-03T10:00:00.000Z', rating: 'down' }]);
    });

    test('each listed session carries its experience\'s name and its first question (null before any)', async () => {
      const answer = await call(tenant.token, 'GET', '/api/v2/sessions');
      assert.equal(answer.status, 200, answer.text);
      const summary = answer.body.sessions.map((session: Record<string, unknown>) => ({
        id: session.id,
        experienceName: session.experienceName,
        firstQuestion: session.firstQuestion,
        queryCount: session.queryCount,
      }));
      assert.deepEqual(summary, [
        { id: ids.empty, experienceName: 'Help centre', firstQuestion: null, queryCount: 0 },
        { id: ids['rated up'], experienceName: 'Pricing widget', firstQuestion: 'Is there a free trial?', queryCount: 1 },
        { id: ids.unanswered, experienceName: 'Help centre', firstQuestion: 'Do you ship to Mars?', queryCount: 2 },
        { id: ids['rated down'], experienceName: 'Pricing widget', firstQuestion: 'How much is the pro plan?', queryCount: 2 },
      ]);
      const { experienceName, firstQuestion, ...session } = answer.body.sessions[3];
      assert.deepEqual({ experienceName, firstQuestion }, { experienceName: 'Pricing widget', firstQuestion: 'How much is the pro plan?' });
      assert.deepEqual(session, (({ messages: _messages, ...rest }) => rest)((await call(tenant.token, 'GET', `/api/v2/sessions/${ids['rated down']}`)).body));
    });

    test('feedback=down|up keeps the sessions with an answer rated so; unanswered=true|false those with or without a fallback answer', async () => {
      const cases: Array<[string, string[]]> = [
        ['feedback=down', ['rated down']],
        ['feedback=up', ['rated up', 'unanswered']],
        ['unanswered=true', ['unanswered']],
        ['unanswered=false', ['empty', 'rated up', 'rated down']],
        ['feedback=up&unanswered=true', ['unanswered']],
        ['feedback=up&unanswered=false', ['rated up']],
        [`feedback=down&experienceId=${help}`, []],
        [`feedback=up&experienceId=${widget}`, ['rated up']],
      ];
      for (const [query, names] of cases) {
        const answer = await call(tenant.token, 'GET', `/api/v2/sessions?${query}`);
        assert.equal(answer.status, 200, `${query}: ${answer.text}`);
        const listed = { total: answer.body.total, ids: answer.body.sessions.map((session: { id: string }) => session.id) };
        assert.deepEqual(listed, { total: names.length, ids: names.map((name) => ids[name]) }, query);
      }
      const otherWorkspace = await call(tenantB.token, 'GET', '/api/v2/sessions?feedback=down&unanswered=true');
      assert.deepEqual(otherWorkspace.body.sessions.map((session: { firstQuestion: string }) => session.firstQuestion), ['Elsewhere?']);
    });
  });

  test('the transcript lists the session\'s answered queries oldest first, with their feedback; a completed session refuses queries', async () => {
    const knowledgeBase = await createKnowledgeBase(server, tenantA.token);
    await ingest(server, tenantA.token, knowledgeBase, [
      {
        id: 'refunds',
        title: 'Refund policy',
        url: 'https://help.example.com/refunds',
        content: 'Refunds are paid back to the original card within 14 days after the returned parcel arrives at our warehouse.',
      },
      {
        id: 'shipping',
        title: 'Shipping times',
        url: 'https://help.example.com/shipping',
        content: 'Orders placed before noon ship the same day. Standard delivery takes 3 to 5 business days within the country.',
      },
    ]);
    const widget = await call(tenantA.token, 'POST', '/api/v2/experiences', { name: 'help widget', knowledgeBaseIds: [knowledgeBase] });
    assert.equal(widget.status, 201, widget.text);
    const experienceId = widget.body.id;
    const session = await createSession(tenantA.token, { experienceId, userId: 'Grace@Example.com', metadata: { channel: 'web' } });

    const questions = [
      { text: 'How long do refunds take?', timestamp: '2026-11-20T09:00:00.000Z', metadata: { page: '/orders/42' } },
      { text: 'And how long does standard delivery take?', timestamp: '2026-11-20T09:01:30.000Z', metadata: {} },
    ];
    const answers: any[] = [];
    for (const question of questions) {
      // Queries to a public experience need no token; the userId matches the session's in any case.
      const answer = await server.request('POST', '/api/v2/query', {
        body: { ...question, experienceId, sessionId: session.id, userId: 'grace@example.com' },
      });
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.body.sessionId, session.id);
      answers.push(answer.body);
    }

    const path = `/api/v2/sessions/${session.id}`;
    const read = await call(tenantA.token, 'GET', path);
    assert.equal(read.status, 200, read.text);
    const { messages, ...readSession } = read.body;
    assert.equal(readSession.queryCount, 2);
    assert.equal(readSession.status, 'active');
    assert.ok(readSession.lastQueryAt, JSON.stringify(readSession));
    assert.deepEqual(
      { ...readSession, queryCount: 0, lastQueryAt: null, updatedAt: session.updatedAt },
      session,
      'apart from its counters, the session is as created',
    );
    assert.equal(messages.length, 2);
    messages.forEach((message: Record<string, any>, index: number) => {
      const { latencyMs, createdAt, ...stored } = message;
      assert.ok(Number.isInteger(latencyMs) && latencyMs >= 0, String(latencyMs));
      assert.equal(new Date(createdAt).toISOString(), createdAt);
      assert.deepEqual(stored, {
        queryId: answers[index].queryId,
        text: questions[index]!.text,
        answer: answers[index].answer,
        format: 'markdown',
        sources: answers[index].sources,
        actions: answers[index].actions,
        toolCalls: [],
        metadata: questions[index]!.metadata,
        grounded: true,
        askedAt: questions[index]!.timestamp,
        feedback: null,
      });
    });
    assert.equal(messages[0].sources[0].title, 'Refund policy');
    assert.ok(Date.parse(messages[0].createdAt) <= Date.parse(messages[1].createdAt));

    const feedbackPath = `/api/v2/queries/${answers[0].queryId}/feedback`;
    const down = await server.request('POST', feedbackPath, { body: { rating: 'down', comment: 'Which card?' } });
    assert.equal(down.status, 204, down.text);
    const firstRating = (await call(tenantA.token, 'GET', path)).body.messages;
    const { createdAt: downAt, ...downFeedback } = firstRating[0].feedback;
    assert.deepEqual(downFeedback, { rating: 'down', comment: 'Which card?' });
    assert.equal(new Date(downAt).toISOString(), downAt);
    assert.equal(firstRating[1].feedback, null);
    // A second rating replaces the first, comment included.
    assert.equal((await server.request('POST', feedbackPath, { body: { rating: 'up' } })).status, 204);
    const { createdAt: upAt, ...upFeedback } = (await call(tenantA.token, 'GET', path)).body.messages[0].feedback;
    assert.deepEqual(upFeedback, { rating: 'up', comment: null });
    assert.ok(Date.parse(upAt) >= Date.parse(downAt));

    assert.equal((await call(tenantA.token, 'POST', `${path}/complete`)).status, 200);
    const refused = await server.request('POST', '/api/v2/query', {
      body: { text: 'One more question', experienceId, sessionId: session.id, userId: 'grace@example.com' },
    });
    assert.equal(assertExactError(refused, 409, '/v2/query'), `Session ${session.id} is completed and takes no new queries.`);
    const final = (await call(tenantA.token, 'GET', path)).body;
    assert.equal(final.status, 'completed');
    assert.equal(final.queryCount, 2);
    assert.deepEqual(final.messages.map((message: { queryId: string }) => message.queryId), answers.map((answer) => answer.queryId));
  });

  test('sessions of an experience deleted afterwards stay readable, listed and editable', async () => {
    const doomed = await experience(tenantA.token, 'retired widget');
    const created = await createSession(tenantA.token, { experienceId: doomed, userId: 'frank' });
    assert.equal((await call(tenantA.token, 'DELETE', `/api/v2/experiences/${doomed}`)).status, 204);
    const path = `/api/v2/sessions/${created.id}`;
    assert.deepEqual((await call(tenantA.token, 'GET', path)).body, { ...created, messages: [] });
    assert.deepEqual((await call(tenantA.token, 'GET', `/api/v2/sessions?experienceId=${doomed}`)).body, {
      total: 1,
      sessions: [{ ...created, experienceName: 'retired widget', firstQuestion: null }],
    });
    assert.deepEqual((await call(tenantA.token, 'PATCH', path, { metadata: { archived: true } })).body.metadata, { archived: true });
    assert.equal((await call(tenantA.token, 'POST', `${path}/complete`)).body.status, 'completed');
  });

  // An experience without knowledge bases is within any restriction; knowledge-base-restriction.test.ts has the others.
  test('a token restricted to some knowledge bases manages the sessions of an experience within them', async () => {
    const knowledgeBase = await call(tenantA.token, 'POST', '/api/v2/knowledge-bases', { name: 'restricted' });
    assert.equal(knowledgeBase.status, 201, knowledgeBase.text);
    const restricted = await server.token(tenantA.workspaceId, ['sessions:read', 'sessions:write'], { knowledgeBaseIds: [knowledgeBase.body.id] });
    const created = await createSession(restricted, { experienceId: secondExperienceOfA, userId: 'erin' });
    assert.equal((await call(restricted, 'POST', `/api/v2/sessions/${created.id}/complete`)).body.status, 'completed');
    const listed = await call(restricted, 'GET', `/api/v2/sessions?experienceId=${secondExperienceOfA}&userId=erin`);
    assert.deepEqual(listed.body.sessions.map((session: { id: string }) => session.id), [created.id]);
  });

  test('the OpenAPI document describes every session route with its schemas', async () => {
    const document = (await server.request('GET', '/openapi.json')).body;
    const routes = {
      '/api/v2/sessions': ['post', 'get'],
      '/api/v2/sessions/{id}': ['get', 'patch'],
      '/api/v2/sessions/{id}/complete': ['post'],
    };
    for (const [path, methods] of Object.entries(routes)) {
      for (const method of methods) {
        const operation = document.paths[path]?.[method];
        assert.ok(operation, `${method} ${path}`);
        assert.deepEqual(operation.tags, ['sessions']);
        assert.deepEqual(operation.security, [{ bearerAuth: [] }]);
      }
    }
    const transcript = document.paths['/api/v2/sessions/{id}'].get.responses['200'].content['application/json'].schema;
    assert.ok(transcript.properties.messages.items.properties.feedback, JSON.stringify(transcript).slice(0, 300));
    const created = document.paths['/api/v2/sessions'].post;
    assert.deepEqual(Object.keys(created.requestBody.content['application/json'].schema.properties), ['experienceId', 'userId', 'metadata']);
    assert.ok(created.responses['201']);
  });
});
