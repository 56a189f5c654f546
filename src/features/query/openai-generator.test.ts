/**
 * POST /api/v2/query with the `openai` answer generator, against a local fake that speaks both
 * the embeddings and the chat-completions protocols: the answer is the model's, the model is sent
 * the retrieved sources, and provider failures are 502/504 in the spec's error shape, in time.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { assertExactError } from '../../../test/assert-error.ts';
import { fakeChatEnv, fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../test/fake-openai.ts';
import { startTestServer, type Answer, type TestServer } from '../../../test/harness.ts';
import { createKnowledgeBase, ingest } from '../../../test/ingestion.ts';
import { parseEvents } from '../../../test/sse.ts';
import { shopArticles } from '../../../test/query-experience.ts';

const LLM_TIMEOUT_MS = 1000;
const FALLBACK = 'I do not know; ask our support team.';
const INSTRUCTIONS = 'You are the assistant of Example Shop. Be brief.';

const records: { id: string; title: string; url?: string; content: string }[] = [
  ...shopArticles,
  {
    id: 'passwords',
    title: 'Resetting a password',
    content: 'To reset a password, click "Forgot password" on the sign-in page and follow the e-mailed link.',
  },
];

let fake: FakeOpenAi;
let server: TestServer;
let token: string;
let experienceId: string;

before(async () => {
  fake = await startFakeOpenAi();
  server = await startTestServer({ ...fakeEmbeddingsEnv(fake), ...fakeChatEnv(fake, LLM_TIMEOUT_MS) });
  ({ token } = await server.tenant());
  const knowledgeBaseId = await createKnowledgeBase(server, token);
  const job = await ingest(server, token, knowledgeBaseId, records);
  assert.equal(job.status, 'completed', JSON.stringify(job));
  const experience = await server.request('POST', '/api/v2/experiences', {
    token,
    body: { name: 'shop assistant', knowledgeBaseIds: [knowledgeBaseId], instructions: INSTRUCTIONS, fallbackMessage: FALLBACK },
  });
  assert.equal(experience.status, 201, experience.text);
  experienceId = experience.body.id;
});
after(async () => {
  await server?.close();
  await fake?.close();
});
beforeEach(() => {
  fake.chat.replies = [];
  fake.chat.requests = [];
  fake.chat.answer = 'Refunds are paid within 5 business days [1].';
});

function ask(text: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<Answer> {
  return server.request('POST', '/api/v2/query', { token, body: { text, experienceId, ...extra }, headers });
}

/** The user message the fake model received last: the numbered sources and the question. */
function lastPrompt(): { role: string; content: string }[] {
  const request = fake.chat.requests.at(-1);
  assert.ok(request, 'the model was called');
  return request.body.messages;
}

