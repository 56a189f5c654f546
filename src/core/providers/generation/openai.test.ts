import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFakeOpenAi, type FakeOpenAi } from '../../../../test/fake-openai.ts';
import { AppError } from '../../errors.ts';
import { buildGroundedPrompt } from './grounded-prompt.ts';
import { OpenAiAnswerGenerator, type OpenAiAnswerOptions } from './openai.ts';
import type { GenerationRequest, GenerationTools, ToolFunction } from './provider.ts';

let fake: FakeOpenAi;
before(async () => {
  fake = await startFakeOpenAi();
});
after(() => fake.close());
beforeEach(() => {
  fake.chat.replies = [];
  fake.chat.requests = [];
  fake.chat.answer = 'Refunds are paid within 5 days [1], by bank transfer [2].';
});

function generator(options: Partial<OpenAiAnswerOptions> = {}): OpenAiAnswerGenerator {
  return new OpenAiAnswerGenerator({ baseUrl: fake.baseUrl, model: 'fake-chat', retryBaseMs: 1, ...options });
}

const request: GenerationRequest = {
  question: 'And how long does it take?',
  standaloneQuestion: 'How long does a refund take?',
  history: [
    { role: 'user', content: 'Can I get a refund?' },
    { role: 'assistant', content: 'Yes, within 30 days of purchase [1].' },
  ],
  sources: [
    { number: 1, entryId: 'e-1', title: 'Refund policy', url: 'https://shop.example/refunds', text: 'Refunds are paid within 5 days.', score: 0.9 },
    { number: 2, entryId: 'e-2', title: 'Payment methods', url: null, text: 'Refunds go back by bank transfer.', score: 0.5 },
  ],
  instructions: 'You are the helpful assistant of Example Shop.',
  fallbackMessage: 'Sorry, I do not know that.',
};

/** Every delta the generator yields, in order. */
async function deltas(answers: AsyncIterable<string>): Promise<string[]> {
  const received: string[] = [];
  for await (const delta of answers) received.push(delta);
  return received;
}

/** The AppError a generation rejects with, and the deltas it yielded before. */
async function failure(answers: AsyncIterable<string>): Promise<{ error: AppError; received: string[] }> {
  const received: string[] = [];
  try {
    for await (const delta of answers) received.push(delta);
  } catch (error) {
    assert.ok(error instanceof AppError, `expected an AppError, got ${String(error)}`);
    return { error, received };
  }
  assert.fail(`expected a rejection, got the answer ${JSON.stringify(received.join(''))}`);
}

