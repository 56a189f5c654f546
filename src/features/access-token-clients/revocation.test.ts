/**
 * Decision 25 for revocation: a `clients:write` token may revoke only a client whose scopes and
 * knowledge bases it holds itself. Each caller meets each kind of target client; a refusal is the
 * 403 of the creation guard and leaves the target working (it still obtains tokens, and its
 * token still opens its routes).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertExactError } from '../../../test/assert-error.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { createKnowledgeBase } from '../../../test/ingestion.ts';

const CLIENTS = '/api/v2/access-token-clients';
const LACKS = (scopes: string) => `A token cannot revoke a client holding scopes it lacks: ${scopes}.`;
const WIDER = 'A token restricted to some knowledge bases can only revoke clients restricted to some of them.';

type Kind = { scopes: string[]; knowledgeBases?: Array<'kb1' | 'kb2'> };

/** The clients of the matrix, as callers and as targets. */
const kinds = {
  star: { scopes: ['*'] },
  kb1Star: { scopes: ['*'], knowledgeBases: ['kb1'] },
  writer: { scopes: ['clients:write', 'knowledge-bases:read'] },
  kb1Writer: { scopes: ['clients:write', 'knowledge-bases:read'], knowledgeBases: ['kb1'] },
  reader: { scopes: ['knowledge-bases:read'] },
  kb1Reader: { scopes: ['knowledge-bases:read'], knowledgeBases: ['kb1'] },
  kb12Reader: { scopes: ['knowledge-bases:read'], knowledgeBases: ['kb1', 'kb2'] },
  ingester: { scopes: ['data-ingestion:write', 'knowledge-bases:read'] },
} satisfies Record<string, Kind>;
type KindName = keyof typeof kinds;

/** What each caller gets revoking each target: 204, or the 403's message. */
const matrix: Record<string, Partial<Record<KindName, 204 | string>>> = {
  star: { star: 204, kb1Star: 204, writer: 204, reader: 204, kb12Reader: 204, ingester: 204 },
  // A `*` client's token narrowed to clients:write holds no more than that.
  'star narrowed to clients:write': { star: LACKS('*'), writer: LACKS('knowledge-bases:read'), reader: LACKS('knowledge-bases:read') },
  writer: { star: LACKS('*'), kb1Star: LACKS('*'), writer: 204, reader: 204, kb1Reader: 204, kb12Reader: 204, ingester: LACKS('data-ingestion:write') },
  kb1Star: { star: WIDER, kb1Star: 204, writer: WIDER, reader: WIDER, kb1Reader: 204, kb12Reader: WIDER, ingester: WIDER },
  kb1Writer: { star: LACKS('*'), kb1Star: LACKS('*'), writer: WIDER, reader: WIDER, kb1Reader: 204, kb12Reader: WIDER, ingester: LACKS('data-ingestion:write') },
};

describe(`revoking access-token clients: never a stronger one (${engine})`, () => {
  let server: TestServer;
  let workspaceId: string;
  const knowledgeBases: Record<'kb1' | 'kb2', string> = { kb1: '', kb2: '' };
  const callers: Record<string, string> = {};

  const grant = (client: { clientId: string; clientSecret: string }, scopes?: string[]) =>
    server.request('POST', '/v2/auth/access-tokens', { body: { clientId: client.clientId, clientSecret: client.clientSecret, scopes } });
  const createKind = (kind: Kind) =>
    server.createClient(workspaceId, kind.scopes, kind.knowledgeBases ? { knowledgeBaseIds: kind.knowledgeBases.map((name) => knowledgeBases[name]) } : {});
  const tokenOf = async (client: { clientId: string; clientSecret: string }, scopes?: string[]) => {
    const answer = await grant(client, scopes);
    assert.equal(answer.status, 200, answer.text);
    return answer.body.access_token as string;
  };

  before(async () => {
    server = await startTestServer();
    const tenant = await server.tenant();
    workspaceId = tenant.workspaceId;
    knowledgeBases.kb1 = await createKnowledgeBase(server, tenant.token, { name: 'kb1' });
    knowledgeBases.kb2 = await createKnowledgeBase(server, tenant.token, { name: 'kb2' });
    for (const name of ['star', 'writer', 'kb1Star', 'kb1Writer'] as const) callers[name] = await tokenOf(await createKind(kinds[name]));
    callers['star narrowed to clients:write'] = await tokenOf(await createKind(kinds.star), ['clients:write']);
  });
  after(() => server.close());

  /** The client as the workspace's list shows it (to a `*` token). */
  async function listed(id: string) {
    const answer = await server.request('GET', CLIENTS, { token: callers.star });
    assert.equal(answer.status, 200, answer.text);
    return answer.body.clients.find((client: { id: string }) => client.id === id);
  }

  for (const [caller, row] of Object.entries(matrix)) {
    for (const [target, outcome] of Object.entries(row) as Array<[KindName, 204 | string]>) {
      test(`${caller} revokes ${target}: ${outcome === 204 ? 204 : 403}`, async () => {
        const client = await createKind(kinds[target]);
        const targetToken = await tokenOf(client);
        const path = `${CLIENTS}/${client.id}`;
        const answer = await server.request('DELETE', path, { token: callers[caller] });
        if (outcome === 204) {
          assert.equal(answer.status, 204, answer.text);
          assert.equal(answer.text, '');
          assert.notEqual((await listed(client.id)).revokedAt, null);
          assertExactError(await grant(client), 401, '/v2/auth/access-tokens');
          return;
        }
        assert.equal(assertExactError(answer, 403, path.slice(4)), outcome);
        assert.equal((await listed(client.id)).revokedAt, null);
        assert.equal((await grant(client)).status, 200, 'the refused target still obtains tokens');
        const opened = await server.request('GET', '/api/v2/knowledge-bases', { token: targetToken });
        assert.equal(opened.status, 200, opened.text);
      });
    }
  }

  test('a client of another workspace, or none, is a 404 before any comparison', async () => {
    const other = await server.tenant();
    const foreign = (await server.request('GET', CLIENTS, { token: other.token })).body.clients[0];
    for (const id of [foreign.id, '00000000-0000-4000-8000-000000000000']) {
      const path = `${CLIENTS}/${id}`;
      const answer = await server.request('DELETE', path, { token: callers.kb1Writer });
      assert.equal(assertExactError(answer, 404, path.slice(4)), `Access-token client ${id} does not exist.`);
    }
    assert.equal((await server.request('GET', '/api/v2/knowledge-bases', { token: other.token })).status, 200);
  });

  test('no route changes a client\'s scopes or secret: PATCH, PUT and rotate-secret are unknown routes', async () => {
    const client = await createKind(kinds.star);
    for (const [method, path] of [
      ['PATCH', `${CLIENTS}/${client.id}`],
      ['PUT', `${CLIENTS}/${client.id}`],
      ['POST', `${CLIENTS}/${client.id}/rotate-secret`],
    ] as const) {
      const answer = await server.request(method, path, { token: callers.writer, body: { scopes: ['query:execute'] } });
      assert.equal(assertExactError(answer, 404, path.slice(4)), `No route matches this method and path. (${method} ${path})`);
    }
    const token = await tokenOf(client);
    assert.equal((await server.request('GET', CLIENTS, { token })).status, 200, 'the * client keeps its scopes');
  });
});
