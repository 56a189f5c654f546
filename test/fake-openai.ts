/**
 * A local HTTP server that speaks the OpenAI embeddings protocol (POST /v1/embeddings), for tests
 * that need fast, deterministic vectors. Each vector is a hashed bag of words, so texts sharing
 * words are close: good enough for retrieval assertions, and instant.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';

export type FakeOpenAi = {
  baseUrl: string;
  /** Texts embedded so far, in request order. */
  inputs: string[];
  /** Milliseconds each request waits before answering (slows a job down for cancel tests). */
  delayMs: number;
  /** When set, every request answers this status instead. */
  failWith: number | undefined;
  requests: number;
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

export async function startFakeOpenAi(options: { dimension?: number } = {}): Promise<FakeOpenAi> {
  const defaultDimension = options.dimension ?? 64;
  const state = { inputs: [] as string[], delayMs: 0, failWith: undefined as number | undefined, requests: 0 };
  const server: Server = createServer(async (request, response) => {
    state.requests += 1;
    const body = await readJson(request);
    if (state.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, state.delayMs));
    if (state.failWith) {
      response.writeHead(state.failWith, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: 'injected failure' } }));
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
    close: () => new Promise((resolve) => server.close(() => resolve())),
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