describe('OpenAiAnswerGenerator', () => {
  test('streams the answer as several deltas that concatenate to the model\'s text', async () => {
    const received = await deltas(generator({ apiKey: 'sk-test' }).generate(request));
    assert.ok(received.length > 5, `${received.length} deltas`);
    assert.equal(received.join(''), 'Refunds are paid within 5 days [1], by bank transfer [2].');
    assert.equal(fake.chat.requests.length, 1);
    const [sent] = fake.chat.requests;
    assert.equal(sent!.headers.authorization, 'Bearer sk-test');
    assert.equal(sent!.headers['content-type'], 'application/json');
    assert.deepEqual(Object.keys(sent!.body).sort(), ['messages', 'model', 'stream']);
    assert.equal(sent!.body.model, 'fake-chat');
    assert.equal(sent!.body.stream, true);
  });

  test('sends the grounded prompt: instructions and rules, the history, the numbered sources and the question', async () => {
    await deltas(generator().generate(request));
    const { messages } = fake.chat.requests[0]!.body;
    assert.deepEqual(
      messages.map((message: { role: string }) => message.role),
      ['system', 'user', 'assistant', 'user'],
    );
    assert.ok(messages[0].content.startsWith('You are the helpful assistant of Example Shop.\n\n'));
    assert.match(messages[0].content, /reply with exactly this text and nothing else: Sorry, I do not know that\.$/m);
    assert.match(messages[0].content, /\[1\]/);
    assert.deepEqual(messages.slice(1, 3), request.history);
    assert.equal(
      messages[3].content,
      [
        'Sources:',
        '',
        '[1] Refund policy',
        'URL: https://shop.example/refunds',
        'Refunds are paid within 5 days.',
        '',
        '[2] Payment methods',
        'URL: none',
        'Refunds go back by bank transfer.',
        '',
        'Question: And how long does it take?',
        'The question, with the conversation taken into account: How long does a refund take?',
      ].join('\n'),
    );
    // Last: the assertion narrows `messages` to the prompt's type.
    assert.deepEqual(messages, buildGroundedPrompt(request));
    assert.equal(fake.chat.requests[0]!.headers.authorization, undefined);
  });

  test('asks for the request\'s model instead of the default', async () => {
    const answers = generator().generate({ ...request, model: 'llama3.1:8b' });
    assert.equal((await deltas(answers)).join(''), fake.chat.answer);
    assert.equal(fake.chat.requests[0]!.body.model, 'llama3.1:8b');
  });

  test('keeps multi-byte characters cut between network chunks intact', async () => {
    fake.chat.answer = 'Ça coûte 5 € — “vite” 😀 [1]';
    assert.equal((await deltas(generator().generate(request))).join(''), 'Ça coûte 5 € — “vite” 😀 [1]');
  });

  test('takes a whole JSON answer from a server that ignores stream: true', async () => {
    fake.chat.replies.push({ json: true, answer: 'One piece [1].' });
    assert.deepEqual(await deltas(generator().generate(request)), ['One piece [1].']);
  });

  test('answers the fallback without calling the model when no source was found', async () => {
    const received = await deltas(generator().generate({ ...request, sources: [] }));
    assert.deepEqual(received, ['Sorry, I do not know that.']);
    assert.equal(fake.chat.requests.length, 0);
  });

  test('waits as long as Retry-After says after a 429, then answers', async () => {
    fake.chat.replies.push({ status: 429, retryAfter: '1', message: 'Rate limit reached' });
    const started = performance.now();
    const received = await deltas(generator().generate(request));
    const waited = performance.now() - started;
    assert.equal(received.join(''), fake.chat.answer);
    assert.equal(fake.chat.requests.length, 2);
    assert.ok(waited >= 950 && waited < 3000, `waited ${waited} ms`);
  });

  test('caps a long Retry-After at maxRetryDelayMs', async () => {
    fake.chat.replies.push({ status: 429, retryAfter: '3600' });
    const started = performance.now();
    const received = await deltas(generator({ maxRetryDelayMs: 100 }).generate(request));
    assert.equal(received.join(''), fake.chat.answer);
    assert.ok(performance.now() - started < 1000);
  });

  test('retries after a 500, then answers', async () => {
    fake.chat.replies.push({ status: 500, message: 'boom' });
    assert.equal((await deltas(generator().generate(request))).join(''), fake.chat.answer);
    assert.equal(fake.chat.requests.length, 2);
  });

  test('gives up with BAD_GATEWAY after maxRetries, naming the status and the provider\'s message', async () => {
    for (let index = 0; index < 3; index++) fake.chat.replies.push({ status: 503, message: 'The engine is overloaded' });
    const { error, received } = await failure(generator({ maxRetries: 2 }).generate(request));
    assert.equal(fake.chat.requests.length, 3);
    assert.deepEqual(received, []);
    assert.deepEqual([error.code, error.status], ['BAD_GATEWAY', 502]);
    assert.equal(error.message, 'Chat completions request for model fake-chat failed after 3 tries: the API answered 503: The engine is overloaded');
  });

  test('does not retry a 401 and never repeats the key, even when the provider echoes it', async () => {
    fake.chat.replies.push({ status: 401, message: 'Incorrect API key provided: sk-wrong-key-123.' });
    const { error } = await failure(generator({ apiKey: 'sk-wrong-key-123' }).generate(request));
    assert.equal(fake.chat.requests.length, 1);
    assert.deepEqual([error.code, error.status], ['BAD_GATEWAY', 502]);
    assert.equal(error.message, 'Chat completions request for model fake-chat failed after 1 try: the API answered 401: Incorrect API key provided: [redacted].');
  });

  test('does not retry a 404 for an unknown model', async () => {
    fake.chat.replies.push({ status: 404, message: 'model "nope" not found, try pulling it first' });
    const { error } = await failure(generator().generate({ ...request, model: 'nope' }));
    assert.equal(fake.chat.requests.length, 1);
    assert.equal(error.message, 'Chat completions request for model nope failed after 1 try: the API answered 404: model "nope" not found, try pulling it first');
  });

  test('times out a provider that does not answer with GATEWAY_TIMEOUT, within the limit and without retrying', async () => {
    fake.chat.replies.push({ delayMs: 5000 });
    const started = performance.now();
    const { error } = await failure(generator({ timeoutMs: 200 }).generate(request));
    const elapsed = performance.now() - started;
    assert.deepEqual([error.code, error.status], ['GATEWAY_TIMEOUT', 504]);
    assert.equal(error.message, 'Chat completions request for model fake-chat failed after 1 try: no answer within 200 ms');
    assert.equal(fake.chat.requests.length, 1);
    assert.ok(elapsed >= 190 && elapsed < 1000, `${elapsed} ms`);
  });

  test('times out a stream that sends no text within the limit', async () => {
    fake.chat.replies.push({ stallAfter: 0 });
    const started = performance.now();
    const { error } = await failure(generator({ timeoutMs: 200 }).generate(request));
    assert.equal(error.code, 'GATEWAY_TIMEOUT');
    assert.equal(error.message, 'Chat completions request for model fake-chat failed after 1 try: no answer within 200 ms');
    assert.ok(performance.now() - started < 1000);
  });

  test('fails a stream that stalls after some text with GATEWAY_TIMEOUT, keeping what was sent and never retrying', async () => {
    fake.chat.replies.push({ stallAfter: 3 });
    const started = performance.now();
    const { error, received } = await failure(generator({ timeoutMs: 300 }).generate(request));
    assert.equal(received.join(''), 'Refunds are paid');
    assert.deepEqual([error.code, error.status], ['GATEWAY_TIMEOUT', 504]);
    assert.equal(error.message, 'Chat completions request for model fake-chat failed while streaming the answer: the stream stalled: no data for 300 ms');
    assert.equal(fake.chat.requests.length, 1);
    assert.ok(performance.now() - started < 1500);
  });

  test('counts the stall limit while waiting for the server only, not while the caller holds a delta', async () => {
    // The caller spends longer than the limit on the first and third deltas (a slow client), and
    // longer than the limit on the whole answer; the server itself never pauses.
    const answers = generator({ timeoutMs: 150 }).generate(request);
    const received: string[] = [];
    for await (const delta of answers) {
      received.push(delta);
      await new Promise((resolve) => setTimeout(resolve, received.length === 1 || received.length === 3 ? 300 : 20));
    }
    assert.equal(received.join(''), fake.chat.answer);
  });

  test('retries a stream cut before any text, then answers', async () => {
    fake.chat.replies.push({ endAfter: 0 });
    assert.equal((await deltas(generator().generate(request))).join(''), fake.chat.answer);
    assert.equal(fake.chat.requests.length, 2);
  });

  test('fails a stream cut after some text with BAD_GATEWAY, without retrying', async () => {
    fake.chat.replies.push({ endAfter: 2 });
    const { error, received } = await failure(generator().generate(request));
    assert.equal(received.join(''), 'Refunds are');
    assert.deepEqual([error.code, error.status], ['BAD_GATEWAY', 502]);
    assert.equal(error.message, 'Chat completions request for model fake-chat failed while streaming the answer: the stream ended before the answer was complete');
    assert.equal(fake.chat.requests.length, 1);
  });

  test('an empty answer is a BAD_GATEWAY naming the finish reason, not an empty reply', async () => {
    fake.chat.replies.push({ answer: '' });
    const { error } = await failure(generator().generate(request));
    assert.equal(error.code, 'BAD_GATEWAY');
    assert.equal(error.message, 'Chat completions request for model fake-chat failed after 1 try: the API answered no text (finish_reason stop)');
  });

  test('retries a refused connection, then fails with BAD_GATEWAY', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const refused = new OpenAiAnswerGenerator({ baseUrl: `http://127.0.0.1:${port}/v1`, model: 'm', maxRetries: 1, retryBaseMs: 1 });
    const { error } = await failure(refused.generate(request));
    assert.equal(error.code, 'BAD_GATEWAY');
    assert.match(error.message, /^Chat completions request for model m failed after 2 tries: fetch failed: connect ECONNREFUSED/);
  });

  test('stops at once when the caller aborts while waiting for the provider', async () => {
    fake.chat.replies.push({ delayMs: 5000 });
    const controller = new AbortController();
    const started = performance.now();
    setTimeout(() => controller.abort(new Error('client went away')), 50);
    await assert.rejects(deltas(generator().generate({ ...request, signal: controller.signal })), { message: 'client went away' });
    assert.ok(performance.now() - started < 1000);
  });

  test('stops at once when the caller aborts in the middle of the stream', async () => {
    fake.chat.replies.push({ stallAfter: 2 });
    const controller = new AbortController();
    const received: string[] = [];
    const started = performance.now();
    await assert.rejects(
      (async () => {
        for await (const delta of generator().generate({ ...request, signal: controller.signal })) {
          received.push(delta);
          if (received.length === 2) setTimeout(() => controller.abort(new Error('client went away')), 50);
        }
      })(),
      { message: 'client went away' },
    );
    assert.equal(received.join(''), 'Refunds are');
    assert.ok(performance.now() - started < 1000);
  });

  test('stops at once when the caller aborts during the backoff', async () => {
    fake.chat.replies.push({ status: 429, retryAfter: '5' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('client went away')), 100);
    const started = performance.now();
    await assert.rejects(deltas(generator().generate({ ...request, signal: controller.signal })), { message: 'client went away' });
    assert.equal(fake.chat.requests.length, 1);
    assert.ok(performance.now() - started < 1000);
  });
});

