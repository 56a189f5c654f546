import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startFakeOpenAi, type FakeOpenAi } from '../../../../test/fake-openai.ts';
import { AppError } from '../../errors.ts';
import { buildGroundedPrompt } from './grounded-prompt.ts';
import { OpenAiAnswerGenerator, type OpenAiAnswerOptions } from './openai.ts';
import type { GenerationRequest } from './provider.ts';

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
