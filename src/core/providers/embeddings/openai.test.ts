import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import { after, before, beforeEach, describe, test } from 'node:test';
import { loadConfig } from '../../config.ts';
import { AppError } from '../../errors.ts';
import { BuiltinFastEmbeddingProvider } from './builtin-fast.ts';
import { BuiltinEmbeddingProvider } from './builtin.ts';
import { createEmbeddingProvider } from './create.ts';
import { OpenAiEmbeddingProvider, type OpenAiEmbeddingOptions } from './openai.ts';

type Received = { method: string; url: string; headers: IncomingHttpHeaders; body: any };
/** What the fake API answers to one request: a status, headers and a JSON body, or silence. */
type Reply = { status: number; headers?: Record<string, string>; body: unknown } | 'hang';

/** The vector the fake API gives a text: its number (texts are "text 17") and a constant. */
function fakeVector(text: string): number[] {
  return [Number(text.split(' ')[1] ?? 0), 1, 0];
}

function success(input: string[], reverse = false): Reply {
  const data = input.map((text, index) => ({ object: 'embedding', index, embedding: fakeVector(text) }));
  return { status: 200, body: { object: 'list', data: reverse ? data.reverse() : data, model: 'test-model' } };
}

/** An OpenAI-compatible embeddings API on a loopback port, answering from a script. */
class FakeApi {
  received: Received[] = [];
  replies: ((input: string[]) => Reply)[] = [];
  private server: Server = createServer((request, response) => {
    let raw = '';
    request.on('data', (piece: Buffer) => (raw += piece.toString()));
    request.on('end', () => {
      const body = JSON.parse(raw);
      this.received.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      const reply = (this.replies.shift() ?? ((input: string[]) => success(input)))(body.input);
      if (reply === 'hang') return;
      response.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      response.end(JSON.stringify(reply.body));
    });
  });
  url = '';

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const api = new FakeApi();
before(() => api.start());
after(() => api.stop());
beforeEach(() => {
  api.received = [];
  api.replies = [];
});

function provider(options: Partial<OpenAiEmbeddingOptions> = {}): OpenAiEmbeddingProvider {
  return new OpenAiEmbeddingProvider({ baseUrl: api.url, model: 'test-model', retryBaseMs: 1, ...options });
}

/** The AppError a promise rejects with (fails the test when it resolves or rejects otherwise). */
async function appError(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof AppError, `expected an AppError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a rejection');
}

describe('OpenAiEmbeddingProvider', () => {
  test('posts {model, input, dimensions} with the bearer key and returns normalized vectors in order', async () => {
    const embedder = provider({ apiKey: 'sk-test', dimensions: 3 });
    const vectors = await embedder.embed(['text 3', 'text 0']);
    assert.equal(api.received.length, 1);
    const [request] = api.received;
    assert.equal(request!.method, 'POST');
    assert.equal(request!.url, '/v1/embeddings');
    assert.equal(request!.headers.authorization, 'Bearer sk-test');
    assert.equal(request!.headers['content-type'], 'application/json');
    assert.deepEqual(request!.body, { model: 'test-model', input: ['text 3', 'text 0'], dimensions: 3 });
    // [3, 1, 0] / sqrt(10) and [0, 1, 0]
    assert.deepEqual(vectors, [Float32Array.from([3 / Math.sqrt(10), 1 / Math.sqrt(10), 0]), Float32Array.from([0, 1, 0])]);
    assert.equal(embedder.dimension, 3);
  });

  test('sends no authorization header and no dimensions when neither is configured', async () => {
    await provider().embed(['text 1']);
    assert.equal(api.received[0]!.headers.authorization, undefined);
    assert.deepEqual(api.received[0]!.body, { model: 'test-model', input: ['text 1'] });
  });

  test('splits 600 texts into requests of 256, 256 and 88 and keeps the order', async () => {
    const texts = Array.from({ length: 600 }, (_, index) => `text ${index}`);
    const vectors = await provider({ concurrency: 2 }).embed(texts);
    assert.deepEqual(
      api.received.map((request) => request.body.input.length).sort((a: number, b: number) => b - a),
      [256, 256, 88],
    );
    assert.equal(vectors.length, 600);
    for (const [index, vector] of vectors.entries()) {
      const norm = Math.hypot(index, 1);
      assert.deepEqual(vector, Float32Array.from([index / norm, 1 / norm, 0]), `vector of text ${index}`);
    }
  });

  test('honours a configured batch size', async () => {
    await provider({ batchSize: 2 }).embed(['text 1', 'text 2', 'text 3']);
    assert.deepEqual(api.received.map((request) => request.body.input), [['text 1', 'text 2'], ['text 3']]);
  });

  test('puts vectors back by their index when the API answers out of order', async () => {
    api.replies.push((input) => success(input, true));
    const vectors = await provider().embed(['text 5', 'text 0']);
    assert.deepEqual(vectors[1], Float32Array.from([0, 1, 0]));
    assert.deepEqual(vectors[0], Float32Array.from([5 / Math.hypot(5, 1), 1 / Math.hypot(5, 1), 0]));
  });

  test('sends a text repeated within one call once', async () => {
    const vectors = await provider().embed(['text 2', 'text 9', 'text 2']);
    assert.deepEqual(api.received[0]!.body.input, ['text 2', 'text 9']);
    assert.deepEqual(vectors[0], vectors[2]);
    assert.notDeepEqual(vectors[0], vectors[1]);
  });

  test('waits as long as Retry-After says after a 429, then succeeds', async () => {
    api.replies.push(() => ({ status: 429, headers: { 'retry-after': '1' }, body: { error: { message: 'Rate limit reached' } } }));
    const started = performance.now();
    const vectors = await provider().embed(['text 4']);
    const waited = performance.now() - started;
    assert.equal(api.received.length, 2);
    assert.ok(waited >= 950, `waited ${waited} ms`);
    assert.equal(vectors.length, 1);
  });

  test('retries after a 500', async () => {
    api.replies.push(() => ({ status: 500, body: { error: { message: 'boom' } } }));
    const vectors = await provider().embed(['text 0']);
    assert.equal(api.received.length, 2);
    assert.deepEqual(vectors, [Float32Array.from([0, 1, 0])]);
  });

  test('gives up with a 502 AppError after the retry budget', async () => {
    for (let index = 0; index < 3; index++) {
      api.replies.push(() => ({ status: 503, body: { error: { message: 'The engine is overloaded' } } }));
    }
    const error = await appError(provider({ maxRetries: 2 }).embed(['text 1']));
    assert.equal(api.received.length, 3);
    assert.equal(error.code, 'BAD_GATEWAY');
    assert.equal(error.status, 502);
    assert.equal(error.message, `Embeddings request to ${api.url}/embeddings failed after 3 tries: the API answered 503: The engine is overloaded`);
  });

  test('does not retry a 401 and reports the API\'s message', async () => {
    api.replies.push(() => ({ status: 401, body: { error: { message: 'Incorrect API key provided' } } }));
    const error = await appError(provider({ apiKey: 'wrong' }).embed(['text 1']));
    assert.equal(api.received.length, 1);
    assert.equal(error.status, 502);
    assert.equal(error.message, `Embeddings request to ${api.url}/embeddings failed after 1 try: the API answered 401: Incorrect API key provided`);
  });

  test('times out a request that is never answered with a 504 AppError', async () => {
    api.replies.push(() => 'hang', () => 'hang');
    const started = performance.now();
    const error = await appError(provider({ timeoutMs: 200, maxRetries: 1 }).embed(['text 1']));
    assert.equal(api.received.length, 2);
    assert.equal(error.code, 'GATEWAY_TIMEOUT');
    assert.equal(error.status, 504);
    assert.equal(error.message, `Embeddings request to ${api.url}/embeddings failed after 2 tries: no answer within 200 ms`);
    assert.ok(performance.now() - started < 2000);
  });

  test('retries when the connection is refused, then fails with a 502', async () => {
    const closed = new FakeApi();
    await closed.start();
    await closed.stop();
    const error = await appError(new OpenAiEmbeddingProvider({ baseUrl: closed.url, model: 'm', maxRetries: 1, retryBaseMs: 1 }).embed(['a']));
    assert.equal(error.status, 502);
    assert.match(error.message, /failed after 2 tries: fetch failed: connect ECONNREFUSED/);
  });

  test('rejects answers that do not match the request', async () => {
    api.replies.push(() => ({ status: 200, body: { data: [{ index: 0, embedding: [1, 0] }] } }));
    const error = await appError(provider().embed(['text 1', 'text 2']));
    assert.equal(error.status, 502);
    assert.match(error.message, /the API answered 1 embeddings for 2 inputs$/);
  });

  test('knows the dimension of OpenAI models up front and learns others from the first answer', async () => {
    assert.equal(provider({ model: 'text-embedding-3-small' }).dimension, 1536);
    assert.equal(provider({ model: 'text-embedding-3-large' }).dimension, 3072);
    assert.equal(provider({ model: 'text-embedding-3-large', dimensions: 256 }).dimension, 256);
    const local = provider({ model: 'nomic-embed-text' });
    assert.equal(local.dimension, 0);
    await local.embed(['text 1']);
    assert.equal(local.dimension, 3);
  });

  test('refuses vectors whose size differs from the configured dimension', async () => {
    const error = await appError(provider({ dimensions: 4 }).embed(['text 1']));
    assert.equal(error.status, 502);
    assert.match(error.message, /the API answered a vector of 3 dimensions, expected 4$/);
  });

  test('stops at once when the caller aborts', async () => {
    api.replies.push(() => 'hang');
    const controller = new AbortController();
    const pending = provider().embed(['text 1'], { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('client went away')), 50);
    await assert.rejects(pending, { message: 'client went away' });
  });
});

describe('createEmbeddingProvider', () => {
  test('builds the openai provider from the environment', async () => {
    const config = loadConfig(
      { EMBEDDINGS_PROVIDER: 'openai', OPENAI_BASE_URL: api.url, OPENAI_API_KEY: 'sk-config', OPENAI_EMBEDDINGS_DIMENSIONS: '3' },
      false,
    );
    assert.equal(config.embeddingsBatchSize, 256);
    const embedder = createEmbeddingProvider(config);
    assert.ok(embedder instanceof OpenAiEmbeddingProvider);
    assert.deepEqual([embedder.name, embedder.model, embedder.dimension], ['openai', 'text-embedding-3-small', 3]);
    await embedder.embed(['text 1']);
    assert.equal(api.received[0]!.headers.authorization, 'Bearer sk-config');
    assert.deepEqual(api.received[0]!.body, { model: 'text-embedding-3-small', input: ['text 1'], dimensions: 3 });
  });

  test('builds builtin-fast by default, in MODELS_DIR; builtin on request, one thread per core unless told otherwise', async () => {
    const byDefault = createEmbeddingProvider(loadConfig({ MODELS_DIR: '/tmp/models' }, false));
    assert.ok(byDefault instanceof BuiltinFastEmbeddingProvider);
    assert.deepEqual([byDefault.name, byDefault.model, byDefault.dimension], ['builtin-fast', 'universal-sentence-encoder-lite-static', 512]);
    await byDefault.close();
    assert.equal(loadConfig({}, false).embeddingsThreads, availableParallelism());
    const config = loadConfig({ EMBEDDINGS_PROVIDER: 'builtin', EMBEDDINGS_THREADS: '3' }, false);
    assert.deepEqual([config.embeddingsThreads, config.embeddingsBatchSize], [3, 16]);
    const embedder = createEmbeddingProvider(config);
    assert.ok(embedder instanceof BuiltinEmbeddingProvider);
    assert.deepEqual([embedder.name, embedder.model, embedder.dimension], ['builtin', 'universal-sentence-encoder-lite', 512]);
    await embedder.close();
  });
});