const orderStatus: ToolFunction = {
  name: 'order_status',
  description: 'Look up the shipping status of an order by its number.',
  parameters: { type: 'object', properties: { orderId: { type: 'string', pattern: '[0-9]{4,10}' } }, required: ['orderId'] },
};
const orderArguments = '{"orderId":"12345"}';
const shipped = '{"status":"shipped","eta":"2026-12-04"}';

/** Tools that record each call and answer `results[n]` to the n-th (default: the order shipped). */
function recordingTools(results: string[] = []): { tools: GenerationTools; calls: { name: string; argumentsJson: string }[] } {
  const calls: { name: string; argumentsJson: string }[] = [];
  const tools: GenerationTools = {
    functions: [orderStatus],
    call: async (name, argumentsJson) => {
      calls.push({ name, argumentsJson });
      return results[calls.length - 1] ?? shipped;
    },
  };
  return { tools, calls };
}

/** The assistant message that asked for `calls` and the tool messages that answered them. */
function round(calls: { id: string; name?: string; arguments?: string; result?: string }[]): object[] {
  return [
    {
      role: 'assistant',
      content: null,
      tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name ?? 'order_status', arguments: call.arguments ?? orderArguments } })),
    },
    ...calls.map((call) => ({ role: 'tool', tool_call_id: call.id, content: call.result ?? shipped })),
  ];
}

