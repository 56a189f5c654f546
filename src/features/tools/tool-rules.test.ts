import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError } from '../../../test/assert-error.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { orderStatusTool, startOrdersApi, type OrdersApi } from '../../../test/orders-api.ts';

describe(`experience tools: rules and refused targets, default settings (${engine})`, () => {
  let server: TestServer;
  let api: OrdersApi;
  let token: string;

  const create = (tools: unknown[]) => server.request('POST', '/api/v2/experiences', { token, body: { name: 'tools', tools } });
  /** A valid https tool with `change` applied (http fields merged). */
  const tool = (change: Record<string, unknown> = {}, http: Record<string, unknown> = {}) => {
    const base = orderStatusTool(api);
    return { ...base, ...change, http: { ...base.http, url: 'https://orders.example.com/orders/{orderId}', ...http } };
  };

  before(async () => {
    api = await startOrdersApi();
    server = await startTestServer();
    ({ token } = await server.tenant(['*']));
  });
  after(async () => {
    await server.close();
    await api.close();
  });

  test('a valid tool is stored and read back with its header masked', async () => {
    const answer = await create([tool()]);
    assert.equal(answer.status, 201, answer.text);
    assert.deepEqual(answer.body.tools, [{ ...tool(), http: { ...tool().http, headers: { 'X-Api-Key': '***' } } }]);
    const { timeoutMs: _omitted, ...http } = tool().http;
    const defaulted = await create([{ ...tool(), http }]);
    assert.equal(defaulted.status, 201, defaulted.text);
    assert.equal(defaulted.body.tools[0].http.timeoutMs, 5000);
  });

  test('every rule is a 400 in the spec shape at the field\'s path', async () => {
    const cases: [unknown[], string][] = [
      [[tool({ name: 'has space' })], '/tools/0/name'],
      [[tool(), tool()], '/tools/1/name'],
      [[tool({ description: '' })], '/tools/0/description'],
      [[tool({ examples: [] })], '/tools/0/examples'],
      [[tool({}, { method: 'PUT' })], '/tools/0/http/method'],
      [[tool({}, { timeoutMs: 50 })], '/tools/0/http/timeoutMs'],
      [[tool({}, { timeoutMs: 30001 })], '/tools/0/http/timeoutMs'],
      [[tool({ parameters: { type: 'array' } })], '/tools/0/parameters/type'],
      [[tool({ parameters: { type: 'object', properties: { id: { type: 'string', pattern: '(' } } } })], '/tools/0/parameters'],
      [[tool({ parameters: { type: 'object', properties: { id: { type: 'strin' } } } })], '/tools/0/parameters/properties/id/type'],
      [[tool({ parameters: { type: 'object', properties: {}, required: ['orderId'] } })], '/tools/0/parameters/required'],
      [[tool({ parameters: { type: 'object', properties: Object.fromEntries(Array.from({ length: 21 }, (_, index) => [`p${index}`, { type: 'string' }])) } })], '/tools/0/parameters/properties'],
      [[tool({}, { url: 'https://orders.example.com/orders/{order}' })], '/tools/0/http/url'],
      [[tool({}, { url: 'https://{orderId}.example.com/orders' })], '/tools/0/http/url'],
      [[tool({}, { url: 'orders/{orderId}' })], '/tools/0/http/url'],
      [[tool({}, { headers: { 'Bad Header': 'x' } })], '/tools/0/http/headers'],
      [Array.from({ length: 17 }, (_, index) => tool({ name: `t${index}` })), '/tools'],
    ];
    for (const [tools, pointer] of cases) assertError(await create(tools), 400, '/v2/experiences', [pointer]);
  });

  test('the messages say what to fix', async () => {
    const missing = await create([tool({}, { url: 'https://orders.example.com/orders/{order}' })]);
    assert.deepEqual(missing.body.errors, [{ path: '/tools/0/http/url', message: "has the placeholder {order}, which is not among the parameters' properties" }]);
    const host = await create([tool({}, { url: 'https://{orderId}.example.com/orders' })]);
    assert.deepEqual(host.body.errors, [{ path: '/tools/0/http/url', message: 'must not have a placeholder in its scheme, host or port' }]);
  });

  test('plain http and literal private addresses are refused unless the settings allow them', async () => {
    const http = await create([tool({}, { url: 'http://orders.example.com/orders/{orderId}' })]);
    assert.deepEqual(http.body.errors, [{ path: '/tools/0/http/url', message: 'must use https (plain http needs TOOLS_ALLOW_HTTP=true)' }]);
    for (const address of ['127.0.0.1', '10.1.2.3', '169.254.169.254', '[::1]', '[::ffff:127.0.0.1]']) {
      const answer = await create([tool({}, { url: `https://${address}/orders/{orderId}` })]);
      assertError(answer, 400, '/v2/experiences', ['/tools/0/http/url']);
      assert.match(answer.body.errors[0].message, /loopback, private, link-local or metadata address .*TOOLS_ALLOW_PRIVATE_TARGETS=true allows it/);
    }
  });

  test('a name that resolves to a private address is refused at connection time, and the answer says the lookup failed', async () => {
    const port = new URL(api.url).port;
    const experience = await create([tool({}, { url: `https://localhost:${port}/orders/{orderId}` })]);
    assert.equal(experience.status, 201, experience.text);
    api.requests.length = 0;
    const answer = await server.request('POST', '/api/v2/query', { body: { text: 'Where is my order 12345?', experienceId: experience.body.id } });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.answer, 'I could not look that up right now (order_status did not answer as expected). Please try again later.');
    assert.equal(api.requests.length, 0);
    const transcript = await server.request('GET', `/api/v2/sessions/${answer.body.sessionId}`, { token });
    const [call] = transcript.body.messages[0].toolCalls;
    assert.equal(call.outcome, 'refused');
    assert.match(call.error, /^Refused to connect: localhost resolves to a loopback, private, link-local or metadata address \(.+\); TOOLS_ALLOW_PRIVATE_TARGETS is off\.$/);
  });
});
