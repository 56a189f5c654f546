import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { assertError } from '../../../test/assert-error.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/** The spec's error body for `status` at `path`, and for 400s an entry at each JSON pointer. */
describe(`admin API: workspaces and their first clients (${engine})`, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  test('POST creates an active workspace that GET reads back', async () => {
    const created = await server.admin('POST', '/api/v2/admin/workspaces', { name: 'Acme' });
    assert.equal(created.status, 201);
    assert.deepEqual(Object.keys(created.body).sort(), ['createdAt', 'id', 'name', 'status', 'updatedAt']);
    assert.match(created.body.id, UUID);
    assert.equal(created.body.name, 'Acme');
    assert.equal(created.body.status, 'active');
    assert.equal(created.body.createdAt, created.body.updatedAt);
    assert.ok(Math.abs(Date.parse(created.body.createdAt) - Date.now()) < 60_000);

    const read = await server.admin('GET', `/api/v2/admin/workspaces/${created.body.id}`);
    assert.equal(read.status, 200);
    assert.deepEqual(read.body, created.body);
  });

  test('POST without a usable name is a 400 naming /name', async () => {
    for (const body of [{}, { name: '' }, { name: 'x'.repeat(201) }, { name: 'ok', extra: true }]) {
      const answer = await server.admin('POST', '/api/v2/admin/workspaces', body);
      assertError(answer, 400, '/v2/admin/workspaces', ['extra' in body ? '/extra' : '/name']);
    }
  });

  test('the admin API answers 401 without the admin key or with a wrong one', async () => {
    const missing = await server.request('POST', '/api/v2/admin/workspaces', { body: { name: 'x' } });
    assertError(missing, 401, '/v2/admin/workspaces');
    const wrong = await server.request('GET', '/api/v2/admin/workspaces', { token: 'not-the-admin-key' });
    assertError(wrong, 401, '/v2/admin/workspaces');
    const { token } = await server.tenant(['*']);
    const tenantToken = await server.request('GET', '/api/v2/admin/workspaces', { token });
    assertError(tenantToken, 401, '/v2/admin/workspaces');
  });

  test('GET lists workspaces newest first, with total, limit and offset', async () => {
    const before = await server.admin('GET', '/api/v2/admin/workspaces');
    assert.equal(before.status, 200);
    const names = ['list-first', 'list-second', 'list-third'];
    const ids: string[] = [];
    for (const name of names) ids.push(await server.createWorkspace(name));
    const total = before.body.total + names.length;

    const firstPage = await server.admin('GET', '/api/v2/admin/workspaces?limit=2');
    assert.equal(firstPage.status, 200);
    assert.equal(firstPage.body.total, total);
    assert.deepEqual(firstPage.body.workspaces.map((workspace: { id: string }) => workspace.id), [ids[2], ids[1]]);

    const secondPage = await server.admin('GET', '/api/v2/admin/workspaces?limit=2&offset=1');
    assert.equal(secondPage.body.total, total);
    assert.deepEqual(secondPage.body.workspaces.map((workspace: { name: string }) => workspace.name), ['list-second', 'list-first']);

    const everything = await server.admin('GET', '/api/v2/admin/workspaces?limit=100');
    assert.equal(everything.body.workspaces.length, total);
    const times = everything.body.workspaces.map((workspace: { createdAt: string }) => Date.parse(workspace.createdAt));
    assert.deepEqual(times, [...times].sort((a, b) => b - a));

    const pastTheEnd = await server.admin('GET', `/api/v2/admin/workspaces?offset=${total}`);
    assert.deepEqual(pastTheEnd.body, { total, workspaces: [] });
  });

  test('GET with limit or offset out of range is a 400 naming the query parameter', async () => {
    const cases: Array<[string, string]> = [
      ['limit=0', 'querystring:/limit'],
      ['limit=101', 'querystring:/limit'],
      ['limit=ten', 'querystring:/limit'],
      ['offset=-1', 'querystring:/offset'],
    ];
    for (const [query, pointer] of cases) {
      assertError(await server.admin('GET', `/api/v2/admin/workspaces?${query}`), 400, '/v2/admin/workspaces', [pointer]);
    }
  });

  test('GET of an unknown workspace is a 404, of a non-UUID id a 400', async () => {
    assertError(await server.admin('GET', `/api/v2/admin/workspaces/${UNKNOWN_ID}`), 404, `/v2/admin/workspaces/${UNKNOWN_ID}`);
    assertError(await server.admin('GET', '/api/v2/admin/workspaces/not-a-uuid'), 400, '/v2/admin/workspaces/not-a-uuid', ['params:/id']);
  });

  test('PATCH suspends a workspace, which stops its tokens and grants, and reactivates it', async () => {
    const workspaceId = await server.createWorkspace('to suspend');
    const client = await server.createClient(workspaceId, ['knowledge-bases:read']);
    const token = await server.token(workspaceId, ['knowledge-bases:read']);
    const path = `/api/v2/admin/workspaces/${workspaceId}`;

    const suspended = await server.admin('PATCH', path, { status: 'suspended' });
    assert.equal(suspended.status, 200);
    assert.equal(suspended.body.status, 'suspended');
    assert.equal(suspended.body.name, 'to suspend');
    assert.ok(Date.parse(suspended.body.updatedAt) > Date.parse(suspended.body.createdAt));
    assert.equal((await server.admin('GET', path)).body.status, 'suspended');
    assertError(await server.request('GET', '/api/v2/knowledge-bases', { token }), 403, '/v2/knowledge-bases');
    const grant = await server.request('POST', '/v2/auth/access-tokens', { body: { clientId: client.clientId, clientSecret: client.clientSecret } });
    assertError(grant, 403, '/v2/auth/access-tokens');

    const reactivated = await server.admin('PATCH', path, { status: 'active' });
    assert.equal(reactivated.status, 200);
    assert.equal(reactivated.body.status, 'active');
    assert.equal((await server.request('GET', '/api/v2/knowledge-bases', { token })).status, 200);
    const regrant = await server.request('POST', '/v2/auth/access-tokens', { body: { clientId: client.clientId, clientSecret: client.clientSecret } });
    assert.equal(regrant.status, 200);
  });

  test('PATCH renames a workspace and keeps its status', async () => {
    const workspaceId = await server.createWorkspace('old name');
    const renamed = await server.admin('PATCH', `/api/v2/admin/workspaces/${workspaceId}`, { name: 'new name' });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.name, 'new name');
    assert.equal(renamed.body.status, 'active');
    assert.deepEqual((await server.admin('GET', `/api/v2/admin/workspaces/${workspaceId}`)).body, renamed.body);
  });

  test('PATCH with a bad status, an empty body or an unknown field is a 400 and changes nothing', async () => {
    const workspaceId = await server.createWorkspace('unchanged');
    const path = `/api/v2/admin/workspaces/${workspaceId}`;
    const original = (await server.admin('GET', path)).body;
    assertError(await server.admin('PATCH', path, { status: 'bogus' }), 400, path.slice(4), ['/status']);
    assertError(await server.admin('PATCH', path, {}), 400, path.slice(4));
    assertError(await server.admin('PATCH', path, { status: 'active', owner: 'x' }), 400, path.slice(4), ['/owner']);
    assert.deepEqual((await server.admin('GET', path)).body, original);
  });

  test('PATCH of an unknown workspace is a 404, of a non-UUID id a 400', async () => {
    assertError(await server.admin('PATCH', `/api/v2/admin/workspaces/${UNKNOWN_ID}`, { status: 'active' }), 404, `/v2/admin/workspaces/${UNKNOWN_ID}`);
    assertError(await server.admin('PATCH', '/api/v2/admin/workspaces/123', { status: 'active' }), 400, '/v2/admin/workspaces/123', ['params:/id']);
  });

  test('POST .../access-token-clients creates a client whose secret works once in the token grant', async () => {
    const workspaceId = await server.createWorkspace('with client');
    const created = await server.admin('POST', `/api/v2/admin/workspaces/${workspaceId}/access-token-clients`, {
      name: 'ingestion bot',
      scopes: ['data-ingestion:write', 'knowledge-bases:read'],
    });
    assert.equal(created.status, 201);
    assert.deepEqual(Object.keys(created.body).sort(), [
      'clientId', 'clientSecret', 'createdAt', 'id', 'knowledgeBaseIds', 'name', 'revokedAt', 'scopes', 'workspaceId',
    ]);
    assert.match(created.body.id, UUID);
    assert.equal(created.body.workspaceId, workspaceId);
    assert.equal(created.body.name, 'ingestion bot');
    assert.deepEqual(created.body.scopes, ['data-ingestion:write', 'knowledge-bases:read']);
    assert.equal(created.body.knowledgeBaseIds, null);
    assert.equal(created.body.revokedAt, null);
    assert.ok(created.body.clientSecret.length >= 32);

    const grant = await server.request('POST', '/v2/auth/access-tokens', {
      body: { clientId: created.body.clientId, clientSecret: created.body.clientSecret },
    });
    assert.equal(grant.status, 200);
    assert.equal(grant.body.scope, 'data-ingestion:write knowledge-bases:read');
    const list = await server.request('GET', '/api/v2/knowledge-bases', { token: grant.body.access_token });
    assert.equal(list.status, 200);
    assert.deepEqual(list.body, { total: 0, knowledgeBases: [] });

    const wrongSecret = await server.request('POST', '/v2/auth/access-tokens', {
      body: { clientId: created.body.clientId, clientSecret: `${created.body.clientSecret}x` },
    });
    assertError(wrongSecret, 401, '/v2/auth/access-tokens');
  });

  test('POST .../access-token-clients for an unknown workspace is a 404', async () => {
    const path = `/api/v2/admin/workspaces/${UNKNOWN_ID}/access-token-clients`;
    assertError(await server.admin('POST', path, { name: 'x', scopes: ['*'] }), 404, path.slice(4));
  });

  test('POST .../access-token-clients with an unknown, duplicate or missing scope is a 400', async () => {
    const workspaceId = await server.createWorkspace('scopes');
    const path = `/api/v2/admin/workspaces/${workspaceId}/access-token-clients`;
    assertError(await server.admin('POST', path, { name: 'x', scopes: ['query:execute', 'root'] }), 400, path.slice(4), ['/scopes/1']);
    assertError(await server.admin('POST', path, { name: 'x', scopes: [] }), 400, path.slice(4), ['/scopes']);
    assertError(await server.admin('POST', path, { name: 'x', scopes: ['*', '*'] }), 400, path.slice(4), ['/scopes']);
    assertError(await server.admin('POST', path, { name: 'x' }), 400, path.slice(4), ['/scopes']);
    const clients = await server.request('GET', '/api/v2/access-token-clients', { token: await server.token(workspaceId, ['clients:write']) });
    assert.equal(clients.body.clients.length, 1, 'only the client behind the listing token exists');
  });

  test('POST .../access-token-clients restricted to a knowledge base of another workspace is a 400 at its index', async () => {
    const owner = await server.tenant(['*']);
    const own = await server.request('POST', '/api/v2/knowledge-bases', { token: owner.token, body: { name: 'own' } });
    const other = await server.tenant(['*']);
    const foreign = await server.request('POST', '/api/v2/knowledge-bases', { token: other.token, body: { name: 'foreign' } });
    const path = `/api/v2/admin/workspaces/${owner.workspaceId}/access-token-clients`;

    const rejected = await server.admin('POST', path, { name: 'x', scopes: ['*'], knowledgeBaseIds: [own.body.id, own.body.id, foreign.body.id] });
    assertError(rejected, 400, path.slice(4), ['/knowledgeBaseIds/2']);
    assert.equal(rejected.body.errors.length, 1);

    const restricted = await server.admin('POST', path, { name: 'x', scopes: ['*'], knowledgeBaseIds: [own.body.id, own.body.id] });
    assert.equal(restricted.status, 201);
    assert.deepEqual(restricted.body.knowledgeBaseIds, [own.body.id]);
  });
});