describe('OpenAiAnswerGenerator with tools', () => {
  const toolsOffered = { tools: [{ type: 'function', function: orderStatus }], tool_choice: 'auto' };

  test('joins a call streamed in fragments, sends the call and its result back, then streams the answer', async () => {
    const { tools, calls } = recordingTools();
    const answer = `Your order 12345 has shipped; it arrives on December 4. ${'Our carrier delivers between 8 am and 6 pm, and leaves a note when nobody is home. '.repeat(3)}`.trim();
    fake.chat.replies.push({ toolCalls: [{ id: 'call_1', name: 'order_status', arguments: orderArguments }] }, { answer });
    const toolRequest = { ...request, tools };
    const received = await deltas(generator().generate(toolRequest));
    assert.equal(received.join(''), answer);
    // The words held back while the reply might still call a tool come first as one delta, then the rest streams.
    assert.ok(received[0]!.length >= 200 && received[0]!.length < 220, `${received[0]!.length} characters first`);
    assert.ok(received.length > 5, `${received.length} deltas`);
    assert.deepEqual(calls, [{ name: 'order_status', argumentsJson: orderArguments }]);
    const prompt = buildGroundedPrompt(toolRequest);
    assert.match(prompt[0]!.content, /^- For a question about the user's own data .*call the tools provided/m);
    assert.deepEqual(
      fake.chat.requests.map((sent) => sent.body),
      [
        { model: 'fake-chat', messages: prompt, stream: true, ...toolsOffered },
        { model: 'fake-chat', messages: [...prompt, ...round([{ id: 'call_1' }])], stream: true, ...toolsOffered },
      ],
    );
  });

  test('takes the calls of a whole JSON reply, and its answer', async () => {
    const { tools, calls } = recordingTools();
    fake.chat.replies.push({ json: true, toolCalls: [{ id: 'call_j', name: 'order_status', arguments: orderArguments }] }, { json: true, answer: 'It has shipped.' });
    const toolRequest = { ...request, tools };
    assert.deepEqual(await deltas(generator().generate(toolRequest)), ['It has shipped.']);
    assert.deepEqual(calls, [{ name: 'order_status', argumentsJson: orderArguments }]);
    assert.deepEqual(fake.chat.requests[1]!.body, {
      model: 'fake-chat',
      messages: [...buildGroundedPrompt(toolRequest), ...round([{ id: 'call_j' }])],
      stream: true,
      ...toolsOffered,
    });
  });

  test('calls each tool of a reply in order, whatever its name: the callback answers an unknown one', async () => {
    const { tools, calls } = recordingTools([shipped, '{"error":"unknown tool cancel_order"}']);
    fake.chat.replies.push({
      toolCalls: [
        { id: 'call_a', name: 'order_status', arguments: orderArguments },
        { id: 'call_b', name: 'cancel_order', arguments: '{"orderId":"12345","reason":"too slow"}' },
      ],
    });
    fake.chat.answer = 'Your order has shipped; I cannot cancel it.';
    const toolRequest = { ...request, tools };
    assert.equal((await deltas(generator().generate(toolRequest))).join(''), 'Your order has shipped; I cannot cancel it.');
    assert.deepEqual(calls, [
      { name: 'order_status', argumentsJson: orderArguments },
      { name: 'cancel_order', argumentsJson: '{"orderId":"12345","reason":"too slow"}' },
    ]);
    assert.deepEqual(fake.chat.requests[1]!.body.messages.slice(-3), [
      ...round([
        { id: 'call_a' },
        { id: 'call_b', name: 'cancel_order', arguments: '{"orderId":"12345","reason":"too slow"}', result: '{"error":"unknown tool cancel_order"}' },
      ]),
    ]);
  });

  test('drops the text a reply writes before its calls: the model thinking aloud is not the answer', async () => {
    const { tools } = recordingTools();
    fake.chat.replies.push({ answer: 'Let me look up order 12345 for you.', toolCalls: [{ id: 'call_1', name: 'order_status', arguments: orderArguments }] });
    fake.chat.replies.push({ json: true, answer: 'Let me look up order 12345 for you.', toolCalls: [{ id: 'call_2', name: 'order_status', arguments: orderArguments }] });
    fake.chat.answer = 'It has shipped.';
    // A short answer in a reply that could still call a tool is held to its end: it comes whole.
    assert.deepEqual(await deltas(generator().generate({ ...request, tools })), ['It has shipped.']);
    assert.equal(fake.chat.requests.length, 3);
    assert.deepEqual(fake.chat.requests[2]!.body.messages.slice(-4), [...round([{ id: 'call_1' }]), ...round([{ id: 'call_2' }])]);
  });

  test('past 200 characters the text is the answer: it streams, and a call after it is dropped', async () => {
    const { tools, calls } = recordingTools();
    const long = `${'Orders ship within two days of payment, from our warehouse in Lyon. '.repeat(4)}[1]`;
    fake.chat.replies.push({ answer: long, toolCalls: [{ id: 'call_1', name: 'order_status', arguments: orderArguments }] });
    const received = await deltas(generator().generate({ ...request, tools }));
    assert.equal(received.join(''), long);
    assert.ok(received.length > 5, `${received.length} deltas`);
    assert.deepEqual(calls, []);
    assert.equal(fake.chat.requests.length, 1);
  });

  test('after three rounds of calls, asks once more without tools and streams that answer', async () => {
    const { tools, calls } = recordingTools();
    for (const id of ['call_1', 'call_2', 'call_3']) fake.chat.replies.push({ toolCalls: [{ id, name: 'order_status', arguments: orderArguments }] });
    fake.chat.answer = 'Your order 12345 has shipped.';
    const toolRequest = { ...request, tools };
    // Offered no tool, the last request streams its answer from the first word, as without tools.
    assert.deepEqual(await deltas(generator().generate(toolRequest)), ['Your', ' order', ' 12345', ' has', ' shipped.']);
    assert.equal(calls.length, 3);
    const prompt = buildGroundedPrompt(toolRequest);
    const rounds = [round([{ id: 'call_1' }]), round([{ id: 'call_2' }]), round([{ id: 'call_3' }])].flat();
    assert.deepEqual(
      fake.chat.requests.map((sent) => sent.body),
      [
        { model: 'fake-chat', messages: prompt, stream: true, ...toolsOffered },
        { model: 'fake-chat', messages: [...prompt, ...rounds.slice(0, 2)], stream: true, ...toolsOffered },
        { model: 'fake-chat', messages: [...prompt, ...rounds.slice(0, 4)], stream: true, ...toolsOffered },
        { model: 'fake-chat', messages: [...prompt, ...rounds], stream: true },
      ],
    );
  });

  test('a call in answer to the request without tools is no answer: BAD_GATEWAY, no fourth call', async () => {
    const { tools, calls } = recordingTools();
    for (const id of ['call_1', 'call_2', 'call_3', 'call_4']) fake.chat.replies.push({ toolCalls: [{ id, name: 'order_status', arguments: orderArguments }] });
    const { error, received } = await failure(generator().generate({ ...request, tools }));
    assert.deepEqual(received, []);
    assert.equal(calls.length, 3);
    assert.equal(fake.chat.requests.length, 4);
    assert.deepEqual([error.code, error.status], ['BAD_GATEWAY', 502]);
    assert.equal(error.message, 'Chat completions request for model fake-chat failed after 1 try: the API answered no text (finish_reason tool_calls)');
  });

  test('a retry after the calls repeats the request with their results, not the calls', async () => {
    const { tools, calls } = recordingTools();
    fake.chat.replies.push({ toolCalls: [{ id: 'call_1', name: 'order_status', arguments: orderArguments }] }, { status: 500, message: 'boom' }, { endAfter: 0 });
    fake.chat.answer = 'It has shipped.';
    assert.equal((await deltas(generator().generate({ ...request, tools }))).join(''), 'It has shipped.');
    assert.equal(calls.length, 1);
    assert.equal(fake.chat.requests.length, 4);
    assert.deepEqual(fake.chat.requests[2]!.body, fake.chat.requests[1]!.body);
    assert.deepEqual(fake.chat.requests[3]!.body, fake.chat.requests[1]!.body);
  });

  test('a reply cut in the middle of a call is retried whole, and the tool called once', async () => {
    const { tools, calls } = recordingTools();
    // The id and name, then one of the arguments' three pieces.
    fake.chat.replies.push({ toolCalls: [{ id: 'call_1', name: 'order_status', arguments: orderArguments }], endAfter: 2 });
    fake.chat.replies.push({ toolCalls: [{ id: 'call_1', name: 'order_status', arguments: orderArguments }] });
    fake.chat.answer = 'It has shipped.';
    assert.equal((await deltas(generator().generate({ ...request, tools }))).join(''), 'It has shipped.');
    assert.deepEqual(calls, [{ name: 'order_status', argumentsJson: orderArguments }]);
    assert.equal(fake.chat.requests.length, 3);
  });

  test('calls the model when no source was found but tools exist: the question may be for a tool', async () => {
    const { tools } = recordingTools();
    fake.chat.answer = 'Sorry, I do not know that.';
    const toolRequest = { ...request, sources: [], tools };
    assert.deepEqual((await deltas(generator().generate(toolRequest))).join(''), 'Sorry, I do not know that.');
    assert.deepEqual(
      fake.chat.requests.map((sent) => sent.body),
      [{ model: 'fake-chat', messages: buildGroundedPrompt(toolRequest), stream: true, ...toolsOffered }],
    );
  });

  test('tools without a function are no tools: no tools key, no tool rule, and no call without a source', async () => {
    const none: GenerationTools = { functions: [], call: async () => assert.fail('no tool to call') };
    await deltas(generator().generate({ ...request, tools: none }));
    assert.deepEqual(fake.chat.requests.map((sent) => sent.body), [{ model: 'fake-chat', messages: buildGroundedPrompt(request), stream: true }]);
    assert.deepEqual(await deltas(generator().generate({ ...request, sources: [], tools: none })), ['Sorry, I do not know that.']);
    assert.equal(fake.chat.requests.length, 1);
  });
});
