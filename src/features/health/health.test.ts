import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';

describe(`health, readiness, metrics and OpenAPI (${engine})`, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  test('GET /healthz answers ok', async () => {
    const answer = await server.request('GET', '/healthz');
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, { status: 'ok' });
    assert.match(answer.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  });

  test('GET /readyz reports the engine once migrations are applied', async () => {
    const answer = await server.request('GET', '/readyz');
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, { status: 'ready', engine, details: { redis: { state: 'not configured' } } });
  });

  test('GET /readyz answers 503 in the error shape when a migration is missing', async () => {
    await server.context.db.query('DELETE FROM schema_migrations WHERE version = 1');
    try {
      const answer = await server.request('GET', '/readyz');
      assert.equal(answer.status, 503);
      assert.equal(answer.body.statusCode, 503);
      assert.equal(answer.body.error, 'Service Unavailable');
      assert.match(answer.body.message, /migration/);
      assert.equal(answer.body.path, '/readyz');
    } finally {
      await server.context.db.query("INSERT INTO schema_migrations (version, name) VALUES (1, 'foundation')");
    }
  });

  test('GET /metrics counts requests by route and status in Prometheus text', async () => {
    await server.request('GET', '/healthz');
    await server.request('GET', '/no/such/route');
    const answer = await server.request('GET', '/metrics');
    assert.equal(answer.status, 200);
    assert.match(answer.headers.get('content-type') ?? '', /text\/plain/);
    assert.match(answer.text, /lore_http_requests_total\{method="GET",route="\/healthz",status_code="200"\} \d+/);
    assert.match(answer.text, /lore_http_requests_total\{method="GET",route="unmatched",status_code="404"\} \d+/);
    assert.match(answer.text, /lore_http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/healthz",status_code="200"\}/);
  });

  test('an unknown route is a 404 in the spec error shape', async () => {
    const answer = await server.request('GET', '/api/v2/nothing-here?x=1');
    assert.equal(answer.status, 404);
    assert.deepEqual(Object.keys(answer.body).sort(), ['error', 'message', 'path', 'statusCode', 'timestamp']);
    assert.equal(answer.body.error, 'Not Found');
    assert.equal(answer.body.path, '/v2/nothing-here');
    assert.ok(!Number.isNaN(Date.parse(answer.body.timestamp)));
  });

  test('/openapi.json is OpenAPI 3.1 and describes every route with its schemas', async () => {
    const answer = await server.request('GET', '/openapi.json');
    assert.equal(answer.status, 200);
    assert.equal(answer.body.openapi, '3.1.0');
    const paths = answer.body.paths as Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: unknown }>>;
    const expected: Array<[string, string]> = [
      ['/v2/auth/access-tokens', 'post'],
      ['/api/v2/admin/workspaces', 'post'],
      ['/api/v2/admin/workspaces', 'get'],
      ['/api/v2/admin/workspaces/{id}', 'patch'],
      ['/api/v2/admin/workspaces/{id}/access-token-clients', 'post'],
      ['/api/v2/access-token-clients', 'post'],
      ['/api/v2/access-token-clients', 'get'],
      ['/api/v2/access-token-clients/{id}', 'delete'],
      ['/api/v2/knowledge-bases', 'post'],
      ['/api/v2/knowledge-bases', 'get'],
      ['/api/v2/knowledge-bases/{id}', 'get'],
      ['/api/v2/knowledge-bases/{id}', 'patch'],
      ['/api/v2/knowledge-bases/{id}', 'delete'],
      ['/api/v2/experiences', 'post'],
      ['/api/v2/experiences', 'get'],
      ['/api/v2/experiences/{id}', 'get'],
      ['/api/v2/experiences/{id}', 'patch'],
      ['/api/v2/experiences/{id}', 'delete'],
      ['/api/v2/experiences/{id}/widget', 'get'],
      ['/api/v2/data-ingestion/jobs', 'post'],
      ['/api/v2/data-ingestion/jobs', 'get'],
      ['/api/v2/data-ingestion/jobs/{jobId}', 'get'],
      ['/api/v2/data-ingestion/jobs/{jobId}', 'delete'],
      ['/api/v2/data-ingestion/adapters', 'get'],
      ['/api/v2/knowledge-bases/{id}/entries', 'get'],
      ['/api/v2/knowledge-bases/{id}/entries/{entryId}', 'get'],
      ['/api/v2/knowledge-bases/{id}/entries/{entryId}', 'delete'],
      ['/api/v2/knowledge-bases/{id}/retrieve', 'post'],
      ['/healthz', 'get'],
      ['/readyz', 'get'],
    ];
    for (const [path, method] of expected) {
      const operation = paths[path]?.[method];
      assert.ok(operation, `${method.toUpperCase()} ${path} is documented`);
      assert.ok(Object.keys(operation.responses).some((status) => status.startsWith('2')), `${method} ${path} has a success response`);
      if (method === 'post' || method === 'patch') assert.ok(operation.requestBody, `${method} ${path} has a request body`);
    }
    assert.ok(answer.body.components.schemas.ErrorBody, 'the error body is a named schema');
    const submit = paths['/api/v2/data-ingestion/jobs']!.post as any;
    assert.deepEqual(Object.keys(submit.requestBody.content).sort(), ['application/json', 'multipart/form-data'], 'both submit forms are documented');
  });

  test('GET /docs serves the browsable reference', async () => {
    const answer = await server.request('GET', '/docs/');
    assert.equal(answer.status, 200);
    assert.match(answer.text, /swagger/i);
  });
});
