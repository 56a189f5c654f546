import { AttemptError, attemptFailure, postJson, withRetries, type RetryPolicy } from '../openai-http.ts';
import { batches, embedDeduplicated, normalize, type EmbeddingProvider, type EmbedOptions } from './provider.ts';

export type OpenAiEmbeddingOptions = {
  /** Base URL of an OpenAI-compatible API, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …` when set; local servers usually need none. */
  apiKey?: string | undefined;
  /** Model name sent with every request. */
  model: string;
  /** Asked of the API as `dimensions` when set (text-embedding-3 models can shorten their vectors). */
  dimensions?: number | undefined;
  /** Inputs per request (default 256). */
  batchSize?: number;
  /** Requests in flight at once for one `embed` call (default 4). */
  concurrency?: number;
  /** Time limit of one request in milliseconds (default 30,000). */
  timeoutMs?: number;
  /** Retries of one request after a 429, a 5xx, a network error or a timeout (default 5). */
  maxRetries?: number;
  /** First backoff delay in milliseconds, doubled at each retry, with jitter (default 500). */
  retryBaseMs?: number;
  /** Longest wait between two tries, also the cap on `Retry-After` (default 30,000). */
  maxRetryDelayMs?: number;
  /** The similarity from which a question triggers a tool (TOOLS_MATCH_COSINE; default 0.5, a guess). */
  toolCosine?: number | undefined;
};

// A guess, not a measurement (no remote model is reachable here): builtin's 0.5, since
// general-purpose embedding models spread texts on a scale like the transformer's (unrelated texts
// below 0.2, two wordings of one request 0.6 and up) and unlike builtin-fast's static table (0.29).
// `npm run bench:tool-trigger -- --encoders openai` measures a model; TOOLS_MATCH_COSINE sets it.
const TOOL_COSINE = 0.5;

/** Vector sizes of OpenAI's own models, so that `dimension` is known before the first call. */
const knownDimensions: Readonly<Record<string, number>> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};

type EmbeddingsResponse = { data: { index: number; embedding: number[] }[] };

/** Embeddings from any OpenAI-compatible `POST {baseUrl}/embeddings` endpoint. */
export class OpenAiEmbeddingProvider implements EmbeddingProvider {
  readonly name = 'openai';
  readonly model: string;
  // A guess, not a measurement (no remote model is reachable here): between what general-purpose
  // embedding models commonly give unrelated texts (below 0.2) and an answering passage (0.4 and
  // up). Keyword coverage still answers a question whose best chunk falls below it.
  readonly relevantCosine = 0.35;
  readonly toolCosine: number;
  private knownDimension: number;
  private readonly url: string;
  private readonly batchSize: number;
  private readonly concurrency: number;
  private readonly timeoutMs: number;
  private readonly retryPolicy: RetryPolicy;

  constructor(private readonly options: OpenAiEmbeddingOptions) {
    this.model = options.model;
    this.toolCosine = options.toolCosine ?? TOOL_COSINE;
    this.knownDimension = options.dimensions ?? knownDimensions[options.model] ?? 0;
    this.url = `${options.baseUrl.replace(/\/+$/, '')}/embeddings`;
    this.batchSize = options.batchSize ?? 256;
    this.concurrency = options.concurrency ?? 4;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.retryPolicy = {
      maxRetries: options.maxRetries ?? 5,
      retryBaseMs: options.retryBaseMs ?? 500,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 30_000,
      // Ingestion runs in the background: a slow answer is worth another try.
      retryTimeouts: true,
    };
  }

  get dimension(): number {
    return this.knownDimension;
  }

  embed(texts: readonly string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    return embedDeduplicated(texts, async (distinct) => {
      const parts = batches(distinct, this.batchSize);
      const results: Float32Array[][] = new Array(parts.length);
      // The first batch that fails for good stops the others: the call has failed anyway.
      const failed = new AbortController();
      const signal = options.signal ? AbortSignal.any([options.signal, failed.signal]) : failed.signal;
      let next = 0;
      // A few requests in flight keep a remote API busy without tripping its rate limit at once.
      const lane = async () => {
        while (next < parts.length) {
          const part = next++;
          results[part] = await this.embedBatch(parts[part]!, signal);
        }
      };
      try {
        await Promise.all(Array.from({ length: Math.min(this.concurrency, parts.length) }, lane));
      } catch (error) {
        failed.abort(error);
        throw error;
      }
      return results.flat();
    });
  }

  async close(): Promise<void> {}

  private embedBatch(input: string[], signal: AbortSignal): Promise<Float32Array[]> {
    return withRetries(`Embeddings request to ${this.url}`, this.retryPolicy, signal, () => this.request(input, signal));
  }

  private async request(input: string[], signal: AbortSignal): Promise<Float32Array[]> {
    const context = { apiKey: this.options.apiKey, signal, timeout: AbortSignal.timeout(this.timeoutMs), timeoutMs: this.timeoutMs };
    const body = { model: this.model, input, ...(this.options.dimensions ? { dimensions: this.options.dimensions } : {}) };
    const response = await postJson(this.url, body, context);
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw attemptFailure(error, context);
    }
    return this.vectors(text, input.length);
  }

  /** Checks the answer's shape and puts its vectors back in input order. */
  private vectors(text: string, count: number): Float32Array[] {
    let parsed: EmbeddingsResponse;
    try {
      parsed = JSON.parse(text) as EmbeddingsResponse;
    } catch {
      throw new AttemptError('the API answered with a body that is not JSON', false);
    }
    if (!Array.isArray(parsed?.data) || parsed.data.length !== count) {
      throw new AttemptError(`the API answered ${Array.isArray(parsed?.data) ? parsed.data.length : 'no'} embeddings for ${count} inputs`, false);
    }
    const vectors: Float32Array[] = new Array(count);
    for (const item of parsed.data) {
      if (!Number.isInteger(item?.index) || item.index < 0 || item.index >= count || vectors[item.index]) {
        throw new AttemptError(`the API answered an embedding with an invalid or repeated index ${JSON.stringify(item?.index)}`, false);
      }
      if (!Array.isArray(item.embedding) || item.embedding.length === 0) {
        throw new AttemptError(`the API answered embedding ${item.index} without a vector`, false);
      }
      if (this.knownDimension === 0) this.knownDimension = item.embedding.length;
      if (item.embedding.length !== this.knownDimension) {
        throw new AttemptError(`the API answered a vector of ${item.embedding.length} dimensions, expected ${this.knownDimension}`, false);
      }
      vectors[item.index] = normalize(Float32Array.from(item.embedding));
    }
    return vectors;
  }
}
