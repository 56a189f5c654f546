import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { assertError } from '../../../test/assert-error.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/** The spec's error body for `status` at `path`, and for 400s an entry at each JSON pointer. */
describe(`knowledge bases (${engine})`, () => {
  let server: TestServer;
  let tenantA: { workspaceId: string; token: string };
  let tenantB: { workspaceId: string; token: string };

  before(async () => {
    server = await startTestServer();
    tenantA = await server.tenant(['knowledge-bases:read', 'knowledge-bases:write', 'experiences:read', 'experiences:write']);
    tenantB = await server.tenant(['knowledge-bases:read', 'knowledge-bases:write']);
  });
  after(() => server.close());

  const call = (token: string, method: string, path: string, body?: unknown) => server.request(method, path, { token, body });
  async function createKnowledgeBase(token: string, body: Record<string, unknown>): Promise<Record<string, any>> {
    const answer = await call(token, 'POST', '/api/v2/knowledge-bases', body);
    assert.equal(answer.status, 201, answer.text);
    return answer.body;
  }

  test('POST creates a knowledge base with default chunking and no embedding yet; GET reads it back', async () => {
    const created = await createKnowledgeBase(tenantA.token, { name: 'Handbook' });
    assert.match(created.id, UUID);
    const { id: _id, createdAt, updatedAt, ...fields } = created;
    assert.deepEqual(fields, {
      workspaceId: tenantA.workspaceId,
      name: 'Handbook',
      description: '',
      chunkSize: 800,
      chunkOverlap: 100,
      embedding: null,
    });
    assert.equal(createdAt, updatedAt);
    const read = await call(tenantA.token, 'GET', `/api/v2/knowledge-bases/${created.id}`);
    assert.equal(read.status, 200);
    assert.deepEqual(read.body, created);
  });

  test('POST keeps the given description and chunking; a small chunk size gets a quarter of it as default overlap', async () => {
    const explicit = await createKnowledgeBase(tenantA.token, { name: 'FAQ', description: 'Questions', chunkSize: 1200, chunkOverlap: 0 });
    assert.deepEqual([explicit.description, explicit.chunkSize, explicit.chunkOverlap], ['Questions', 1200, 0]);
    const small = await createKnowledgeBase(tenantA.token, { name: 'tiny', chunkSize: 200 });
    assert.deepEqual([small.chunkSize, small.chunkOverlap], [200, 50]);
  });

  test('POST with invalid fields is a 400 naming each field and creates nothing', async () => {
    const before = (await call(tenantA.token, 'GET', '/api/v2/knowledge-bases')).body.total;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{}, '/name'],
      [{ name: '' }, '/name'],
      [{ name: 'x', chunkSize: 99 }, '/chunkSize'],
      [{ name: 'x', chunkSize: 8001 }, '/chunkSize'],
      [{ name: 'x', chunkSize: 500.5 }, '/chunkSize'],
      [{ name: 'x', chunkOverlap: -1 }, '/chunkOverlap'],
      [{ name: 'x', chunkSize: 300, chunkOverlap: 300 }, '/chunkOverlap'],
      [{ name: 'x', chunkOverlap: 800 }, '/chunkOverlap'],
      [{ name: 'x', embeddingModel: 'm' }, '/embeddingModel'],
    ];
    for (const [body, pointer] of cases) {
      assertError(await call(tenantA.token, 'POST', '/api/v2/knowledge-bases', body), 400, '/v2/knowledge-bases', [pointer]);
    }
    assert.equal((await call(tenantA.token, 'GET', '/api/v2/knowledge-bases')).body.total, before);
  });

  test('GET lists knowledge bases newest first with total, limit and offset', async () => {
    const tenant = await server.tenant(['knowledge-bases:read', 'knowledge-bases:write']);
    const ids: string[] = [];
    for (const name of ['one', 'two', 'three']) ids.push((await createKnowledgeBase(tenant.token, { name })).id);

    const all = await call(tenant.token, 'GET', '/api/v2/knowledge-bases');
    assert.equal(all.status, 200);
    assert.deepEqual(Object.keys(all.body).sort(), ['knowledgeBases', 'total']);
    assert.equal(all.body.total, 3);
    assert.deepEqual(all.body.knowledgeBases.map((knowledgeBase: { id: string }) => knowledgeBase.id), [ids[2], ids[1], ids[0]]);

    const page = await call(tenant.token, 'GET', '/api/v2/knowledge-bases?limit=1&offset=1');
    assert.equal(page.body.total, 3);
    assert.deepEqual(page.body.knowledgeBases, [all.body.knowledgeBases[1]]);
    assert.deepEqual((await call(tenant.token, 'GET', '/api/v2/knowledge-bases?offset=3')).body, { total: 3, knowledgeBases: [] });

    for (const [query, pointer] of [['limit=0', 'querystring:/limit'], ['limit=101', 'querystring:/limit'], ['offset=-1', 'querystring:/offset']] as const) {
      assertError(await call(tenant.token, 'GET', `/api/v2/knowledge-bases?${query}`), 400, '/v2/knowledge-bases', [pointer]);
    }
  });

  test('PATCH changes name, description and chunking, and keeps what it was not given', async () => {
    const created = await createKnowledgeBase(tenantA.token, { name: 'before', description: 'old' });
    const path = `/api/v2/knowledge-bases/${created.id}`;

    const renamed = await call(tenantA.token, 'PATCH', path, { name: 'after' });
    assert.equal(renamed.status, 200);
    assert.deepEqual({ ...renamed.body, updatedAt: created.updatedAt }, { ...created, name: 'after' });
    assert.ok(Date.parse(renamed.body.updatedAt) > Date.parse(created.updatedAt));

    const rechunked = await call(tenantA.token, 'PATCH', path, { description: 'new', chunkSize: 1500, chunkOverlap: 300 });
    assert.equal(rechunked.status, 200);
    assert.deepEqual(
      [rechunked.body.name, rechunked.body.description, rechunked.body.chunkSize, rechunked.body.chunkOverlap],
      ['after', 'new', 1500, 300],
    );
    assert.deepEqual((await call(tenantA.token, 'GET', path)).body, rechunked.body);
  });

  test('PATCH to an overlap not below the chunk size is a 400 and changes nothing', async () => {
    const created = await createKnowledgeBase(tenantA.token, { name: 'chunking', chunkSize: 500, chunkOverlap: 100 });
    const path = `/api/v2/knowledge-bases/${created.id}`;
    const cases: Array<Record<string, unknown>> = [
      { chunkOverlap: 500 },
      { chunkSize: 100 },
      { name: 'renamed too', chunkSize: 1000, chunkOverlap: 1000 },
    ];
    for (const body of cases) {
      const answer = await call(tenantA.token, 'PATCH', path, body);
      assertError(answer, 400, path.slice(4), ['/chunkOverlap']);
      assert.match(answer.body.message, /chunkOverlap must be smaller than chunkSize/);
    }
    assertError(await call(tenantA.token, 'PATCH', path, {}), 400, path.slice(4));
    assertError(await call(tenantA.token, 'PATCH', path, { embedding: null }), 400, path.slice(4), ['/embedding']);
    assert.deepEqual((await call(tenantA.token, 'GET', path)).body, created);
  });

  test('DELETE removes a knowledge base: 204, then 404 everywhere, and experiences stop listing it', async () => {
    const doomed = await createKnowledgeBase(tenantA.token, { name: 'doomed' });
    const kept = await createKnowledgeBase(tenantA.token, { name: 'kept' });
    const experience = await call(tenantA.token, 'POST', '/api/v2/experiences', { name: 'uses both', knowledgeBaseIds: [doomed.id, kept.id] });
    assert.equal(experience.status, 201);
    const path = `/api/v2/knowledge-bases/${doomed.id}`;

    const deleted = await call(tenantA.token, 'DELETE', path);
    assert.equal(deleted.status, 204);
    assert.equal(deleted.text, '');
    assertError(await call(tenantA.token, 'GET', path), 404, path.slice(4));
    assertError(await call(tenantA.token, 'PATCH', path, { name: 'x' }), 404, path.slice(4));
    assertError(await call(tenantA.token, 'DELETE', path), 404, path.slice(4));
    const listed = (await call(tenantA.token, 'GET', '/api/v2/knowledge-bases?limit=100')).body.knowledgeBases;
    assert.ok(!listed.some((knowledgeBase: { id: string }) => knowledgeBase.id === doomed.id));
    assert.ok(listed.some((knowledgeBase: { id: string }) => knowledgeBase.id === kept.id));

    const after = await call(tenantA.token, 'GET', `/api/v2/experiences/${experience.body.id}`);
    assert.deepEqual(after.body.knowledgeBaseIds, [kept.id]);
  });

  test('an unknown id is a 404 and a non-UUID id a 400 on GET, PATCH and DELETE', async () => {
    for (const [method, body] of [['GET', undefined], ['PATCH', { name: 'x' }], ['DELETE', undefined]] as const) {
      assertError(await call(tenantA.token, method, `/api/v2/knowledge-bases/${UNKNOWN_ID}`, body), 404, `/v2/knowledge-bases/${UNKNOWN_ID}`);
      assertError(await call(tenantA.token, method, '/api/v2/knowledge-bases/kb-1', body), 400, '/v2/knowledge-bases/kb-1', ['params:/id']);
    }
  });

  test('another workspace\'s knowledge base is a 404 on GET, PATCH and DELETE and stays unchanged', async () => {
    const ofB = await createKnowledgeBase(tenantB.token, { name: 'b private', description: 'secret' });
    const path = `/api/v2/knowledge-bases/${ofB.id}`;
    assertError(await call(tenantA.token, 'GET', path), 404, path.slice(4));
    assertError(await call(tenantA.token, 'PATCH', path, { name: 'taken over', chunkSize: 2000 }), 404, path.slice(4));
    assertError(await call(tenantA.token, 'DELETE', path), 404, path.slice(4));
    const read = await call(tenantB.token, 'GET', path);
    assert.equal(read.status, 200);
    assert.deepEqual(read.body, ofB);
  });

  test('lists never show another workspace\'s knowledge bases: the isolation matrix', async () => {
    const ofA = await createKnowledgeBase(tenantA.token, { name: 'a listed' });
    const ofB = await createKnowledgeBase(tenantB.token, { name: 'b listed' });
    for (const [tenant, own, foreign] of [[tenantA, ofA, ofB], [tenantB, ofB, ofA]] as const) {
      const listed = await call(tenant.token, 'GET', '/api/v2/knowledge-bases?limit=100');
      const ids = listed.body.knowledgeBases.map((knowledgeBase: { id: string }) => knowledgeBase.id);
      assert.equal(listed.body.total, ids.length);
      assert.ok(ids.includes(own.id) && !ids.includes(foreign.id));
      assert.ok(listed.body.knowledgeBases.every((knowledgeBase: { workspaceId: string }) => knowledgeBase.workspaceId === tenant.workspaceId));
    }
  });

  test('a token restricted to some knowledge bases sees only those and cannot create or reach others', async () => {
    const allowed = await createKnowledgeBase(tenantA.token, { name: 'allowed' });
    const hidden = await createKnowledgeBase(tenantA.token, { name: 'hidden' });
    const token = await server.token(tenantA.workspaceId, ['knowledge-bases:read', 'knowledge-bases:write'], { knowledgeBaseIds: [allowed.id] });

    assert.deepEqual((await call(token, 'GET', '/api/v2/knowledge-bases')).body, { total: 1, knowledgeBases: [allowed] });
    assert.equal((await call(token, 'GET', `/api/v2/knowledge-bases/${allowed.id}`)).status, 200);
    const path = `/api/v2/knowledge-bases/${hidden.id}`;
    assertError(await call(token, 'GET', path), 403, path.slice(4));
    assertError(await call(token, 'PATCH', path, { name: 'x' }), 403, path.slice(4));
    assertError(await call(token, 'DELETE', path), 403, path.slice(4));
    assertError(await call(token, 'POST', '/api/v2/knowledge-bases', { name: 'new' }), 403, '/v2/knowledge-bases');
    assert.deepEqual((await call(tenantA.token, 'GET', path)).body, hidden);
  });
});
