import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { assertError } from '../../../test/assert-error.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

type Client = { id: string; workspaceId: string; clientId: string; scopes: string[]; knowledgeBaseIds: string[] | null; revokedAt: string | null };

/** The spec's error body for `status` at `path`, and for 400s an entry at each JSON pointer. */
describe(`access-token clients of a workspace (${engine})`, () => {
  let server: TestServer;
  let tenantA: { workspaceId: string; token: string };
  let tenantB: { workspaceId: string; token: string };

  before(async () => {
    server = await startTestServer();
    tenantA = await server.tenant(['*']);
    tenantB = await server.tenant(['*']);
  });
  after(() => server.close());

  const create = (token: string, body: unknown) => server.request('POST', '/api/v2/access-token-clients', { token, body });
  const list = async (token: string): Promise<Client[]> => {
    const answer = await server.request('GET', '/api/v2/access-token-clients', { token });
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(Object.keys(answer.body), ['clients']);
    return answer.body.clients;
  };
  const grant = (client: { clientId: string; clientSecret: string }) =>
    server.request('POST', '/v2/auth/access-tokens', { body: { clientId: client.clientId, clientSecret: client.clientSecret } });

  test('POST creates a client in the caller\'s workspace and shows its secret, which the token grant accepts', async () => {
    const created = await create(tenantA.token, { name: 'reporting', scopes: ['query:execute', 'sessions:read'] });
    assert.equal(created.status, 201);
    assert.match(created.body.id, UUID);
    assert.equal(created.body.workspaceId, tenantA.workspaceId);
    assert.equal(created.body.name, 'reporting');
    assert.deepEqual(created.body.scopes, ['query:execute', 'sessions:read']);
    assert.equal(created.body.knowledgeBaseIds, null);
    assert.equal(created.body.revokedAt, null);
    assert.equal(typeof created.body.clientSecret, 'string');

    const token = await grant(created.body);
    assert.equal(token.status, 200);
    assert.equal(token.body.scope, 'query:execute sessions:read');
  });

  test('GET lists the workspace\'s clients newest first and never a secret or its hash', async () => {
    const first = await create(tenantA.token, { name: 'first', scopes: ['query:execute'] });
    const second = await create(tenantA.token, { name: 'second', scopes: ['query:execute'] });
    const answer = await server.request('GET', '/api/v2/access-token-clients', { token: tenantA.token });
    assert.equal(answer.status, 200);
    const clients: Array<Record<string, unknown>> = answer.body.clients;
    assert.deepEqual(clients.slice(0, 2).map((client) => client.id), [second.body.id, first.body.id]);
    const { clientSecret: _secret, ...shownOnce } = second.body;
    assert.deepEqual(clients[0], shownOnce);
    for (const client of clients) {
      assert.deepEqual(Object.keys(client).filter((key) => /secret|hash/i.test(key)), []);
    }
    assert.ok(!answer.text.includes(first.body.clientSecret) && !answer.text.includes(second.body.clientSecret));
    assert.ok(!answer.text.includes('scrypt$'));

    const { rows } = await server.context.db.query<{ secret_hash: string }>(
      'SELECT secret_hash FROM access_token_clients WHERE workspace_id = $1 AND id = $2',
      [tenantA.workspaceId, first.body.id],
    );
    assert.match(rows[0]!.secret_hash, /^scrypt\$/);
    assert.ok(!rows[0]!.secret_hash.includes(first.body.clientSecret), 'only a hash of the secret is stored');
  });

  test('POST without a name or with unknown fields is a 400 and creates nothing', async () => {
    const before = (await list(tenantA.token)).length;
    assertError(await create(tenantA.token, { scopes: ['query:execute'] }), 400, '/v2/access-token-clients', ['/name']);
    assertError(await create(tenantA.token, { name: 'x', scopes: ['query:execute'], secret: 's' }), 400, '/v2/access-token-clients', ['/secret']);
    assertError(await create(tenantA.token, { name: 'x', scopes: ['sudo'] }), 400, '/v2/access-token-clients', ['/scopes/0']);
    assert.equal((await list(tenantA.token)).length, before);
  });

  test('GET lists only the caller\'s workspace: the isolation matrix for clients', async () => {
    const ofA = await create(tenantA.token, { name: 'a only', scopes: ['query:execute'] });
    const ofB = await create(tenantB.token, { name: 'b only', scopes: ['query:execute'] });
    const listedByA = await list(tenantA.token);
    const listedByB = await list(tenantB.token);
    assert.ok(listedByA.every((client) => client.workspaceId === tenantA.workspaceId));
    assert.ok(listedByB.every((client) => client.workspaceId === tenantB.workspaceId));
    assert.ok(listedByA.some((client) => client.id === ofA.body.id) && !listedByA.some((client) => client.id === ofB.body.id));
    assert.ok(listedByB.some((client) => client.id === ofB.body.id) && !listedByB.some((client) => client.id === ofA.body.id));
  });

  test('DELETE revokes a client: 204, revokedAt in the list, its tokens and grants refused; a second DELETE keeps the first revocation', async () => {
    const created = await create(tenantA.token, { name: 'to revoke', scopes: ['knowledge-bases:read'] });
    const token = (await grant(created.body)).body.access_token;
    assert.equal((await server.request('GET', '/api/v2/knowledge-bases', { token })).status, 200);

    const revoked = await server.request('DELETE', `/api/v2/access-token-clients/${created.body.id}`, { token: tenantA.token });
    assert.equal(revoked.status, 204);
    assert.equal(revoked.text, '');
    const listed = (await list(tenantA.token)).find((client) => client.id === created.body.id);
    assert.ok(listed?.revokedAt);
    assert.ok(Math.abs(Date.parse(listed.revokedAt) - Date.now()) < 60_000);

    assertError(await server.request('GET', '/api/v2/knowledge-bases', { token }), 401, '/v2/knowledge-bases');
    assertError(await grant(created.body), 401, '/v2/auth/access-tokens');

    // Revoking is idempotent: repeating it succeeds and does not move the recorded time.
    const again = await server.request('DELETE', `/api/v2/access-token-clients/${created.body.id}`, { token: tenantA.token });
    assert.equal(again.status, 204);
    assert.equal((await list(tenantA.token)).find((client) => client.id === created.body.id)?.revokedAt, listed.revokedAt);
  });

  test('DELETE of another workspace\'s client is a 404 and leaves it working', async () => {
    const ofB = await create(tenantB.token, { name: 'b keeps it', scopes: ['knowledge-bases:read'] });
    const token = (await grant(ofB.body)).body.access_token;
    const path = `/api/v2/access-token-clients/${ofB.body.id}`;
    assertError(await server.request('DELETE', path, { token: tenantA.token }), 404, path.slice(4));
    assert.equal((await list(tenantB.token)).find((client) => client.id === ofB.body.id)?.revokedAt, null);
    assert.equal((await server.request('GET', '/api/v2/knowledge-bases', { token })).status, 200);
    assert.equal((await grant(ofB.body)).status, 200);
  });

  test('DELETE of an unknown client is a 404, of a non-UUID id a 400', async () => {
    assertError(await server.request('DELETE', `/api/v2/access-token-clients/${UNKNOWN_ID}`, { token: tenantA.token }), 404, `/v2/access-token-clients/${UNKNOWN_ID}`);
    assertError(await server.request('DELETE', '/api/v2/access-token-clients/abc', { token: tenantA.token }), 400, '/v2/access-token-clients/abc', ['params:/id']);
  });

  test('knowledgeBaseIds must name knowledge bases of the caller\'s workspace', async () => {
    const own = await server.request('POST', '/api/v2/knowledge-bases', { token: tenantA.token, body: { name: 'own' } });
    const foreign = await server.request('POST', '/api/v2/knowledge-bases', { token: tenantB.token, body: { name: 'foreign' } });
    const before = (await list(tenantA.token)).length;

    const rejected = await create(tenantA.token, { name: 'x', scopes: ['query:execute'], knowledgeBaseIds: [foreign.body.id] });
    assertError(rejected, 400, '/v2/access-token-clients', ['/knowledgeBaseIds/0']);
    assert.equal((await list(tenantA.token)).length, before);

    const restricted = await create(tenantA.token, { name: 'x', scopes: ['knowledge-bases:read'], knowledgeBaseIds: [own.body.id] });
    assert.equal(restricted.status, 201);
    assert.deepEqual(restricted.body.knowledgeBaseIds, [own.body.id]);
    const token = (await grant(restricted.body)).body.access_token;
    const visible = await server.request('GET', '/api/v2/knowledge-bases', { token });
    assert.deepEqual(visible.body.knowledgeBases.map((knowledgeBase: { id: string }) => knowledgeBase.id), [own.body.id]);
  });

  test('a token cannot create a client holding scopes it lacks', async () => {
    const limited = await server.token(tenantA.workspaceId, ['clients:write', 'query:execute']);
    for (const scopes of [['*'], ['knowledge-bases:write'], ['query:execute', 'sessions:read']]) {
      const answer = await create(limited, { name: 'escalation', scopes });
      assertError(answer, 403, '/v2/access-token-clients');
      assert.match(answer.body.message, /scopes the creating token lacks/);
    }
    const allowed = await create(limited, { name: 'subset', scopes: ['query:execute'] });
    assert.equal(allowed.status, 201);
    assert.deepEqual(allowed.body.scopes, ['query:execute']);
  });

  test('a token restricted to some knowledge bases can only create clients restricted to some of them', async () => {
    const kept = await server.request('POST', '/api/v2/knowledge-bases', { token: tenantA.token, body: { name: 'kept' } });
    const other = await server.request('POST', '/api/v2/knowledge-bases', { token: tenantA.token, body: { name: 'other' } });
    const restricted = await server.token(tenantA.workspaceId, ['*'], { knowledgeBaseIds: [kept.body.id] });
    for (const knowledgeBaseIds of [undefined, null, [other.body.id], [kept.body.id, other.body.id]]) {
      const answer = await create(restricted, { name: 'wider', scopes: ['query:execute'], knowledgeBaseIds });
      assertError(answer, 403, '/v2/access-token-clients');
    }
    const narrower = await create(restricted, { name: 'as narrow', scopes: ['query:execute'], knowledgeBaseIds: [kept.body.id] });
    assert.equal(narrower.status, 201);
    assert.deepEqual(narrower.body.knowledgeBaseIds, [kept.body.id]);
  });
});
