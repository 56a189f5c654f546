/**
 * The origin rules of POST /api/v2/query and of answer feedback, over HTTP: an experience's
 * allowedOrigins patterns decide which pages may call it (403 otherwise), allowed answers (errors
 * included) let the browser read them, refused ones do not, and CORS preflights are answered for
 * any origin because the experience is only known from the body.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { assertExactError } from '../../../test/assert-error.ts';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../test/fake-openai.ts';
import { startTestServer, type Answer, type TestServer } from '../../../test/harness.ts';
import { askAboutReturns, createQueryExperience } from '../../../test/query-experience.ts';

let fake: FakeOpenAi;
let server: TestServer;

before(async () => {
  fake = await startFakeOpenAi();
  server = await startTestServer(fakeEmbeddingsEnv(fake));
});
after(async () => {
  await server?.close();
  await fake?.close();
});

function varies(answer: Answer): string[] {
  return (answer.headers.get('vary') ?? '').split(',').map((name) => name.trim().toLowerCase());
}

/** A 200 answer that a page at `origin` may read (or, without an Origin, no CORS grant at all). */
function assertAnswered(answer: Answer, origin: string | undefined): void {
  assert.equal(answer.status, 200, answer.text);
  assert.equal(typeof answer.body.answer, 'string');
  assert.equal(answer.body.sources[0]?.title, 'Returning an item');
  assert.equal(answer.headers.get('access-control-allow-origin'), origin ?? null);
  assert.ok(varies(answer).includes('origin'), `vary: ${answer.headers.get('vary')}`);
}

/** The 403 of a refused origin, which the refused page may not read. */
function assertRefused(answer: Answer, message: string): void {
  assert.equal(assertExactError(answer, 403, '/v2/query'), message);
  assert.equal(answer.headers.get('access-control-allow-origin'), null);
  assert.ok(varies(answer).includes('origin'), `vary: ${answer.headers.get('vary')}`);
}

async function expectOrigins(experienceId: string, allowed: string[], refused: string[]): Promise<void> {
  for (const origin of allowed) assertAnswered(await askAboutReturns(server, experienceId, { origin }), origin);
  for (const origin of refused) {
    assertRefused(await askAboutReturns(server, experienceId, { origin }), `The origin ${origin} is not allowed for experience ${experienceId}.`);
  }
}

describe('allowedOrigins patterns', () => {
  test('an exact pattern admits that origin only', async () => {
    const { experienceId } = await createQueryExperience(server, { allowedOrigins: ['https://www.example.com'] });
    await expectOrigins(
      experienceId,
      // Host names compare without case, as browsers lower-case them anyway.
      ['https://www.example.com', 'https://WWW.Example.com'],
      ['https://example.com', 'http://www.example.com', 'https://www.example.com:8443', 'https://www.example.com.evil.test', 'https://shop.www.example.com'],
    );
  });

  test('a wildcard pattern admits subdomains at any depth, with the same scheme and port', async () => {
    const { experienceId } = await createQueryExperience(server, { allowedOrigins: ['https://*.example.com'] });
    await expectOrigins(
      experienceId,
      ['https://a.example.com', 'https://a.b.example.com'],
      ['https://example.com', 'http://a.example.com', 'https://a.example.com:8443', 'https://evil-example.com', 'https://a.example.com.evil.test'],
    );
  });

  test('a pattern with a port admits that port only; a default port is the same as none', async () => {
    const { experienceId } = await createQueryExperience(server, { allowedOrigins: ['http://localhost:3000', 'https://shop.example.com:443'] });
    await expectOrigins(
      experienceId,
      ['http://localhost:3000', 'https://shop.example.com', 'https://shop.example.com:443'],
      ['http://localhost', 'http://localhost:3001', 'https://localhost:3000', 'https://shop.example.com:8443'],
    );
  });

  test('without patterns any origin is admitted, the opaque null origin and no Origin at all included', async () => {
    const { experienceId } = await createQueryExperience(server);
    for (const origin of ['https://anyone.test', 'http://localhost:8080', 'null']) {
      assertAnswered(await askAboutReturns(server, experienceId, { origin }), origin);
    }
    assertAnswered(await askAboutReturns(server, experienceId), undefined);
  });

  test('the opaque null origin (sandboxed frames, file: pages) matches no pattern', async () => {
    const { experienceId } = await createQueryExperience(server, { allowedOrigins: ['https://*.example.com'] });
    assertRefused(await askAboutReturns(server, experienceId, { origin: 'null' }), `The origin null is not allowed for experience ${experienceId}.`);
  });
});

