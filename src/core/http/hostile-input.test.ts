/**
 * Hostile input found by testers on every route (issue 8): NUL characters and unpaired
 * surrogates, deep nesting, paging values that are not integers, broken multipart, requests Node
 * itself refuses, and uploads larger than a route takes. Each gets a 4xx in the spec's shape and
 * nothing stored changes; ingested content is repaired instead (docs/decisions.md).
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { assertError, assertExactError } from '../../../test/assert-error.ts';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../test/fake-openai.ts';
import { ADMIN_KEY, engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { createKnowledgeBase, ingest, submit, waitForJob } from '../../../test/ingestion.ts';
import { MAX_JSON_DEPTH } from './input-guard.ts';

/** `{a: {a: ... leaf}}`, `levels` objects deep, built as text (JSON.stringify would recurse). */
function nested(levels: number, leaf = '1'): string {
  return `${'{"a":'.repeat(levels)}${leaf}${'}'.repeat(levels)}`;
}

/** Sends raw bytes on a socket and returns everything the server wrote before closing it. */
function rawExchange(url: string, bytes: Buffer): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(bytes));
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
}

/** The status line and the JSON body of a raw HTTP answer. */
function parseRaw(answer: string): { status: number; body: any } {
  const [head, body] = answer.split('\r\n\r\n', 2) as [string, string];
  return { status: Number(head.split(' ')[1]), body: JSON.parse(body) };
}

/** Uploads `bytes` of body with Node's HTTP client, as a client that sends it all before reading, and reads the answer. */
function upload(url: string, path: string, bytes: number, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(bytes), ...headers } });
    outgoing.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
    });
    outgoing.on('error', reject);
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sent = 0;
    const pump = () => {
      while (sent < bytes) {
        const piece = chunk.subarray(0, Math.min(chunk.length, bytes - sent));
        sent += piece.length;
        if (!outgoing.write(piece)) return void outgoing.once('drain', pump);
      }
      outgoing.end();
    };
    pump();
  });
}

