import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { engine, startTestServer, type Answer, type TestServer } from '../../../test/harness.ts';

/** Asserts the spec's error body exactly: status, status name, `path` and any extra fields. */
function assertError(answer: Answer, status: number, path: string, extra: Record<string, unknown> = {}): string {
  assert.equal(answer.status, status, answer.text);
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
  assert.match(answer.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  const { message, timestamp, ...rest } = answer.body;
  assert.deepEqual(rest, { statusCode: status, error: STATUS_CODES[status], path, ...extra });
  assert.equal(typeof message, 'string');
  assert.equal(new Date(timestamp).toISOString(), timestamp);
  return message;
}

describe(`the error body of every status (${engine})`, () => {
  let server: TestServer;
  let token: string;

  before(async () => {
    server = await startTestServer();
    ({ token } = await server.tenant());
  });
  after(() => server.close());

  test('malformed JSON is 400, its path without /api and without the query string', async () => {
    const cases: Array<[string, string]> = [
      ['/api/v2/knowledge-bases?limit=5', '/v2/knowledge-bases'],
      ['/api/v2/experiences', '/v2/experiences'],
      ['/v2/auth/access-tokens', '/v2/auth/access-tokens'],
      ['/api/v2/auth/access-tokens?x=1', '/v2/auth/access-tokens'],
    ];
    for (const [url, path] of cases) {
      const answer = await server.request('POST', url, { token, raw: '{"name": "unterminated', headers: { 'content-type': 'application/json' } });
      assert.equal(assertError(answer, 400, path), 'The request body is not valid JSON: unterminated string at position 22 (line 1, column 23).');
    }
    const empty = await server.request('POST', '/api/v2/knowledge-bases', { token, raw: '', headers: { 'content-type': 'application/json' } });
    assert.equal(
      assertError(empty, 400, '/v2/knowledge-bases'),
      'The request body is empty, but its Content-Type says application/json: send a JSON value, or no Content-Type header.',
    );
  });

  test('schema errors are 400 with `errors` as JSON pointers into the body', async () => {
    const knowledgeBaseFields = 'name, description, chunkSize, chunkOverlap';
    const cases: Array<[string, unknown, Array<{ path: string; message: string }>, string]> = [
      ['/api/v2/knowledge-bases', { name: 5 }, [{ path: '/name', message: 'must be a string' }], 'name must be a string.'],
      ['/api/v2/knowledge-bases', {}, [{ path: '/name', message: 'is required' }], 'name is required.'],
      [
        '/api/v2/knowledge-bases',
        { name: 'x', colour: 'red' },
        [{ path: '/colour', message: `is not a known field (known fields: ${knowledgeBaseFields})` }],
        `colour is not a known field (known fields: ${knowledgeBaseFields}).`,
      ],
      ['/api/v2/knowledge-bases', { name: 'x', chunkSize: 50 }, [{ path: '/chunkSize', message: 'must be at least 100' }], 'chunkSize must be at least 100.'],
      ['/api/v2/knowledge-bases', [], [{ path: '/', message: 'must be an object' }], 'The request body must be an object.'],
      ['/api/v2/experiences', { name: 'x', settings: { topK: 0 } }, [{ path: '/settings/topK', message: 'must be at least 1' }], 'settings.topK must be at least 1.'],
      [
        '/api/v2/experiences',
        { name: 'x', knowledgeBaseIds: ['not-a-uuid'] },
        [{ path: '/knowledgeBaseIds/0', message: 'must be a UUID' }],
        'knowledgeBaseIds[0] must be a UUID.',
      ],
      [
        '/api/v2/experiences',
        { name: 'x', settings: { llmProvider: 'oracle' } },
        [{ path: '/settings/llmProvider', message: 'must be one of: extractive, openai' }],
        'settings.llmProvider must be one of: extractive, openai.',
      ],
    ];
    for (const [url, body, errors, expected] of cases) {
      const answer = await server.request('POST', url, { token, body });
      assert.equal(assertError(answer, 400, url.slice(4), { errors }), expected);
    }
  });

  test('every schema error of a body is listed, and the message counts the rest', async () => {
    const answer = await server.request('POST', '/api/v2/knowledge-bases', { token, body: { name: 5, colour: 'red', chunkSize: 'big' } });
    const message = assertError(answer, 400, '/v2/knowledge-bases', {
      errors: [
        { path: '/colour', message: 'is not a known field (known fields: name, description, chunkSize, chunkOverlap)' },
        { path: '/name', message: 'must be a string' },
        { path: '/chunkSize', message: 'must be an integer' },
      ],
    });
    assert.equal(message, 'colour is not a known field (known fields: name, description, chunkSize, chunkOverlap) (and 2 more problems).');
  });

  test('query-string and path-parameter errors name their part', async () => {
    const limit = await server.request('GET', '/api/v2/knowledge-bases?limit=0', { token });
    const limitMessage = assertError(limit, 400, '/v2/knowledge-bases', { errors: [{ path: 'querystring:/limit', message: 'must be at least 1' }] });
    assert.equal(limitMessage, 'Query parameter limit must be at least 1.');
    const id = await server.request('GET', '/api/v2/knowledge-bases/not-a-uuid', { token });
    const idMessage = assertError(id, 400, '/v2/knowledge-bases/not-a-uuid', { errors: [{ path: 'params:/id', message: 'must be a UUID' }] });
    assert.equal(idMessage, 'Path parameter id must be a UUID.');
  });

  test('an unsupported content type is 415', async () => {
    const answer = await server.request('POST', '/api/v2/knowledge-bases', { token, raw: '<name>x</name>', headers: { 'content-type': 'application/xml' } });
    assert.equal(assertError(answer, 415, '/v2/knowledge-bases'), 'The content type application/xml is not supported here; send application/json.');
  });

  test('no token is 401, a bad token is 401', async () => {
    const missing = await server.request('GET', '/api/v2/experiences?limit=1');
    assert.equal(assertError(missing, 401, '/v2/experiences'), 'An Authorization header with a bearer token is required.');
    const invalid = await server.request('GET', '/api/v2/experiences', { token: 'x.y.z' });
    assert.equal(assertError(invalid, 401, '/v2/experiences'), 'The access token is malformed, expired or has an invalid signature.');
  });

  test('a missing scope is 403 with `required` and `missing`', async () => {
    const { token: reader } = await server.tenant(['experiences:read']);
    const answer = await server.request('POST', '/api/v2/experiences', { token: reader, body: { name: 'x' } });
    const message = assertError(answer, 403, '/v2/experiences', { required: ['experiences:write'], missing: ['experiences:write'] });
    assert.equal(message, 'The access token lacks the scope experiences:write.');
  });

  test('an unknown route is 404, inside and outside /api', async () => {
    const cases: Array<[string, string, string]> = [
      ['GET', '/api/v2/nothing-here?x=1', '/v2/nothing-here'],
      ['DELETE', '/api/v2/knowledge-bases', '/v2/knowledge-bases'],
      ['GET', '/v2/nothing-here', '/v2/nothing-here'],
      ['GET', '/apiary', '/apiary'],
    ];
    for (const [method, url, path] of cases) {
      const answer = await server.request(method, url, { token });
      const message = assertError(answer, 404, path);
      assert.equal(message, `No route matches this method and path. (${method} ${url.split('?')[0]})`);
    }
  });

  test('an unknown id is 404 naming the resource', async () => {
    const id = randomUUID();
    const cases: Array<[string, string]> = [
      [`/api/v2/knowledge-bases/${id}`, `Knowledge base ${id} does not exist.`],
      [`/api/v2/experiences/${id}`, `Experience ${id} does not exist.`],
    ];
    for (const [url, expected] of cases) {
      assert.equal(assertError(await server.request('GET', url, { token }), 404, url.slice(4)), expected);
    }
  });

  // Destroys this server's schema: it must stay the last test of the file.
  test('an unexpected error is 500 without a stack trace or SQL', async () => {
    await server.context.db.exec('DROP TABLE experiences CASCADE');
    const answer = await server.request('GET', '/api/v2/experiences?limit=3', { token });
    assert.equal(assertError(answer, 500, '/v2/experiences'), 'An unexpected error occurred.');
    for (const leak of ['relation', 'does not exist', 'SELECT', 'stack', '.ts:', '    at ']) {
      assert.ok(!answer.text.includes(leak), `the body leaks ${JSON.stringify(leak)}: ${answer.text}`);
    }
  });
});