describe('no Origin header while patterns are set', () => {
  test('an anonymous caller is refused; a server-side caller with a query:execute token is answered', async () => {
    const { workspaceId, experienceId } = await createQueryExperience(server, { allowedOrigins: ['https://www.example.com'] });
    assertRefused(
      await askAboutReturns(server, experienceId),
      `Experience ${experienceId} only answers the origins in its allowedOrigins, and the request has no Origin header.`,
    );
    const token = await server.token(workspaceId, ['query:execute']);
    assertAnswered(await askAboutReturns(server, experienceId, { token }), undefined);
  });

  test('a token lacking query:execute is still refused for its scope', async () => {
    const { workspaceId, experienceId } = await createQueryExperience(server, { allowedOrigins: ['https://www.example.com'] });
    const token = await server.token(workspaceId, ['sessions:read']);
    const answer = await askAboutReturns(server, experienceId, { token });
    assert.equal(
      assertExactError(answer, 403, '/v2/query', { required: ['query:execute'], missing: ['query:execute'] }),
      'The access token lacks the scope query:execute.',
    );
  });

  test('a token does not lift the check of an Origin that is sent', async () => {
    const { workspaceId, experienceId } = await createQueryExperience(server, { allowedOrigins: ['https://www.example.com'] });
    const token = await server.token(workspaceId, ['query:execute']);
    assertRefused(
      await askAboutReturns(server, experienceId, { token, origin: 'https://evil.test' }),
      `The origin https://evil.test is not allowed for experience ${experienceId}.`,
    );
  });
});

describe('CORS', () => {
  for (const path of ['/api/v2/query', `/api/v2/queries/${randomUUID()}/feedback`]) {
    test(`OPTIONS ${path.replace(/[0-9a-f-]{36}/, '{id}')} allows any origin to POST with a token`, async () => {
      const origin = 'https://widget.example.org';
      const answer = await server.request('OPTIONS', path, {
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,authorization' },
      });
      assert.equal(answer.status, 204, answer.text);
      assert.equal(answer.text, '');
      assert.equal(answer.headers.get('access-control-allow-origin'), origin);
      const list = (name: string) => (answer.headers.get(name) ?? '').split(',').map((item) => item.trim().toLowerCase());
      assert.ok(list('access-control-allow-methods').includes('post'), answer.headers.get('access-control-allow-methods') ?? '');
      assert.ok(list('access-control-allow-headers').includes('authorization'));
      assert.ok(list('access-control-allow-headers').includes('content-type'));
      assert.ok(Number(answer.headers.get('access-control-max-age')) > 0, answer.headers.get('access-control-max-age') ?? '');
      assert.ok(varies(answer).includes('origin'));
    });
  }

  test('errors answered to an allowed origin are readable by its page', async () => {
    const origin = 'https://www.example.com';
    const { experienceId } = await createQueryExperience(server, { allowedOrigins: [origin], requireAuth: true });
    const readable = (answer: Answer) => {
      assert.equal(answer.headers.get('access-control-allow-origin'), origin);
      assert.ok(varies(answer).includes('origin'));
      assert.match(answer.headers.get('access-control-expose-headers') ?? '', /retry-after/i);
    };
    const post = (path: string, body: unknown) => server.request('POST', path, { body, headers: { origin } });

    const invalid = await post('/api/v2/query', { experienceId });
    assertExactError(invalid, 400, '/v2/query', { errors: [{ path: '/text', message: 'is required' }] });
    readable(invalid);

    const missing = randomUUID();
    const unknown = await post('/api/v2/query', { text: 'Hello?', experienceId: missing });
    assert.equal(assertExactError(unknown, 404, '/v2/query'), `Experience ${missing} does not exist.`);
    readable(unknown);

    const anonymous = await askAboutReturns(server, experienceId, { origin });
    assert.equal(
      assertExactError(anonymous, 401, '/v2/query'),
      `Experience ${experienceId} requires a bearer access token with the scope query:execute.`,
    );
    readable(anonymous);

    const queryId = randomUUID();
    const feedback = await post(`/api/v2/queries/${queryId}/feedback`, { rating: 'up' });
    assertExactError(feedback, 404, `/v2/queries/${queryId}/feedback`);
    readable(feedback);
  });

  test('feedback follows the origin rules of its experience', async () => {
    const origin = 'https://help.example.com';
    const { token, experienceId } = await createQueryExperience(server, { allowedOrigins: ['https://*.example.com'] });
    const asked = await askAboutReturns(server, experienceId, { origin });
    assertAnswered(asked, origin);
    const path = `/api/v2/queries/${asked.body.queryId}/feedback`;

    const rated = await server.request('POST', path, { body: { rating: 'down', comment: 'too short' }, headers: { origin } });
    assert.equal(rated.status, 204, rated.text);
    assert.equal(rated.headers.get('access-control-allow-origin'), origin);

    const refused = await server.request('POST', path, { body: { rating: 'up' }, headers: { origin: 'https://example.org' } });
    assert.equal(
      assertExactError(refused, 403, `/v2/queries/${asked.body.queryId}/feedback`),
      `The origin https://example.org is not allowed for experience ${experienceId}.`,
    );
    assert.equal(refused.headers.get('access-control-allow-origin'), null);

    const session = await server.request('GET', `/api/v2/sessions/${asked.body.sessionId}`, { token });
    assert.equal(session.status, 200, session.text);
    assert.deepEqual(
      session.body.messages.map((message: any) => [message.queryId, message.feedback?.rating, message.feedback?.comment]),
      [[asked.body.queryId, 'down', 'too short']],
    );
  });
});
