/**
 * A local HTTP server that speaks the OpenAI embeddings protocol (POST /v1/embeddings), for tests
 * that need fast, deterministic vectors. Each vector is a hashed bag of words, so texts sharing
 * words are close: good enough for retrieval assertions, and instant.
 *
 * It also speaks chat completions (POST /v1/chat/completions), streamed as Server-Sent Events or
 * as one JSON answer, from a script: an answer text, or per request a failure status, a delay, a
 * slow stream, or a stream that stalls; and it records the requests, so tests can read the prompt they sent.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** What the fake does with one chat-completions request; absent fields take the defaults. */
export type FakeChatReply = {
  /** Answers this status with `{error: {message}}` instead of an answer. */
  status?: number;
  /** The failure's message (default "injected failure"). */
  message?: string;
  /** The failure's `Retry-After` header. */
  retryAfter?: string;
  /** Milliseconds to wait before the status line (for time limits). */
  delayMs?: number;
  /** The answer's text (default `chat.answer`). */
  answer?: string;
  /** Streams this many deltas (text, then tool-call fragments), then sends nothing more and keeps the connection open. */
  stallAfter?: number;
  /** Streams this many deltas (text, then tool-call fragments), then ends the response without a finish reason or `[DONE]`. */
  endAfter?: number;
  /** Answers one JSON completion even when a stream was asked for, as some servers do. */
  json?: boolean;
  /** The streamed text deltas (default: the answer cut before each word); the answer is their concatenation. */
  deltas?: string[];
  /** Milliseconds to wait before each streamed delta (a slow model). */
  deltaDelayMs?: number;
  /**
   * Calls these tools (finish_reason `tool_calls`): streamed as fragments, each call's arguments
   * cut in three, or whole in a JSON answer. The reply has text only when `answer` or `deltas` is
   * set, and then the text comes first, as a model thinking aloud sends it.
   */
  toolCalls?: FakeToolCall[];
};

/** A tool call the fake's model makes; `id` defaults to `call_fake_{n}`, n its position from 0. */
export type FakeToolCall = { id?: string; name: string; arguments: string };

/** A chat-completions request the fake received. */
export type FakeChatRequest = {
  headers: IncomingHttpHeaders;
  body: any;
  /** Set when the client closed the connection before the answer was complete. */
  abandoned: boolean;
};

export type FakeChat = {
  /** What every request without a queued reply answers. */
  answer: string;
  /** Replies for the next requests, one each, in order. */
  replies: FakeChatReply[];
  /** Requests received so far, in order. */
  requests: FakeChatRequest[];
};

export type FakeOpenAi = {
  baseUrl: string;
  /** Texts embedded so far, in request order. */
  inputs: string[];
  /** Milliseconds each request waits before answering (slows a job down for cancel tests). */
  delayMs: number;
  /** When set, every request answers this status instead. */
  failWith: number | undefined;
  /** Requests received on any path. */
  requests: number;
  /** The chat-completions script and record. */
  chat: FakeChat;
  close(): Promise<void>;
};

function tokens(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** A deterministic unit vector: each word adds 1 to a dimension chosen by its hash. */
export function fakeVector(text: string, dimension: number): number[] {
  const vector = new Array<number>(dimension).fill(0);
  for (const token of tokens(text)) {
    const slot = createHash('md5').update(token).digest().readUInt32LE(0) % dimension;
    vector[slot]! += 1;
  }
  const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0)) || 1;
  return vector.map((value) => value / norm);
}

async function readJson(request: IncomingMessage): Promise<any> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  return JSON.parse(Buffer.concat(parts).toString('utf8'));
}

