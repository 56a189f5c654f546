import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { decodeJwt, SignJWT, type JWTPayload } from 'jose';
import { ADMIN_KEY, engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { knownScopes } from './scopes.ts';
import { assertExactError as assertError } from '../../../test/assert-error.ts';

const TOKEN_SECRET = new TextEncoder().encode('test-token-secret-0123456789-0123456789');

/** Asserts the spec's error body exactly: status, status name, `path` and any extra fields. */
/** A JWT signed like tokens.ts signs one, with whatever header, claims and secret a test needs. */
function sign(
  claims: JWTPayload,
  options: { alg?: string; secret?: Uint8Array; issuer?: string; expiresAt?: number | null } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: options.alg ?? 'HS256', typ: 'JWT' })
    .setIssuer(options.issuer ?? 'lore')
    .setIssuedAt(now - 120);
  // null: no expiry at all.
  if (options.expiresAt !== null) jwt.setExpirationTime(options.expiresAt ?? now + 600);
  return jwt.sign(options.secret ?? TOKEN_SECRET);
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** The token with one character of its signature changed (a middle one: every bit of it counts). */
function flipSignature(token: string): string {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const middle = Math.floor(signature.length / 2);
  const flipped = signature[middle] === 'A' ? 'B' : 'A';
  return `${header}.${payload}.${signature.slice(0, middle)}${flipped}${signature.slice(middle + 1)}`;
}