describe(`hostile input (${engine})`, () => {
  let fake: FakeOpenAi;
  let server: TestServer;
  let token: string;
  let knowledgeBaseId: string;
  let experienceId: string;
  let sessionId: string;

  before(async () => {
    fake = await startFakeOpenAi();
    server = await startTestServer({ ...fakeEmbeddingsEnv(fake), RATE_LIMIT_IP_PER_MINUTE: '100000', RATE_LIMIT_SESSION_PER_MINUTE: '100000' });
    ({ token } = await server.tenant());
    knowledgeBaseId = await createKnowledgeBase(server, token);
    await ingest(server, token, knowledgeBaseId, [{ id: 'returns', content: 'Items can be returned within 30 days of delivery.' }]);
    const experience = await server.request('POST', '/api/v2/experiences', { token, body: { name: 'help', knowledgeBaseIds: [knowledgeBaseId] } });
    experienceId = experience.body.id;
    const session = await server.request('POST', '/api/v2/sessions', { token, body: { experienceId, metadata: { source: 'test' } } });
    assert.equal(session.status, 201, session.text);
    sessionId = session.body.id;
  });
  after(async () => {
    await server?.close();
    await fake?.close();
  });

  /** What a tenant has stored, read back through the API: none of the refused requests may change it. */
  async function snapshot(): Promise<unknown> {
    const paths = ['/api/v2/knowledge-bases', '/api/v2/experiences', '/api/v2/sessions', '/api/v2/access-token-clients', `/api/v2/knowledge-bases/${knowledgeBaseId}/entries`];
    return Promise.all(paths.map(async (path) => (await server.request('GET', path, { token })).body));
  }

  test('a NUL character in a JSON string or key is 400 naming it, on routes with and without a token', async () => {
    const before = await snapshot();
    const cases: Array<{ method: string; url: string; body: unknown; pointer: string; token?: string }> = [
      { method: 'POST', url: '/api/v2/query', body: { experienceId, text: 'return\u0000 policy' }, pointer: '/text' },
      { method: 'POST', url: '/api/v2/query', body: { experienceId, text: 'hi', metadata: { 'page\u0000': '/' } }, pointer: '/metadata/page\u0000' },
      { method: 'POST', url: '/api/v2/query', body: { experienceId, text: 'hi', userId: 'a\u0000b' }, pointer: '/userId' },
      { method: 'POST', url: '/v2/auth/access-tokens', body: { clientId: 'lore_\u0000', clientSecret: 'x' }, pointer: '/clientId' },
      { method: 'POST', url: '/api/v2/knowledge-bases', body: { name: 'docs\u0000' }, pointer: '/name', token },
      { method: 'POST', url: '/api/v2/sessions', body: { experienceId, metadata: { a: ['x', 'y\u0000'] } }, pointer: '/metadata/a/1', token },
      { method: 'PATCH', url: `/api/v2/sessions/${sessionId}`, body: { metadata: { '\u0000': 1 } }, pointer: '/metadata/\u0000', token },
      { method: 'POST', url: `/api/v2/knowledge-bases/${knowledgeBaseId}/retrieve`, body: { query: 'x\u0000' }, pointer: '/query', token },
    ];
    for (const { method, url, body, pointer, token: bearer } of cases) {
      const answer = await server.request(method, url, { body, token: bearer });
      assertError(answer, 400, url.replace(/^\/api/, ''), [pointer]);
      assert.match(answer.body.message, /must not contain NUL characters or unpaired surrogates|is a key that contains NUL/);
    }
    // A form body, the token grant's other encoding, is checked the same way.
    const form = await server.request('POST', '/v2/auth/access-tokens', {
      raw: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'lore_\u0000', client_secret: 'x' }),
    });
    assertError(form, 400, '/v2/auth/access-tokens', ['/client_id']);
    const query = await server.request('GET', '/api/v2/sessions?userId=a%00b', { token });
    assertError(query, 400, '/v2/sessions', ['querystring:/userId']);
    // An unpaired surrogate cannot be stored in jsonb either.
    const surrogate = await server.request('POST', '/api/v2/sessions', { token, raw: `{"experienceId":"${experienceId}","metadata":{"a":"\\ud800"}}`, headers: { 'content-type': 'application/json' } });
    assertError(surrogate, 400, '/v2/sessions', ['/metadata/a']);
    assert.deepEqual(await snapshot(), before);
  });

  test('NUL characters in ingested content are removed, and the record is stored (JSON and multipart)', async () => {
    const jobId = await submit(server, token, knowledgeBaseId, [
      { id: 'nul\u0000id', title: 'Null\u0000 title', content: 'Warranty lasts two\u0000 years.', metadata: { 'k\u0000': 'v\u0000', lone: 'a\ud800b' } },
    ]);
    const job = await waitForJob(server, token, jobId);
    assert.equal(job.status, 'completed', JSON.stringify(job));
    assert.deepEqual(job.data.progress, { processed: 1, total: 1, successful: 1, failed: 0, skipped: 0 });
    const entry = await server.request('GET', `/api/v2/knowledge-bases/${knowledgeBaseId}/entries/${job.data.results[0].entryId}`, { token });
    assert.equal(entry.status, 200, entry.text);
    assert.equal(entry.body.recordId, 'nulid');
    assert.equal(entry.body.title, 'Null title');
    assert.equal(entry.body.content, 'Warranty lasts two years.');
    assert.deepEqual(entry.body.metadata, { k: 'v', lone: 'a\ufffdb' });

    const form = new FormData();
    form.set('adapterType', 'generic-json');
    form.set('knowledgeBaseId', knowledgeBaseId);
    form.set('data', new Blob([JSON.stringify({ records: [{ id: 'upload', content: 'Uploaded\u0000 file.' }] })]), 'records.json');
    const uploaded = await server.request('POST', '/api/v2/data-ingestion/jobs', { token, raw: form });
    assert.equal(uploaded.status, 202, uploaded.text);
    const uploadJob = await waitForJob(server, token, uploaded.body.jobId);
    assert.equal(uploadJob.status, 'completed');
    const stored = await server.request('GET', `/api/v2/knowledge-bases/${knowledgeBaseId}/entries/${uploadJob.data.results[0].entryId}`, { token });
    assert.equal(stored.body.content, 'Uploaded file.');
  });

  test(`JSON nested deeper than ${MAX_JSON_DEPTH} levels is 400 before anything recurses over it`, async () => {
    const before = await snapshot();
    const json = { 'content-type': 'application/json' };
    for (const levels of [MAX_JSON_DEPTH, 5_000, 100_000]) {
      const cases = [
        ['/api/v2/query', `{"experienceId":"${experienceId}","text":"hi","metadata":${nested(levels)}}`],
        ['/api/v2/sessions', `{"experienceId":"${experienceId}","metadata":${nested(levels)}}`],
        ['/api/v2/data-ingestion/jobs', `{"adapterType":"generic-json","knowledgeBaseId":"${knowledgeBaseId}","data":{"records":[{"id":"deep","content":"x","metadata":${nested(levels)}}]}}`],
      ] as const;
      for (const [url, raw] of cases) {
        const answer = await server.request('POST', url, { token, raw, headers: json });
        assertError(answer, 400, url.slice(4));
        assert.match(answer.body.message, new RegExp(`nests deeper than ${MAX_JSON_DEPTH} levels`), answer.text);
      }
    }
    assert.deepEqual(await snapshot(), before);
    // Just inside the limit is accepted: the body itself is one level, metadata the rest.
    const inside = await server.request('POST', '/api/v2/sessions', { token, raw: `{"experienceId":"${experienceId}","metadata":${nested(MAX_JSON_DEPTH - 2)}}`, headers: json });
    assert.equal(inside.status, 201, inside.text);
  });

  test('limit and offset that are not integers in range are 400 on every list route', async () => {
    const lists = [
      '/api/v2/knowledge-bases',
      '/api/v2/experiences',
      '/api/v2/sessions',
      '/api/v2/data-ingestion/jobs',
      `/api/v2/knowledge-bases/${knowledgeBaseId}/entries`,
      '/api/v2/admin/workspaces',
    ];
    const bad = [
      ['limit', 'Infinity'],
      ['limit', '1e20'],
      ['limit', '0'],
      ['limit', '101'],
      ['limit', '2.5'],
      ['offset', 'Infinity'],
      ['offset', '-Infinity'],
      ['offset', 'NaN'],
      ['offset', '1e20'],
      ['offset', '99999999999999999999'],
      ['offset', '-1'],
      ['offset', '0.5'],
    ];
    for (const list of lists) {
      const bearer = list.includes('/admin/') ? ADMIN_KEY : token;
      for (const [name, value] of bad) {
        const answer = await server.request('GET', `${list}?${name}=${value}`, { token: bearer });
        assertError(answer, 400, list.slice(4), [`querystring:/${name}`]);
      }
      const far = await server.request('GET', `${list}?offset=${Number.MAX_SAFE_INTEGER}`, { token: bearer });
      assert.equal(far.status, 200, far.text);
    }
  });

  test('a timestamp PostgreSQL cannot store (year 0, an offset of 16 hours or more) is 400, in a body or a query string', async () => {
    for (const timestamp of ['0000-01-01T00:00:00Z', '2024-01-01T00:00:00+23:59', '2024-01-01T00:00:00-16:00']) {
      const answer = await server.request('POST', '/api/v2/query', { body: { experienceId, text: 'returns?', timestamp } });
      assertError(answer, 400, '/v2/query', ['/timestamp']);
    }
    for (const date of ['0000-01-01', '0000-01-01T00:00:00Z', '2024-01-01T00:00:00%2B23:59']) {
      const answer = await server.request('GET', `/api/v2/data-ingestion/jobs?startDate=${date}`, { token });
      assertError(answer, 400, '/v2/data-ingestion/jobs', ['querystring:/startDate']);
    }
    const edge = await server.request('GET', '/api/v2/data-ingestion/jobs?startDate=0001-01-01T00:00:00%2B15:59', { token });
    assert.equal(edge.status, 200, edge.text);
  });

  test('a multipart body without a boundary, or cut short, is 400', async () => {
    const before = await snapshot();
    const truncated = `--abc\r\nContent-Disposition: form-data; name="adapterType"\r\n\r\ngeneric-json`;
    const cases: Array<[string, string]> = [
      ['multipart/form-data', 'adapterType=generic-json'],
      ['multipart/form-data; boundary=abc', truncated],
    ];
    for (const [contentType, raw] of cases) {
      const answer = await server.request('POST', '/api/v2/data-ingestion/jobs', { token, raw, headers: { 'content-type': contentType } });
      assertExactError(answer, 400, '/v2/data-ingestion/jobs');
      assert.match(answer.body.message, /^The multipart\/form-data body cannot be read\./);
    }
    // An empty form is well formed: it lacks the fields.
    const empty = await server.request('POST', '/api/v2/data-ingestion/jobs', { token, raw: '', headers: { 'content-type': 'multipart/form-data; boundary=abc' } });
    assertError(empty, 400, '/v2/data-ingestion/jobs', ['/adapterType', '/data', '/knowledgeBaseId']);
    assert.deepEqual(await snapshot(), before);
  });

  test('errors raised before a route runs carry the spec body too', async () => {
    const badEncoding = await server.request('GET', '/api/v2/knowledge-bases/%E0%A4%A', { token });
    assertExactError(badEncoding, 400, '/v2/knowledge-bases/%E0%A4%A');
    const longId = 'a'.repeat(101);
    const long = await server.request('GET', `/api/v2/knowledge-bases/${longId}`, { token });
    assertExactError(long, 414, `/v2/knowledge-bases/${longId}`);
    const header = await server.request('GET', '/api/v2/knowledge-bases', { headers: { authorization: `Bearer ${'a'.repeat(100_000)}` } });
    assertExactError(header, 431, '/v2/knowledge-bases');

    const refusedByNode = [
      Buffer.from('GET /api/v2/knowledge-bases/\u0000 HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1'),
      Buffer.from('GET /api/v2/knowledge-bases HTTP/1.1\r\nHost: x\r\nX-Trace: a\u0000b\r\n\r\n', 'latin1'),
      Buffer.concat([Buffer.from('GET /api/v2/knowledge-bases HTTP/1.1\r\nHost: x\r\nX-Trace: '), Buffer.from([0x7f, 0x01]), Buffer.from('\r\n\r\n')]),
    ];
    for (const bytes of refusedByNode) {
      const answer = parseRaw(await rawExchange(server.url, bytes));
      assert.equal(answer.status, 400);
      const { message, timestamp, path, ...rest } = answer.body;
      assert.deepEqual(rest, { statusCode: 400, error: 'Bad Request' });
      assert.equal(typeof message, 'string');
      assert.equal(new Date(timestamp).toISOString(), timestamp);
      assert.match(path, /^\/v2\/knowledge-bases/);
    }
  });

  test('a client uploading more than a route takes reads the 413, up to 64 MB', async () => {
    for (const megabytes of [5, 64]) {
      const answer = await upload(server.url, '/api/v2/query', megabytes * 1024 * 1024);
      assert.equal(answer.status, 413);
      assert.equal(answer.body.statusCode, 413);
      assert.equal(answer.body.path, '/v2/query');
      assert.match(answer.body.message, /^The request body is too large\. This route takes 1 MB at most\.$/);
    }
    // Refused before its body is read (no token): the upload still completes and reads the 401.
    const unauthenticated = await upload(server.url, '/api/v2/data-ingestion/jobs', 5 * 1024 * 1024);
    assert.equal(unauthenticated.status, 401);
    assert.equal(unauthenticated.body.path, '/v2/data-ingestion/jobs');
  });
});
