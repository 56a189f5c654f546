/**
 * Experience tools with the `openai` generator, end to end: POST /api/v2/query against the local
 * fake that speaks the chat protocol, whose model calls the loopback orders API's tool.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { fakeChatEnv, fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../test/fake-openai.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { ORDERS_API_KEY, orderStatusTool, startOrdersApi, type OrdersApi } from '../../../test/orders-api.ts';
import { createQueryExperience, type QueryExperience } from '../../../test/query-experience.ts';

describe(`experience tools, with the openai generator (${engine})`, () => {
  let fake: FakeOpenAi;
  let api: OrdersApi;
  let server: TestServer;
  let shop: QueryExperience;

  const ask = async (text: string) => {
    const answer = await server.request('POST', '/api/v2/query', { body: { text, experienceId: shop.experienceId } });
    assert.equal(answer.status, 200, answer.text);
    return answer.body;
  };
  const toolCalls = async (sessionId: string) => {
    const transcript = await server.request('GET', `/api/v2/sessions/${sessionId}`, { token: shop.token });
    assert.equal(transcript.status, 200, transcript.text);
    return transcript.body.messages[0].toolCalls.map((call: any) => ({ ...call, latencyMs: 0 }));
  };
  const orderCall = (id: string, args = '{"orderId":"12345"}') => ({ toolCalls: [{ id, name: 'order_status', arguments: args }] });
  const shipped = { name: 'order_status', arguments: { orderId: '12345' }, httpStatus: 200, latencyMs: 0, outcome: 'succeeded', error: null };

  before(async () => {
    fake = await startFakeOpenAi();
    api = await startOrdersApi();
    server = await startTestServer({ ...fakeEmbeddingsEnv(fake), ...fakeChatEnv(fake), TOOLS_ALLOW_HTTP: 'true', TOOLS_ALLOW_PRIVATE_TARGETS: 'true' });
    shop = await createQueryExperience(server, { tools: [orderStatusTool(api)] });
  });
  after(async () => {
    await server?.close();
    await api?.close();
    await fake?.close();
  });
  beforeEach(() => {
    fake.chat.replies = [];
    fake.chat.requests = [];
    api.requests.length = 0;
  });

  test('the model calls the tool, gets the API\'s JSON as the tool message, and answers from it', async () => {
    fake.chat.replies.push(orderCall('call_1'));
    fake.chat.answer = 'Your order 12345 has shipped and arrives on 2026-12-05.';
    const body = await ask('Where is my order 12345?');
    assert.equal(body.answer, 'Your order 12345 has shipped and arrives on 2026-12-05.');
    assert.deepEqual(api.requests.map((request) => [request.url, request.headers['x-api-key']]), [['/orders/12345', ORDERS_API_KEY]]);
    assert.equal(fake.chat.requests.length, 2);
    const [first, second] = fake.chat.requests.map((request) => request.body);
    assert.deepEqual(first.tools, [{ type: 'function', function: { name: 'order_status', description: orderStatusTool(api).description, parameters: orderStatusTool(api).parameters } }]);
    assert.deepEqual(second.messages.slice(-2), [
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'order_status', arguments: '{"orderId":"12345"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"orderId":"12345","status":"shipped","eta":"2026-12-05"}' },
    ]);
    // The tool's header is the API's secret: the model never sees it.
    assert.ok(!fake.chat.requests.some((request) => JSON.stringify(request.body).includes(ORDERS_API_KEY)));
    assert.deepEqual(await toolCalls(body.sessionId), [shipped]);
  });

  test('a call whose arguments fail the parameters is answered to the model as an error and never sent', async () => {
    fake.chat.replies.push(orderCall('call_1', '{"orderId":"12"}'));
    fake.chat.answer = 'Could you give me the whole order number?';
    const body = await ask('Where is my order 12?');
    assert.equal(body.answer, 'Could you give me the whole order number?');
    assert.equal(api.requests.length, 0);
    const toolMessage = fake.chat.requests[1]!.body.messages.at(-1);
    assert.deepEqual(Object.keys(toolMessage), ['role', 'tool_call_id', 'content']);
    assert.match(JSON.parse(toolMessage.content).error, /^The arguments do not match the parameters: \/orderId /);
    const [call] = await toolCalls(body.sessionId);
    assert.deepEqual([call.name, call.arguments, call.httpStatus, call.outcome], ['order_status', { orderId: '12' }, null, 'invalid_arguments']);
  });

  test('three rounds of calls at most, then a request without tools gives the answer', async () => {
    fake.chat.replies.push(orderCall('call_1'), orderCall('call_2'), orderCall('call_3'));
    fake.chat.answer = 'Your order 12345 has shipped.';
    const body = await ask('Where is my order 12345?');
    assert.equal(body.answer, 'Your order 12345 has shipped.');
    assert.equal(api.requests.length, 3);
    assert.deepEqual(fake.chat.requests.map((request) => 'tools' in request.body), [true, true, true, false]);
    assert.deepEqual(await toolCalls(body.sessionId), [shipped, shipped, shipped]);
  });
});