describe(`bearer tokens, workspaces and scopes (${engine})`, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  async function createKnowledgeBase(token: string, name: string): Promise<any> {
    const answer = await server.request('POST', '/api/v2/knowledge-bases', { token, body: { name, description: `${name} description` } });
    assert.equal(answer.status, 201, answer.text);
    return answer.body;
  }

  async function createExperience(token: string, name: string, knowledgeBaseIds: string[] = []): Promise<any> {
    const answer = await server.request('POST', '/api/v2/experiences', { token, body: { name, knowledgeBaseIds } });
    assert.equal(answer.status, 201, answer.text);
    return answer.body;
  }

  function grant(clientId: string, clientSecret: string) {
    return server.request('POST', '/v2/auth/access-tokens', { body: { clientId, clientSecret } });
  }

  async function assertOpens(token: string): Promise<void> {
    const answer = await server.request('GET', '/api/v2/knowledge-bases', { token });
    assert.equal(answer.status, 200, answer.text);
  }

  describe('what counts as a valid token', () => {
    let workspaceId: string;
    let otherWorkspaceId: string;
    let genuine: string;
    let claims: JWTPayload;

    before(async () => {
      workspaceId = await server.createWorkspace();
      otherWorkspaceId = await server.createWorkspace();
      genuine = await server.token(workspaceId, ['knowledge-bases:read']);
      const { ws, cid, sub, scope } = decodeJwt(genuine);
      claims = { ws, cid, sub, scope };
    });

    test('a token signed as tokens.ts signs it is accepted (so the refusals below are about what they change)', async () => {
      await assertOpens(genuine);
      await assertOpens(await sign(claims));
    });

    test('expired, forged, unsigned and foreign tokens are 401 with the spec body', async () => {
      const expired = await sign(claims, { expiresAt: Math.floor(Date.now() / 1000) - 60 });
      const [header, payload, signature] = genuine.split('.') as [string, string, string];
      const cases: Array<[string, Promise<string> | string]> = [
        ['expired a minute ago', expired],
        ['a changed signature', flipSignature(genuine)],
        ['a payload widened to `*` under the original signature', `${header}.${base64url({ ...decodeJwt(genuine), scope: '*' })}.${signature}`],
        ['a payload of another workspace under the original signature', `${header}.${base64url({ ...decodeJwt(genuine), ws: randomUUID() })}.${signature}`],
        ['alg none without a signature', `${base64url({ alg: 'none', typ: 'JWT' })}.${payload}.`],
        ['alg none keeping the signature', `${base64url({ alg: 'none', typ: 'JWT' })}.${payload}.${signature}`],
        ['HS512 with the same secret', sign(claims, { alg: 'HS512' })],
        ['HS256 with another secret', sign(claims, { secret: new TextEncoder().encode('another-secret-0123456789-0123456789-xx') })],
        ['another issuer', sign(claims, { issuer: 'someone-else' })],
        ['missing the workspace claim', sign({ cid: claims.cid, sub: claims.sub, scope: claims.scope })],
        ['a client id that names no client', sign({ ...claims, cid: randomUUID() })],
        ['signed for a workspace that is not its client\'s', sign({ ...claims, ws: otherWorkspaceId })],
        ['not a JWT at all', 'not-a-jwt'],
        // Signed with the real secret, but not as lore signs: every claim is checked (RFC 8725).
        ['without an expiry', sign(claims, { expiresAt: null })],
        ['a client id that is not a UUID', sign({ ...claims, cid: 'not-a-uuid' })],
        ['a workspace id that is not a UUID', sign({ ...claims, ws: "x' OR '1'='1" })],
        ['a numeric workspace id', sign({ ...claims, ws: 42 })],
        ['knowledge bases that are not UUIDs', sign({ ...claims, kbs: ['kb-1'] })],
        ['knowledge bases that are not a list', sign({ ...claims, kbs: randomUUID() })],
        ['a scope that is not a string', sign({ ...claims, scope: ['*'] })],
        ['without a subject', sign({ ws: claims.ws, cid: claims.cid, scope: claims.scope })],
      ];
      for (const [name, pending] of cases) {
        const answer = await server.request('GET', '/api/v2/knowledge-bases', { token: await pending });
        assert.equal(answer.status, 401, `${name}: ${answer.text}`);
        assertError(answer, 401, '/v2/knowledge-bases');
      }
      const refusedExpired = await server.request('GET', '/api/v2/knowledge-bases', { token: expired });
      assert.equal(refusedExpired.body.message, 'The access token has expired.');
    });

    test('a token claiming more than its client holds gets only what the client holds, now', async () => {
      const reader = await server.createClient(workspaceId, ['data-ingestion:read', 'knowledge-bases:read']);
      const { body } = await grant(reader.clientId, reader.clientSecret);
      const readerClaims = decodeJwt(body.access_token);
      const widened = await sign({ ...readerClaims, scope: '*' });
      // The client's own scopes still work under the widened token...
      assert.equal((await server.request('GET', '/api/v2/data-ingestion/adapters', { token: widened })).status, 200);
      // ...but nothing beyond them.
      const write = await server.request('POST', '/api/v2/knowledge-bases', { token: widened, body: { name: 'not mine' } });
      assertError(write, 403, '/v2/knowledge-bases', { required: ['knowledge-bases:write'], missing: ['knowledge-bases:write'] });
      const jobId = randomUUID();
      const cancel = await server.request('DELETE', `/api/v2/data-ingestion/jobs/${jobId}`, { token: widened });
      assertError(cancel, 403, `/v2/data-ingestion/jobs/${jobId}`, {
        required: ['data-ingestion:write'],
        missing: ['data-ingestion:write'],
      });
      assert.equal((await server.request('GET', '/api/v2/knowledge-bases', { token: genuine })).body.total, 0, 'nothing was created');

      // A client whose scopes are reduced: its existing token loses the scope at its next use.
      const broad = await server.createClient(workspaceId, ['knowledge-bases:read', 'data-ingestion:read']);
      const token = (await grant(broad.clientId, broad.clientSecret)).body.access_token;
      await server.context.db.query(`UPDATE access_token_clients SET scopes = '{data-ingestion:read}' WHERE workspace_id = $1 AND id = $2`, [
        workspaceId,
        broad.id,
      ]);
      const reduced = await server.request('GET', '/api/v2/knowledge-bases', { token });
      assertError(reduced, 403, '/v2/knowledge-bases', { required: ['knowledge-bases:read'], missing: ['knowledge-bases:read'] });
      assert.equal((await server.request('GET', '/api/v2/data-ingestion/adapters', { token })).status, 200);
    });

    test('a malformed or missing Authorization header is 401', async () => {
      for (const authorization of ['Bearer', 'Token xyz', `Basic ${Buffer.from('a:b').toString('base64')}`, `Bearer ${genuine} extra`]) {
        const answer = await server.request('GET', '/api/v2/knowledge-bases', { headers: { authorization } });
        assert.equal(answer.status, 401, `${authorization}: ${answer.text}`);
        assertError(answer, 401, '/v2/knowledge-bases');
      }
      const missing = await server.request('GET', '/api/v2/knowledge-bases?limit=5');
      assert.equal(assertError(missing, 401, '/v2/knowledge-bases'), 'An Authorization header with a bearer token is required.');
    });
  });

  describe('a token of workspace A and the resources of workspace B', () => {
    let tokenA: string;
    let tokenB: string;
    let knowledgeBaseB: any;
    let experienceB: any;

    before(async () => {
      ({ token: tokenA } = await server.tenant());
      ({ token: tokenB } = await server.tenant());
      knowledgeBaseB = await createKnowledgeBase(tokenB, 'kb of B');
      experienceB = await createExperience(tokenB, 'experience of B', [knowledgeBaseB.id]);
    });

    test('cannot read, change or delete them: 404, and B reads them back unchanged', async () => {
      const targets = [
        { path: `/api/v2/knowledge-bases/${knowledgeBaseB.id}`, original: knowledgeBaseB, name: 'Knowledge base' },
        { path: `/api/v2/experiences/${experienceB.id}`, original: experienceB, name: 'Experience' },
      ];
      for (const { path, original, name } of targets) {
        const attempts = [
          await server.request('GET', path, { token: tokenA }),
          await server.request('PATCH', path, { token: tokenA, body: { name: 'taken over' } }),
          await server.request('DELETE', path, { token: tokenA }),
        ];
        for (const answer of attempts) {
          assert.equal(assertError(answer, 404, path.slice(4)), `${name} ${original.id} does not exist.`);
        }
        const readBack = await server.request('GET', path, { token: tokenB });
        assert.equal(readBack.status, 200, readBack.text);
        assert.deepEqual(readBack.body, original);
      }
    });

    test('does not list them', async () => {
      const knowledgeBases = await server.request('GET', '/api/v2/knowledge-bases', { token: tokenA });
      assert.deepEqual(knowledgeBases.body, { total: 0, knowledgeBases: [] });
      const experiences = await server.request('GET', '/api/v2/experiences', { token: tokenA });
      assert.deepEqual(experiences.body, { total: 0, experiences: [] });
      const clients = await server.request('GET', '/api/v2/access-token-clients', { token: tokenA });
      assert.equal(clients.status, 200, clients.text);
      assert.ok(clients.body.clients.every((client: any) => client.workspaceId !== knowledgeBaseB.workspaceId));
    });

    test('cannot point an experience or a client of A at a knowledge base of B', async () => {
      const experience = await server.request('POST', '/api/v2/experiences', {
        token: tokenA,
        body: { name: 'reaching over', knowledgeBaseIds: [knowledgeBaseB.id] },
      });
      assertError(experience, 400, '/v2/experiences', {
        errors: [{ path: '/knowledgeBaseIds/0', message: `names knowledge base ${knowledgeBaseB.id}, which does not exist in this workspace` }],
      });
      const client = await server.request('POST', '/api/v2/access-token-clients', {
        token: tokenA,
        body: { name: 'reaching over', scopes: ['knowledge-bases:read'], knowledgeBaseIds: [knowledgeBaseB.id] },
      });
      assertError(client, 400, '/v2/access-token-clients', {
        errors: [{ path: '/knowledgeBaseIds/0', message: `names knowledge base ${knowledgeBaseB.id}, which does not exist in this workspace` }],
      });
    });

    test('cannot revoke a client of B', async () => {
      const clientsOfB = await server.request('GET', '/api/v2/access-token-clients', { token: tokenB });
      const clientOfB = clientsOfB.body.clients[0];
      const revocation = await server.request('DELETE', `/api/v2/access-token-clients/${clientOfB.id}`, { token: tokenA });
      assertError(revocation, 404, `/v2/access-token-clients/${clientOfB.id}`);
      await assertOpens(tokenB);
      const readBack = await server.request('GET', '/api/v2/access-token-clients', { token: tokenB });
      assert.deepEqual(readBack.body, clientsOfB.body);
    });
  });

  describe('scopes', () => {
    let workspaceId: string;
    let star: string;
    const tokens = new Map<string, Promise<string>>();

    before(async () => {
      ({ workspaceId, token: star } = await server.tenant());
    });

    /** A token of this workspace holding exactly `scopes`, granted once per set. */
    function tokenWith(scopes: string[]): Promise<string> {
      const key = scopes.join(' ');
      if (!tokens.has(key)) tokens.set(key, server.token(workspaceId, scopes));
      return tokens.get(key)!;
    }

    const allBut = (scope: string) => knownScopes.filter((known) => known !== scope && known !== '*');

    type Rule = { method: string; scope: string; status: number; target: () => Promise<{ path: string; body?: unknown }> };
    const newKnowledgeBase = async () => (await createKnowledgeBase(star, 'scoped')).id as string;
    const newExperience = async () => (await createExperience(star, 'scoped')).id as string;
    // A client the clients:write token may revoke: one holding no scope the token lacks (revocation.test.ts).
    const newClient = async () => (await server.createClient(workspaceId, ['clients:write'])).id;
    const rules: Rule[] = [
      { method: 'GET', scope: 'knowledge-bases:read', status: 200, target: async () => ({ path: '/api/v2/knowledge-bases' }) },
      { method: 'GET', scope: 'knowledge-bases:read', status: 200, target: async () => ({ path: `/api/v2/knowledge-bases/${await newKnowledgeBase()}` }) },
      { method: 'POST', scope: 'knowledge-bases:write', status: 201, target: async () => ({ path: '/api/v2/knowledge-bases', body: { name: 'new' } }) },
      {
        method: 'PATCH',
        scope: 'knowledge-bases:write',
        status: 200,
        target: async () => ({ path: `/api/v2/knowledge-bases/${await newKnowledgeBase()}`, body: { description: 'changed' } }),
      },
      { method: 'DELETE', scope: 'knowledge-bases:write', status: 204, target: async () => ({ path: `/api/v2/knowledge-bases/${await newKnowledgeBase()}` }) },
      { method: 'GET', scope: 'experiences:read', status: 200, target: async () => ({ path: '/api/v2/experiences' }) },
      { method: 'GET', scope: 'experiences:read', status: 200, target: async () => ({ path: `/api/v2/experiences/${await newExperience()}` }) },
      { method: 'POST', scope: 'experiences:write', status: 201, target: async () => ({ path: '/api/v2/experiences', body: { name: 'new' } }) },
      {
        method: 'PATCH',
        scope: 'experiences:write',
        status: 200,
        target: async () => ({ path: `/api/v2/experiences/${await newExperience()}`, body: { instructions: 'changed' } }),
      },
      { method: 'DELETE', scope: 'experiences:write', status: 204, target: async () => ({ path: `/api/v2/experiences/${await newExperience()}` }) },
      {
        method: 'POST',
        scope: 'clients:write',
        status: 201,
        target: async () => ({ path: '/api/v2/access-token-clients', body: { name: 'new', scopes: ['clients:write'] } }),
      },
      { method: 'GET', scope: 'clients:write', status: 200, target: async () => ({ path: '/api/v2/access-token-clients' }) },
      { method: 'DELETE', scope: 'clients:write', status: 204, target: async () => ({ path: `/api/v2/access-token-clients/${await newClient()}` }) },
    ];

    for (const rule of rules) {
      test(`${rule.method} ${rule.scope} route: 403 without ${rule.scope}, ${rule.status} with it or with *`, async () => {
        const lacking = await rule.target();
        const refused = await server.request(rule.method, lacking.path, { token: await tokenWith(allBut(rule.scope)), body: lacking.body });
        assertError(refused, 403, lacking.path.slice(4), { required: [rule.scope], missing: [rule.scope] });
        for (const token of [await tokenWith([rule.scope]), star]) {
          const allowed = await rule.target();
          const answer = await server.request(rule.method, allowed.path, { token, body: allowed.body });
          assert.equal(answer.status, rule.status, answer.text);
        }
      });
    }

    test('a refused write changes nothing', async () => {
      const knowledgeBase = await createKnowledgeBase(star, 'kept');
      const path = `/api/v2/knowledge-bases/${knowledgeBase.id}`;
      const reader = await tokenWith(['knowledge-bases:read']);
      assert.equal((await server.request('PATCH', path, { token: reader, body: { name: 'changed' } })).status, 403);
      assert.equal((await server.request('DELETE', path, { token: reader })).status, 403);
      assert.deepEqual((await server.request('GET', path, { token: reader })).body, knowledgeBase);
    });

    test('a token restricted to some knowledge bases sees and touches only those', async () => {
      const allowed = await createKnowledgeBase(star, 'allowed');
      const other = await createKnowledgeBase(star, 'other');
      const restricted = await server.token(workspaceId, ['knowledge-bases:read', 'knowledge-bases:write'], { knowledgeBaseIds: [allowed.id] });

      const listed = await server.request('GET', '/api/v2/knowledge-bases', { token: restricted });
      assert.deepEqual(listed.body, { total: 1, knowledgeBases: [allowed] });
      assert.deepEqual((await server.request('GET', `/api/v2/knowledge-bases/${allowed.id}`, { token: restricted })).body, allowed);
      const changed = await server.request('PATCH', `/api/v2/knowledge-bases/${allowed.id}`, { token: restricted, body: { description: 'mine' } });
      assert.equal(changed.status, 200, changed.text);

      const otherPath = `/api/v2/knowledge-bases/${other.id}`;
      const attempts = [
        await server.request('GET', otherPath, { token: restricted }),
        await server.request('PATCH', otherPath, { token: restricted, body: { description: 'not mine' } }),
        await server.request('DELETE', otherPath, { token: restricted }),
      ];
      for (const answer of attempts) assertError(answer, 403, otherPath.slice(4));
      assert.deepEqual((await server.request('GET', otherPath, { token: star })).body, other);

      const creation = await server.request('POST', '/api/v2/knowledge-bases', { token: restricted, body: { name: 'sneaky' } });
      assertError(creation, 403, '/v2/knowledge-bases');
      const all = await server.request('GET', '/api/v2/knowledge-bases?limit=100', { token: star });
      assert.ok(!all.body.knowledgeBases.some((knowledgeBase: any) => knowledgeBase.name === 'sneaky'));
    });
  });

  describe('revocation and workspace status', () => {
    test('a revoked client\'s token is refused at once, and it cannot obtain new tokens', async () => {
      const { workspaceId, token: star } = await server.tenant();
      const client = await server.createClient(workspaceId, ['knowledge-bases:read']);
      const token = (await grant(client.clientId, client.clientSecret)).body.access_token;
      // Used once before the revocation, so that a cached standing would let it through.
      await assertOpens(token);

      const revocation = await server.request('DELETE', `/api/v2/access-token-clients/${client.id}`, { token: star });
      assert.equal(revocation.status, 204, revocation.text);
      const refused = await server.request('GET', '/api/v2/knowledge-bases', { token });
      assert.equal(assertError(refused, 401, '/v2/knowledge-bases'), 'The access token\'s client was revoked.');
      assertError(await grant(client.clientId, client.clientSecret), 401, '/v2/auth/access-tokens');

      const listed = await server.request('GET', '/api/v2/access-token-clients', { token: star });
      const revoked = listed.body.clients.find((found: any) => found.id === client.id);
      assert.equal(new Date(revoked.revokedAt).toISOString(), revoked.revokedAt);
      assert.equal((await server.request('DELETE', `/api/v2/access-token-clients/${client.id}`, { token: star })).status, 204);
      const unknown = randomUUID();
      const missing = await server.request('DELETE', `/api/v2/access-token-clients/${unknown}`, { token: star });
      assert.equal(assertError(missing, 404, `/v2/access-token-clients/${unknown}`), `Access-token client ${unknown} does not exist.`);
      await assertOpens(star);
    });

    test('suspending a workspace stops its tokens and grants with 403; re-activating restores them', async () => {
      const workspaceId = await server.createWorkspace('to suspend');
      const client = await server.createClient(workspaceId, ['knowledge-bases:read']);
      const token = (await grant(client.clientId, client.clientSecret)).body.access_token;
      const bystander = (await server.tenant()).token;
      await assertOpens(token);

      const suspended = await server.admin('PATCH', `/api/v2/admin/workspaces/${workspaceId}`, { status: 'suspended' });
      assert.equal(suspended.status, 200, suspended.text);
      assert.equal(suspended.body.status, 'suspended');
      const refused = await server.request('GET', '/api/v2/knowledge-bases', { token });
      assert.equal(assertError(refused, 403, '/v2/knowledge-bases'), 'The workspace is suspended.');
      assertError(await grant(client.clientId, client.clientSecret), 403, '/v2/auth/access-tokens');
      await assertOpens(bystander);

      const reactivated = await server.admin('PATCH', `/api/v2/admin/workspaces/${workspaceId}`, { status: 'active' });
      assert.equal(reactivated.body.status, 'active');
      await assertOpens(token);
      const renewed = await grant(client.clientId, client.clientSecret);
      assert.equal(renewed.status, 200, renewed.text);
      await assertOpens(renewed.body.access_token);
    });
  });

  describe('the admin API', () => {
    test('refuses a missing, wrong or tenant key with 401 and changes nothing', async () => {
      const { workspaceId, token: tenantToken } = await server.tenant();
      const original = await server.admin('GET', `/api/v2/admin/workspaces/${workspaceId}`);
      assert.equal(original.status, 200, original.text);
      const routes: Array<[string, string, unknown?]> = [
        ['GET', '/api/v2/admin/workspaces'],
        ['POST', '/api/v2/admin/workspaces', { name: 'intruder' }],
        ['GET', `/api/v2/admin/workspaces/${workspaceId}`],
        ['PATCH', `/api/v2/admin/workspaces/${workspaceId}`, { status: 'suspended' }],
        ['POST', `/api/v2/admin/workspaces/${workspaceId}/access-token-clients`, { name: 'intruder', scopes: ['*'] }],
      ];
      const credentials: Array<Record<string, string>> = [
        {},
        { authorization: 'Bearer wrong-admin-key' },
        { authorization: `Bearer ${ADMIN_KEY}x` },
        { authorization: `Bearer ${tenantToken}` },
        { authorization: ADMIN_KEY },
      ];
      for (const [method, path, body] of routes) {
        for (const headers of credentials) {
          const answer = await server.request(method, path, { headers, body });
          assertError(answer, 401, path.slice(4));
        }
      }
      assert.deepEqual((await server.admin('GET', `/api/v2/admin/workspaces/${workspaceId}`)).body, original.body);
      const workspaces = await server.admin('GET', '/api/v2/admin/workspaces?limit=100');
      assert.ok(!workspaces.body.workspaces.some((workspace: any) => workspace.name === 'intruder'));
      const clients = await server.request('GET', '/api/v2/access-token-clients', { token: tenantToken });
      assert.ok(!clients.body.clients.some((client: any) => client.name === 'intruder'));
    });
  });
});
