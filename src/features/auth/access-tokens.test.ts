import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { engine, startTestServer, type Answer, type TestServer } from '../../../test/harness.ts';
import { assertExactError as assertError } from '../../../test/assert-error.ts';

const grantUrls = ['/v2/auth/access-tokens', '/api/v2/auth/access-tokens'];

/** Asserts the spec's error body exactly: status, status name, `path` and any extra fields. */
function basic(clientId: string, clientSecret: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` };
}

describe(`POST /v2/auth/access-tokens, the client-credentials grant (${engine})`, () => {
  let server: TestServer;
  let workspaceId: string;
  let client: { id: string; clientId: string; clientSecret: string };
  const clientScopes = ['knowledge-bases:read', 'knowledge-bases:write', 'clients:write'];

  before(async () => {
    server = await startTestServer();
    workspaceId = await server.createWorkspace();
    client = await server.createClient(workspaceId, clientScopes);
  });
  after(() => server.close());

  function grantForm(fields: Record<string, string>, options: { url?: string; headers?: Record<string, string> } = {}) {
    return server.request('POST', options.url ?? grantUrls[0]!, { raw: new URLSearchParams(fields), headers: options.headers ?? {} });
  }

  function grantJson(body: Record<string, unknown>, url = grantUrls[0]!) {
    return server.request('POST', url, { body });
  }

  const form = () => ({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret });

  /** Checks a token's claims against the client it was issued to, and that it opens a guarded route. */
  async function assertTokenOf(token: string, scope: string): Promise<void> {
    assert.deepEqual(decodeProtectedHeader(token), { alg: 'HS256', typ: 'JWT' });
    const { iat, exp, ...claims } = decodeJwt(token);
    assert.deepEqual(claims, { iss: 'lore', sub: client.clientId, ws: workspaceId, cid: client.id, scope });
    assert.equal(exp! - iat!, 3600);
    assert.ok(Math.abs(iat! - Date.now() / 1000) < 60, 'issued now');
    const listed = await server.request('GET', '/api/v2/knowledge-bases', { token });
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(listed.body, { total: 0, knowledgeBases: [] });
  }

  function assertNoStore(answer: Answer): void {
    assert.equal(answer.headers.get('cache-control'), 'no-store');
    assert.equal(answer.headers.get('pragma'), 'no-cache');
  }

  test('the form grant answers an OAuth token on both URLs', async () => {
    for (const url of grantUrls) {
      const answer = await grantForm(form(), { url });
      assert.equal(answer.status, 200, answer.text);
      assertNoStore(answer);
      assert.deepEqual(answer.body, { access_token: answer.body.access_token, token_type: 'Bearer', expires_in: 3600, scope: clientScopes.join(' ') });
      await assertTokenOf(answer.body.access_token, clientScopes.join(' '));
    }
  });

  test('HTTP Basic client authentication with grant_type in the form body', async () => {
    for (const url of grantUrls) {
      const answer = await grantForm({ grant_type: 'client_credentials' }, { url, headers: basic(client.clientId, client.clientSecret) });
      assert.equal(answer.status, 200, answer.text);
      assertNoStore(answer);
      assert.deepEqual(answer.body, { access_token: answer.body.access_token, token_type: 'Bearer', expires_in: 3600, scope: clientScopes.join(' ') });
      await assertTokenOf(answer.body.access_token, clientScopes.join(' '));
    }
  });

  test('the JSON form answers the OAuth names and their camelCase twins', async () => {
    for (const url of grantUrls) {
      const answer = await grantJson({ clientId: client.clientId, clientSecret: client.clientSecret }, url);
      assert.equal(answer.status, 200, answer.text);
      assertNoStore(answer);
      const token = answer.body.access_token;
      assert.deepEqual(answer.body, {
        access_token: token,
        token_type: 'Bearer',
        expires_in: 3600,
        scope: clientScopes.join(' '),
        accessToken: token,
        tokenType: 'Bearer',
        expiresIn: 3600,
      });
      await assertTokenOf(token, clientScopes.join(' '));
    }
  });

  test('a narrowed token holds only the scope asked for, in every form', async () => {
    const answers = [
      await grantForm({ ...form(), scope: 'knowledge-bases:read' }),
      await grantForm({ grant_type: 'client_credentials', scope: 'knowledge-bases:read' }, { headers: basic(client.clientId, client.clientSecret) }),
      await grantJson({ clientId: client.clientId, clientSecret: client.clientSecret, scopes: ['knowledge-bases:read'] }),
    ];
    for (const answer of answers) {
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.body.scope, 'knowledge-bases:read');
      await assertTokenOf(answer.body.access_token, 'knowledge-bases:read');
      const write = await server.request('POST', '/api/v2/knowledge-bases', { token: answer.body.access_token, body: { name: 'not allowed' } });
      assertError(write, 403, '/v2/knowledge-bases', { required: ['knowledge-bases:write'], missing: ['knowledge-bases:write'] });
    }
  });

  test('several space-separated scopes narrow to exactly those', async () => {
    const answer = await grantForm({ ...form(), scope: 'clients:write knowledge-bases:read' });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.scope, 'clients:write knowledge-bases:read');
    assert.equal(decodeJwt(answer.body.access_token).scope, 'clients:write knowledge-bases:read');
  });

  test('a scope the client lacks, `*` for a client without it, or an unknown scope is 400', async () => {
    for (const scope of ['experiences:read', 'knowledge-bases:read experiences:write', '*']) {
      const message = assertError(await grantForm({ ...form(), scope }), 400, '/v2/auth/access-tokens');
      assert.match(message, /does not hold the scope/);
    }
    const json = await grantJson({ clientId: client.clientId, clientSecret: client.clientSecret, scopes: ['sessions:read'] });
    assert.match(assertError(json, 400, '/v2/auth/access-tokens'), /does not hold the scope sessions:read/);
    const unknown = await grantForm({ ...form(), scope: 'knowledge-bases:delete' });
    assert.equal(assertError(unknown, 400, '/v2/auth/access-tokens'), 'Unknown scope: knowledge-bases:delete.');
  });

  test('a `*` client can narrow to any scope', async () => {
    const star = await server.createClient(workspaceId, ['*']);
    const answer = await grantForm({
      grant_type: 'client_credentials',
      client_id: star.clientId,
      client_secret: star.clientSecret,
      scope: 'clients:write experiences:write',
    });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.scope, 'clients:write experiences:write');
    const clients = await server.request('GET', '/api/v2/access-token-clients', { token: answer.body.access_token });
    assert.equal(clients.status, 200, clients.text);
    const read = await server.request('GET', '/api/v2/knowledge-bases', { token: answer.body.access_token });
    assertError(read, 403, '/v2/knowledge-bases', { required: ['knowledge-bases:read'], missing: ['knowledge-bases:read'] });
  });

  test('a wrong secret or an unknown client id is 401 in every form', async () => {
    const wrongSecret = client.clientSecret.replace(/^./, (first) => (first === 'a' ? 'b' : 'a'));
    const unknownId = 'lore_000000000000000000000000';
    const answers = [
      await grantForm({ ...form(), client_secret: wrongSecret }),
      await grantForm({ ...form(), client_id: unknownId }),
      await grantJson({ clientId: client.clientId, clientSecret: wrongSecret }, grantUrls[1]),
      await grantJson({ clientId: unknownId, clientSecret: client.clientSecret }, grantUrls[1]),
    ];
    for (const answer of answers) {
      assert.equal(assertError(answer, 401, '/v2/auth/access-tokens'), 'The client credentials are invalid.');
      assert.equal(answer.headers.get('www-authenticate'), null);
    }
  });

  test('wrong HTTP Basic credentials are 401 with a Basic challenge', async () => {
    const cases = [
      basic(client.clientId, 'wrong-secret'),
      basic('lore_unknown', client.clientSecret),
      { authorization: `Basic ${Buffer.from('no-colon-here').toString('base64')}` },
      // RFC 6749 2.3.1 form-encodes id and secret inside Basic: a broken escape is bad credentials, not a crash.
      basic('%zz', client.clientSecret),
    ];
    for (const headers of cases) {
      const answer = await grantForm({ grant_type: 'client_credentials' }, { headers });
      assertError(answer, 401, '/v2/auth/access-tokens');
      assert.equal(answer.headers.get('www-authenticate'), 'Basic realm="lore"');
    }
  });

  test('a revoked client cannot obtain tokens', async () => {
    const revoked = await server.createClient(workspaceId, ['knowledge-bases:read']);
    const admin = await grantForm(form());
    const revocation = await server.request('DELETE', `/api/v2/access-token-clients/${revoked.id}`, { token: admin.body.access_token });
    assert.equal(revocation.status, 204, revocation.text);
    const credentials = { grant_type: 'client_credentials', client_id: revoked.clientId, client_secret: revoked.clientSecret };
    assert.equal(assertError(await grantForm(credentials), 401, '/v2/auth/access-tokens'), 'The client credentials are invalid.');
    const json = await grantJson({ clientId: revoked.clientId, clientSecret: revoked.clientSecret });
    assertError(json, 401, '/v2/auth/access-tokens');
  });

  test('a grant type other than client_credentials is 400', async () => {
    for (const grant_type of ['password', 'authorization_code', '']) {
      const message = assertError(await grantForm({ ...form(), grant_type }), 400, '/v2/auth/access-tokens');
      assert.equal(message, 'Only grant_type=client_credentials is supported.');
    }
    const withoutGrantType = await grantForm({ client_id: client.clientId, client_secret: client.clientSecret });
    assertError(withoutGrantType, 400, '/v2/auth/access-tokens');
    const json = await grantJson({ grant_type: 'password', clientId: client.clientId, clientSecret: client.clientSecret });
    assertError(json, 400, '/v2/auth/access-tokens');
  });

  test('missing credentials are 400 with `errors` naming each missing field', async () => {
    const withoutSecret = await grantForm({ grant_type: 'client_credentials', client_id: client.clientId }, { url: grantUrls[1] });
    assertError(withoutSecret, 400, '/v2/auth/access-tokens', {
      errors: [{ path: '/client_secret', message: 'is required (or clientSecret, or HTTP Basic authentication)' }],
    });
    const empty = await grantJson({});
    assertError(empty, 400, '/v2/auth/access-tokens', {
      errors: [
        { path: '/client_id', message: 'is required (or clientId, or HTTP Basic authentication)' },
        { path: '/client_secret', message: 'is required (or clientSecret, or HTTP Basic authentication)' },
      ],
    });
  });
});
