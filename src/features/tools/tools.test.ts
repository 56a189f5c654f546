import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError } from '../../../test/assert-error.ts';
import { captureLog } from '../../../test/captured-log.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { ingest } from '../../../test/ingestion.ts';
import { createQueryExperience, type QueryExperience } from '../../../test/query-experience.ts';
import { ORDERS_API_KEY, orderStatusTool, startOrdersApi, type OrdersApi } from '../../../test/orders-api.ts';

const handover = { id: 'human', label: 'Talk to a person', action: { type: 'trigger_handover' } };

describe(`experience tools, offline (${engine})`, () => {
  let server: TestServer;
  let api: OrdersApi;
  let shop: QueryExperience;
  /** An experience with the same tool and no knowledge base. */
  let bare: string;
  const log = captureLog();

  const ask = async (text: string, sessionId?: string, experienceId = shop.experienceId) => {
    const answer = await server.request('POST', '/api/v2/query', { body: { text, experienceId, ...(sessionId ? { sessionId } : {}) } });
    assert.equal(answer.status, 200, answer.text);
    return answer.body;
  };
  const transcript = async (sessionId: string) => (await server.request('GET', `/api/v2/sessions/${sessionId}`, { token: shop.token })).body;

  before(async () => {
    api = await startOrdersApi();
    server = await startTestServer({ TOOLS_ALLOW_HTTP: 'true', TOOLS_ALLOW_PRIVATE_TARGETS: 'true', LOG_LEVEL: 'info' }, log.logger);
    shop = await createQueryExperience(server, { tools: [orderStatusTool(api)], actions: [handover] });
    const shipping = { id: 'shipping', title: 'When orders ship', content: 'Orders ship within 24 hours. We e-mail you a tracking link as soon as your order has shipped.' };
    assert.equal((await ingest(server, shop.token, shop.knowledgeBaseId, [shipping])).status, 'completed');
    const created = await server.request('POST', '/api/v2/experiences', { token: shop.token, body: { name: 'bare', tools: [orderStatusTool(api)] } });
    assert.equal(created.status, 201, created.text);
    bare = created.body.id;
  });
  after(async () => {
    await server.close();
    await api.close();
  });

  test('a question close to an example, with the order number, is answered from the API through the stored header', async () => {
    api.requests.length = 0;
    const body = await ask('Where is my order 12345?');
    assert.equal(body.answer, 'Your order 12345 is shipped, expected on 2026-12-05.');
    assert.deepEqual(body.sources, []);
    assert.equal(api.requests.length, 1);
    assert.equal(api.requests[0]!.url, '/orders/12345');
    assert.equal(api.requests[0]!.headers['x-api-key'], ORDERS_API_KEY);
    const messages = (await transcript(body.sessionId)).messages;
    assert.equal(messages.length, 1);
    assert.equal(messages[0].grounded, true);
    assert.equal(messages[0].toolCalls.length, 1);
    const [call] = messages[0].toolCalls;
    assert.deepEqual({ ...call, latencyMs: 0 }, { name: 'order_status', arguments: { orderId: '12345' }, httpStatus: 200, latencyMs: 0, outcome: 'succeeded', error: null });
  });

  test('a question about something else is answered from the knowledge base, and calls nothing', async () => {
    api.requests.length = 0;
    const body = await ask('How long do I have to return an item?');
    assert.match(body.answer, /30 days/);
    assert.equal(body.sources[0].title, 'Returning an item');
    assert.equal(api.requests.length, 0);
    assert.deepEqual((await transcript(body.sessionId)).messages[0].toolCalls, []);
  });

  test('a question close to the examples without the order number does not call the tool: the knowledge base answers it', async () => {
    api.requests.length = 0;
    const body = await ask('Has my order shipped yet?');
    assert.match(body.answer, /tracking link/);
    assert.equal(body.sources[0].title, 'When orders ship');
    assert.equal(api.requests.length, 0);
    assert.deepEqual((await transcript(body.sessionId)).messages[0].toolCalls, []);
  });

  test('where the knowledge base holds nothing, it asks for the missing argument, and the follow-up that gives it is answered', async () => {
    api.requests.length = 0;
    const first = await ask('Has my order shipped yet?', undefined, bare);
    assert.equal(first.answer, 'I can look that up for you: please tell me the order number (orderId).');
    assert.deepEqual(first.sources, []);
    assert.equal(api.requests.length, 0);
    const second = await ask('It is 555555', first.sessionId, bare);
    assert.equal(second.answer, 'Your order 555555 is being packed, expected on 2026-12-09.');
    const messages = (await transcript(first.sessionId)).messages;
    assert.deepEqual(messages.map((message: any) => message.toolCalls.length), [0, 1]);
  });

  test('a failing API gives an answer that says the lookup failed, with the handover action, never a 500', async () => {
    const cases = [
      { mode: 'unavailable', outcome: 'failed', httpStatus: 503, error: 'The API answered 503: {"error":"maintenance"}' },
      { mode: 'stall', outcome: 'timed_out', httpStatus: null, error: 'No complete answer within 1000 ms.' },
      { mode: 'invalid-json', outcome: 'failed', httpStatus: 200, error: 'The API answered invalid JSON.' },
      { mode: 'redirect', outcome: 'failed', httpStatus: 302, error: 'The API answered a redirect (302), which tools do not follow.' },
    ] as const;
    try {
      for (const { mode, ...expected } of cases) {
        api.mode = mode;
        const body = await ask('Where is my order 12345?');
        assert.equal(body.answer, 'I could not look that up right now (order_status did not answer as expected). Please try again later.', mode);
        assert.deepEqual(body.actions.map((action: any) => action.id), ['human'], mode);
        const [call] = (await transcript(body.sessionId)).messages[0].toolCalls;
        assert.deepEqual({ outcome: call.outcome, httpStatus: call.httpStatus, error: call.error }, expected, mode);
        assert.equal((await transcript(body.sessionId)).messages[0].grounded, false);
      }
    } finally {
      api.mode = 'normal';
    }
  });

  test('reads mask header values; a PATCH that sends "***" keeps the stored value, a new value replaces it', async () => {
    const read = await server.request('GET', `/api/v2/experiences/${shop.experienceId}`, { token: shop.token });
    assert.equal(read.status, 200);
    assert.deepEqual(read.body.tools[0].http.headers, { 'X-Api-Key': '***' });
    assert.ok(!read.text.includes(ORDERS_API_KEY));
    const listed = await server.request('GET', '/api/v2/experiences', { token: shop.token });
    assert.ok(!listed.text.includes(ORDERS_API_KEY));
    assert.deepEqual(listed.body.experiences[0].tools[0].http.headers, { 'X-Api-Key': '***' });

    const tools = read.body.tools.map((tool: any) => ({ ...tool, description: 'Order lookup.' }));
    const kept = await server.request('PATCH', `/api/v2/experiences/${shop.experienceId}`, { token: shop.token, body: { tools } });
    assert.equal(kept.status, 200, kept.text);
    assert.equal(kept.body.tools[0].description, 'Order lookup.');
    assert.deepEqual(kept.body.tools[0].http.headers, { 'X-Api-Key': '***' });
    api.requests.length = 0;
    assert.equal((await ask('Where is my order 12345?')).answer, 'Your order 12345 is shipped, expected on 2026-12-05.');
    assert.equal(api.requests[0]!.headers['x-api-key'], ORDERS_API_KEY);

    const replaced = tools.map((tool: any) => ({ ...tool, http: { ...tool.http, headers: { 'X-Api-Key': 'a-wrong-key' } } }));
    assert.equal((await server.request('PATCH', `/api/v2/experiences/${shop.experienceId}`, { token: shop.token, body: { tools: replaced } })).status, 200);
    api.requests.length = 0;
    const refused = await ask('Where is my order 12345?');
    assert.equal(api.requests[0]!.headers['x-api-key'], 'a-wrong-key');
    assert.equal((await transcript(refused.sessionId)).messages[0].toolCalls[0].error, 'The API answered 401: {"error":"bad key"}');

    const restored = await server.request('PATCH', `/api/v2/experiences/${shop.experienceId}`, { token: shop.token, body: { tools: [orderStatusTool(api)] } });
    assert.equal(restored.status, 200);
  });

  test('"***" for a header with nothing stored is a 400 at its path', async () => {
    const tool = orderStatusTool(api, { name: 'other', http: { method: 'GET', url: `${api.url}/orders/{orderId}`, headers: { 'X-Api-Key': '***' } } });
    const answer = await server.request('POST', '/api/v2/experiences', { token: shop.token, body: { name: 'masked', tools: [tool] } });
    assertError(answer, 400, '/v2/experiences', ['/tools/0/http/headers/X-Api-Key']);
  });

  test('the test endpoint calls a stored tool with sample arguments', async () => {
    const path = `/api/v2/experiences/${shop.experienceId}/tools/order_status/test`;
    const ok = await server.request('POST', path, { token: shop.token, body: { arguments: { orderId: '12345' } } });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual({ ...ok.body, call: { ...ok.body.call, latencyMs: 0 } }, {
      call: { name: 'order_status', arguments: { orderId: '12345' }, httpStatus: 200, latencyMs: 0, outcome: 'succeeded', error: null },
      response: '{"orderId":"12345","status":"shipped","eta":"2026-12-05"}',
      answer: 'Your order 12345 is shipped, expected on 2026-12-05.',
    });
    const unknown = await server.request('POST', `/api/v2/experiences/${shop.experienceId}/tools/nope/test`, { token: shop.token, body: { arguments: {} } });
    assertError(unknown, 404, `/v2/experiences/${shop.experienceId}/tools/nope/test`);
    const invalid = await server.request('POST', path, { token: shop.token, body: { arguments: { orderId: 'abc' } } });
    assertError(invalid, 400, path.slice(4), ['/arguments/orderId']);
    const missing = await server.request('POST', path, { token: shop.token, body: { arguments: {} } });
    assertError(missing, 400, path.slice(4), ['/arguments/orderId']);
  });

  test('no header value reaches a log line', () => {
    assert.ok(log.lines.length > 0);
    assert.ok(!JSON.stringify(log.lines).includes(ORDERS_API_KEY));
  });
});