/** One chat completion as OpenAI sends it: SSE chunks with word-sized deltas, or one JSON object. */
async function answerChat(body: any, reply: FakeChatReply, defaultAnswer: string, response: ServerResponse): Promise<void> {
  if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
  if (reply.status) {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (reply.retryAfter !== undefined) headers['retry-after'] = reply.retryAfter;
    response.writeHead(reply.status, headers);
    response.end(JSON.stringify({ error: { message: reply.message ?? 'injected failure', type: 'fake_error' } }));
    return;
  }
  const toolCalls = (reply.toolCalls ?? []).map((call, index) => ({ id: call.id ?? `call_fake_${index}`, name: call.name, arguments: call.arguments }));
  const answer = reply.deltas?.join('') ?? reply.answer ?? (toolCalls.length > 0 ? '' : defaultAnswer);
  const finishReason = toolCalls.length > 0 ? 'tool_calls' : 'stop';
  const base = { id: 'chatcmpl-fake', created: Math.floor(Date.now() / 1000), model: body.model };
  if (body.stream !== true || reply.json) {
    const message = toolCalls.length > 0
      ? { role: 'assistant', content: answer || null, tool_calls: toolCalls.map(({ id, name, arguments: args }) => ({ id, type: 'function', function: { name, arguments: args } })) }
      : { role: 'assistant', content: answer };
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finishReason }] }));
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (data: unknown) => {
    // Each event goes out in two writes cut mid-byte-sequence, as proxies may deliver it, so the
    // client's line buffering and UTF-8 decoding across chunks are exercised.
    const bytes = Buffer.from(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
    const half = Math.floor(bytes.length / 2);
    response.write(bytes.subarray(0, half));
    response.write(bytes.subarray(half));
  };
  const chunk = (delta: object, finishReason: string | null) => ({
    ...base,
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
  // OpenAI's first chunk carries the role and no text.
  send(chunk({ role: 'assistant', content: '' }, null));
  const texts = (reply.deltas ?? answer.match(/\s*\S+/g) ?? []).map((content) => ({ content }));
  // As OpenAI streams a call: the id and name first, then the arguments in pieces, by index.
  const fragments = toolCalls.flatMap((call, index) => {
    const third = Math.ceil(call.arguments.length / 3);
    const pieces = [0, third, 2 * third].map((start) => call.arguments.slice(start, start + third)).filter(Boolean);
    return [
      { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] },
      ...pieces.map((piece) => ({ tool_calls: [{ index, function: { arguments: piece } }] })),
    ];
  });
  for (const [index, delta] of [...texts, ...fragments].entries()) {
    if (index === reply.stallAfter) return;
    if (index === reply.endAfter) break;
    if (reply.deltaDelayMs) await new Promise((resolve) => setTimeout(resolve, reply.deltaDelayMs));
    send(chunk(delta, null));
  }
  if (reply.stallAfter !== undefined) return;
  if (reply.endAfter !== undefined) {
    response.end();
    return;
  }
  send(chunk({}, finishReason));
  send('[DONE]');
  response.end();
}

export async function startFakeOpenAi(options: { dimension?: number } = {}): Promise<FakeOpenAi> {
  const defaultDimension = options.dimension ?? 64;
  const state = { inputs: [] as string[], delayMs: 0, failWith: undefined as number | undefined, requests: 0 };
  const chat: FakeChat = { answer: 'The fake model has nothing to say [1].', replies: [], requests: [] };
  const server: Server = createServer(async (request, response) => {
    state.requests += 1;
    const body = await readJson(request);
    if (state.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, state.delayMs));
    if (state.failWith) {
      response.writeHead(state.failWith, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: 'injected failure' } }));
      return;
    }
    if (request.url === '/v1/chat/completions') {
      const received: FakeChatRequest = { headers: request.headers, body, abandoned: false };
      chat.requests.push(received);
      response.on('close', () => {
        if (!response.writableFinished) received.abandoned = true;
      });
      await answerChat(body, chat.replies.shift() ?? {}, chat.answer, response);
      return;
    }
    if (request.url !== '/v1/embeddings') {
      response.writeHead(404).end();
      return;
    }
    const inputs: string[] = Array.isArray(body.input) ? body.input : [body.input];
    state.inputs.push(...inputs);
    const dimension = body.dimensions ?? defaultDimension;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        object: 'list',
        model: body.model,
        data: inputs.map((input, index) => ({ object: 'embedding', index, embedding: fakeVector(input, dimension) })),
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const fake: FakeOpenAi = {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    get inputs() {
      return state.inputs;
    },
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(value) {
      state.delayMs = value;
    },
    get failWith() {
      return state.failWith;
    },
    set failWith(value) {
      state.failWith = value;
    },
    get requests() {
      return state.requests;
    },
    chat,
    close: () =>
      new Promise((resolve) => {
        // Stalled streams never end on their own.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return fake;
}

/** Environment that points a test server's embedder at a fake. */
export function fakeEmbeddingsEnv(fake: FakeOpenAi, dimension = 64): Record<string, string> {
  return {
    EMBEDDINGS_PROVIDER: 'openai',
    OPENAI_BASE_URL: fake.baseUrl,
    OPENAI_EMBEDDINGS_MODEL: 'fake-embedding',
    OPENAI_EMBEDDINGS_DIMENSIONS: String(dimension),
    EMBEDDINGS_MAX_RETRIES: '1',
    EMBEDDINGS_TIMEOUT_MS: '5000',
  };
}

/** Environment that makes a test server answer with the fake's chat model (one retry, short limits). */
export function fakeChatEnv(fake: FakeOpenAi, timeoutMs = 2000): Record<string, string> {
  return {
    LLM_PROVIDER: 'openai',
    OPENAI_BASE_URL: fake.baseUrl,
    OPENAI_CHAT_MODEL: 'fake-chat',
    LLM_TIMEOUT_MS: String(timeoutMs),
    LLM_MAX_RETRIES: '1',
  };
}