describe('POST /api/v2/query with LLM_PROVIDER=openai', () => {
  test('answers with the model\'s text, grounded in the retrieved sources it was sent', async () => {
    const answer = await ask('How long do refunds take?');
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.answer, 'Refunds are paid within 5 business days [1].');
    assert.equal(answer.body.format, 'markdown');
    assert.equal(answer.body.sources[0].title, 'Refund policy');
    assert.equal(answer.body.sources[0].number, 1);

    assert.equal(fake.chat.requests.length, 1);
    assert.equal(fake.chat.requests[0]!.body.model, 'fake-chat');
    assert.equal(fake.chat.requests[0]!.body.stream, true);
    const messages = lastPrompt();
    assert.deepEqual(messages.map((message) => message.role), ['system', 'user']);
    assert.ok(messages[0]!.content.startsWith(`${INSTRUCTIONS}\n\n`), messages[0]!.content);
    assert.ok(messages[0]!.content.includes(`reply with exactly this text and nothing else: ${FALLBACK}`));
    const prompt = messages[1]!.content;
    // Each source the response lists was in the prompt under its number, with its title, URL and text.
    for (const source of answer.body.sources) {
      const record = records.find((candidate) => candidate.title === source.title)!;
      assert.ok(prompt.includes(`[${source.number}] ${record.title}\nURL: ${record.url ?? 'none'}\n${record.content}`), prompt);
    }
    assert.ok(prompt.endsWith('\n\nQuestion: How long do refunds take?'), prompt);
  });

  test('sends the earlier turns of the session as history, and the follow-up made to stand alone', async () => {
    const first = await ask('How long do refunds take?');
    assert.equal(first.status, 200, first.text);
    fake.chat.answer = 'Yes, to the original payment method [1].';
    const second = await ask('And is it paid to the original payment method?', { sessionId: first.body.sessionId });
    assert.equal(second.status, 200, second.text);
    assert.equal(second.body.answer, 'Yes, to the original payment method [1].');
    const messages = lastPrompt();
    assert.deepEqual(messages.slice(1, 3), [
      { role: 'user', content: 'How long do refunds take?' },
      { role: 'assistant', content: 'Refunds are paid within 5 business days [1].' },
    ]);
    assert.ok(messages[3]!.content.includes('[1] Refund policy\n'), messages[3]!.content);
    assert.ok(
      messages[3]!.content.endsWith(
        '\n\nQuestion: And is it paid to the original payment method?\n' +
          'The question, with the conversation taken into account: How long do refunds take? And is it paid to the original payment method?',
      ),
      messages[3]!.content,
    );
  });

  test('streams the model\'s deltas as delta events, then done with the whole answer', async () => {
    const answer = await ask('How long do refunds take?', {}, { accept: 'text/event-stream' });
    assert.equal(answer.status, 200, answer.text);
    const received = parseEvents(answer.text);
    const deltas = received.filter((item) => item.event === 'delta');
    assert.ok(deltas.length > 3, `${deltas.length} delta events`);
    assert.equal(deltas.map((item) => item.data.text).join(''), 'Refunds are paid within 5 business days [1].');
    assert.deepEqual(
      received.map((item) => item.event).filter((name, index, all) => name !== all[index - 1]),
      ['meta', 'delta', 'sources', 'actions', 'done'],
    );
    assert.equal(received.at(-1)!.data.answer, 'Refunds are paid within 5 business days [1].');
  });

  test('answers the fallback without calling the model when nothing relevant is found', async () => {
    const answer = await ask('Do you sell helicopters on Saturn?');
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.answer, FALLBACK);
    assert.deepEqual(answer.body.sources, []);
    assert.equal(fake.chat.requests.length, 0);
  });

  test('a provider that refuses the key is a 502 at once, naming its status and message', async () => {
    fake.chat.replies.push({ status: 401, message: 'Incorrect API key provided.' });
    const answer = await ask('How long do refunds take?');
    const message = assertExactError(answer, 502, '/v2/query');
    assert.equal(message, 'Chat completions request for model fake-chat failed after 1 try: the API answered 401: Incorrect API key provided.');
    assert.equal(fake.chat.requests.length, 1);
  });

  test('a query that fails leaves no session behind, and a new session is stored with its first answer', async () => {
    const sessionsNow = async () => (await server.request('GET', `/api/v2/sessions?experienceId=${experienceId}&limit=1`, { token })).body.total;
    const before = await sessionsNow();
    fake.chat.replies.push({ status: 401, message: 'Incorrect API key provided.' });
    assertExactError(await ask('How long do refunds take?'), 502, '/v2/query');
    assert.equal(await sessionsNow(), before);

    const answer = await ask('How long do refunds take?');
    assert.equal(answer.status, 200, answer.text);
    const session = await server.request('GET', `/api/v2/sessions/${answer.body.sessionId}`, { token });
    assert.equal(session.status, 200, session.text);
    assert.equal(session.body.queryCount, 1);
    assert.equal(session.body.lastQueryAt, answer.body.timestamp);
    assert.equal(await sessionsNow(), before + 1);
  });

  test('a provider that keeps failing is a 502 after LLM_MAX_RETRIES retries', async () => {
    fake.chat.replies.push({ status: 500, message: 'boom' }, { status: 503, message: 'overloaded' });
    const answer = await ask('How long do refunds take?');
    const message = assertExactError(answer, 502, '/v2/query');
    assert.equal(message, 'Chat completions request for model fake-chat failed after 2 tries: the API answered 503: overloaded');
    assert.equal(fake.chat.requests.length, 2);
  });

  test('a retried 429 still answers 200', async () => {
    fake.chat.replies.push({ status: 429, retryAfter: '0' });
    const answer = await ask('How long do refunds take?');
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.answer, 'Refunds are paid within 5 business days [1].');
    assert.equal(fake.chat.requests.length, 2);
  });

  test('a provider that does not answer is a 504 within LLM_TIMEOUT_MS', async () => {
    fake.chat.replies.push({ delayMs: 10_000 });
    const started = performance.now();
    const answer = await ask('How long do refunds take?');
    const elapsed = performance.now() - started;
    const message = assertExactError(answer, 504, '/v2/query');
    assert.equal(message, `Chat completions request for model fake-chat failed after 1 try: no answer within ${LLM_TIMEOUT_MS} ms`);
    assert.ok(elapsed < LLM_TIMEOUT_MS + 2000, `${elapsed} ms`);
  });

  test('streaming: a failure before the first text is an ordinary JSON error', async () => {
    fake.chat.replies.push({ status: 401, message: 'Incorrect API key provided.' });
    const answer = await ask('How long do refunds take?', {}, { accept: 'text/event-stream' });
    assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
    assertExactError(answer, 502, '/v2/query');
  });

  test('streaming: a stream that stalls after some text ends with a 504 error event, in time', async () => {
    fake.chat.replies.push({ stallAfter: 2 });
    const started = performance.now();
    const answer = await ask('How long do refunds take?', {}, { accept: 'text/event-stream' });
    const elapsed = performance.now() - started;
    assert.equal(answer.status, 200);
    const received = parseEvents(answer.text);
    assert.deepEqual(
      received.map((item) => item.event),
      ['meta', 'delta', 'delta', 'error'],
    );
    assert.equal(received[1]!.data.text + received[2]!.data.text, 'Refunds are');
    const { timestamp, ...body } = received[3]!.data;
    assert.equal(new Date(timestamp).toISOString(), timestamp);
    assert.deepEqual(body, {
      statusCode: 504,
      error: 'Gateway Timeout',
      message: `Chat completions request for model fake-chat failed while streaming the answer: the stream stalled: no data for ${LLM_TIMEOUT_MS} ms`,
      path: '/v2/query',
    });
    assert.ok(elapsed < LLM_TIMEOUT_MS + 2000, `${elapsed} ms`);
    assert.equal(fake.chat.requests.length, 1);

    // The meta event announced a session: it exists, without a query, and takes the next question.
    const { sessionId } = received[0]!.data;
    const session = await server.request('GET', `/api/v2/sessions/${sessionId}`, { token });
    assert.equal(session.status, 200, session.text);
    assert.equal(session.body.queryCount, 0);
    const next = await ask('How long do refunds take?', { sessionId });
    assert.equal(next.status, 200, next.text);
    assert.equal(next.body.sessionId, sessionId);
  });

  test('streaming: a client that goes away stops the provider call at once', async () => {
    fake.chat.replies.push({ stallAfter: 2 });
    const client = new AbortController();
    const response = await fetch(`${server.url}/api/v2/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ text: 'How long do refunds take?', experienceId }),
      signal: client.signal,
    });
    assert.equal(response.status, 200);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while ((text.match(/event: delta/g) ?? []).length < 2) text += (await reader.read()).value ?? '';
    client.abort();
    // Well within LLM_TIMEOUT_MS: it is the departure that closes the call, not the stall limit.
    const deadline = performance.now() + LLM_TIMEOUT_MS / 2;
    while (!fake.chat.requests[0]!.abandoned && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(fake.chat.requests[0]!.abandoned, true);
  });

  test('an experience\'s llmModel is the model asked for', async () => {
    const changed = await server.request('PATCH', `/api/v2/experiences/${experienceId}`, {
      token,
      body: { settings: { llmProvider: 'openai', llmModel: 'llama3.1:8b' } },
    });
    assert.equal(changed.status, 200, changed.text);
    try {
      const answer = await ask('How long do refunds take?');
      assert.equal(answer.status, 200, answer.text);
      assert.equal(fake.chat.requests[0]!.body.model, 'llama3.1:8b');
    } finally {
      await server.request('PATCH', `/api/v2/experiences/${experienceId}`, { token, body: { settings: {} } });
    }
  });
});
