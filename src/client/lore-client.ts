/**
 * A typed client of lore's public HTTP API over the platform's `fetch`: ingestion jobs, adapters,
 * knowledge bases and their entries. `lore ingest` and the tests talk to the service through it.
 */
import { STATUS_CODES } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Static } from 'typebox';
import type { ErrorBody } from '../core/errors.ts';
import type { Entry, ListEntriesFilter } from '../features/entries/entries.schemas.ts';
import type { AdapterSchema, Job, JobStatus, ListJobsQuery, RecordResult, SubmittedSchema } from '../features/ingestion/jobs.schemas.ts';
import type { KnowledgeBase, NewKnowledgeBase } from '../features/knowledge-bases/knowledge-bases.schemas.ts';

export type { Entry, Job, JobStatus, KnowledgeBase, RecordResult };
export type Adapter = Static<typeof AdapterSchema>;
export type Submitted = Static<typeof SubmittedSchema>;
export type JobsPage = { total: number; jobs: Job[] };
export type EntriesPage = { total: number; entries: Entry[] };
export type KnowledgeBasesPage = { total: number; knowledgeBases: KnowledgeBase[] };

/** Statuses after which a job changes no more. */
export const terminalJobStatuses: readonly JobStatus[] = ['completed', 'failed', 'cancelled'];

/**
 * The spec's guidance: JSON bodies below 1 MB, multipart/form-data from 1 MB up (to 30 MB).
 * `submitJob` picks the encoding by the size of the JSON body it would send.
 */
export const MULTIPART_FROM_BYTES = 1024 * 1024;

/** How the client reaches the service and authenticates. */
export type LoreClientOptions = {
  /** The service's base URL, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string;
  /** A bearer token. Give either this or `clientId` and `clientSecret`. */
  token?: string;
  /** An access-token client: the client obtains tokens through the client-credentials grant and renews them before they expire. */
  clientId?: string;
  clientSecret?: string;
  /** Retries after a 429, 502, 503 or 504 answer or a network error (default 4). */
  retries?: number;
  /** The first retry's delay in milliseconds, doubled on each further retry (default 250); a `Retry-After` header wins. */
  retryDelayMs?: number;
  /** Milliseconds one request may take before it is abandoned (default 120,000: a 30 MB upload on a slow link). */
  timeoutMs?: number;
};

/** An error answer of the API, with the spec's body (`statusCode`, `error`, `message`, `timestamp`, `path`, and `errors` on a 400). */
export class LoreApiError extends Error {
  readonly status: number;
  constructor(readonly body: ErrorBody) {
    super(`${body.statusCode} ${body.error}: ${body.message}`);
    this.name = 'LoreApiError';
    this.status = body.statusCode;
  }
}

/** The service could not be reached (after the retries), or did not answer in time. */
export class LoreConnectionError extends Error {
  /** Why, without the request: `ECONNREFUSED`, `no answer within 120000 ms`. */
  readonly reason: string;
  constructor(request: string, options: { cause: unknown; reason: string }) {
    super(`${request} failed: ${options.reason}`, options);
    this.name = 'LoreConnectionError';
    this.reason = options.reason;
  }
}

/** A payload already serialized to JSON: sent as is, so a caller that measured its size does not serialize it twice. */
export class JsonText {
  constructor(readonly text: string) {}
}

/** A job to submit. */
export type JobSubmission = {
  /** An adapter name from `listAdapters()`, e.g. `generic-json`. */
  adapterType: string;
  knowledgeBaseId: string;
  /** The adapter's payload, as a value or as a `JsonText`. */
  data: unknown;
};

/**
 * When a failed request may be sent again. `idempotent`: after a network error or a 429, 502,
 * 503 or 504. `unprocessed`: only when the service surely did not act on it (no connection was
 * made, or it answered 429 or 503), so that a retried submit never creates a second job.
 */
type RetryPolicy = 'idempotent' | 'unprocessed';

const retriedStatuses: Record<RetryPolicy, readonly number[]> = { idempotent: [429, 502, 503, 504], unprocessed: [429, 503] };
// Errors raised before a connection existed: the request never left this process.
const unsentErrorCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']);
// A Retry-After longer than this is not waited for: the caller is better told.
const maxRetryAfterMs = 30_000;

type RequestOptions = {
  query?: Record<string, string | number | boolean | undefined>;
  body?: BodyInit;
  contentType?: string;
  retry: RetryPolicy;
  /** False for the token grant itself. */
  authenticated?: boolean;
};

function errorCodeOf(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}

/** What went wrong with a request that got no answer: fetch's own message is only "fetch failed". */
function networkReason(error: unknown, timeoutMs: number): string {
  if ((error as Error).name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  const cause = (error as { cause?: { message?: unknown } }).cause;
  return errorCodeOf(error) ?? (typeof cause?.message === 'string' ? cause.message : (error as Error).message);
}

function retryAfterMs(response: Response): number | undefined {
  const seconds = Number(response.headers.get('retry-after'));
  return Number.isFinite(seconds) && seconds >= 0 && response.headers.has('retry-after') ? Math.min(seconds * 1000, maxRetryAfterMs) : undefined;
}

/** The spec's error body of an answer, or one built from its status when the answer has none (a proxy's HTML page). */
async function errorBodyOf(response: Response, path: string): Promise<ErrorBody> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as Partial<ErrorBody>;
    if (typeof body.statusCode === 'number' && typeof body.message === 'string') return body as ErrorBody;
  } catch {
    // Not JSON: described below from the status and the first characters of the text.
  }
  return {
    statusCode: response.status,
    error: STATUS_CODES[response.status] ?? 'Error',
    message: text.trim().slice(0, 200) || `HTTP ${response.status}`,
    timestamp: new Date().toISOString(),
    path,
  };
}

/** One client per service and identity; safe to share between concurrent calls. */
export class LoreClient {
  private readonly baseUrl: string;
  private readonly retries: number;
  private readonly retryDelayMs: number;
  private readonly timeoutMs: number;
  private token: { value: string; renewAt: number } | undefined;
  private tokenRequest: Promise<string> | undefined;

  constructor(private readonly options: LoreClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.retries = options.retries ?? 4;
    this.retryDelayMs = options.retryDelayMs ?? 250;
    this.timeoutMs = options.timeoutMs ?? 120_000;
    if (options.token) this.token = { value: options.token, renewAt: Infinity };
    else if (!options.clientId || !options.clientSecret) throw new Error('LoreClient needs a token, or a clientId and a clientSecret.');
  }

  /**
   * Submits an ingestion job; the service answers 202 at once and processes it in the background.
   * Bodies of 1 MB and more go as multipart/form-data with the payload as a JSON file part.
   */
  async submitJob(submission: JobSubmission): Promise<Submitted> {
    const dataText = submission.data instanceof JsonText ? submission.data.text : JSON.stringify(submission.data);
    const fields = `{"adapterType":${JSON.stringify(submission.adapterType)},"knowledgeBaseId":${JSON.stringify(submission.knowledgeBaseId)},"data":`;
    const size = Buffer.byteLength(fields) + Buffer.byteLength(dataText) + 1;
    const path = '/api/v2/data-ingestion/jobs';
    if (size < MULTIPART_FROM_BYTES) {
      return this.json<Submitted>('POST', path, { body: `${fields}${dataText}}`, contentType: 'application/json', retry: 'unprocessed' });
    }
    const form = new FormData();
    form.append('adapterType', submission.adapterType);
    form.append('knowledgeBaseId', submission.knowledgeBaseId);
    form.append('data', new Blob([dataText], { type: 'application/json' }), 'data.json');
    return this.json<Submitted>('POST', path, { body: form, retry: 'unprocessed' });
  }

  /**
   * Submits documents to the files adapter: one multipart file part named `files` per document
   * (its name, directories included, is the record id unless `manifest` gives another).
   */
  async submitFiles(submission: { knowledgeBaseId: string; files: { name: string; content: Blob }[]; manifest?: Record<string, object> }): Promise<Submitted> {
    const form = new FormData();
    form.append('adapterType', 'files');
    form.append('knowledgeBaseId', submission.knowledgeBaseId);
    if (submission.manifest) form.append('manifest', JSON.stringify(submission.manifest));
    for (const file of submission.files) form.append('files', file.content, file.name);
    return this.json<Submitted>('POST', '/api/v2/data-ingestion/jobs', { body: form, retry: 'unprocessed' });
  }

  /** A job with its progress and per-record results; `includePayload` adds the submitted payload. */
  getJob(jobId: string, options: { includePayload?: boolean } = {}): Promise<Job> {
    return this.json<Job>('GET', `/api/v2/data-ingestion/jobs/${encodeURIComponent(jobId)}`, {
      query: { includePayload: options.includePayload },
      retry: 'idempotent',
    });
  }

  /** The workspace's jobs, newest first (`limit` 1-100, default 20). */
  listJobs(query: Partial<Static<typeof ListJobsQuery>> = {}): Promise<JobsPage> {
    return this.json<JobsPage>('GET', '/api/v2/data-ingestion/jobs', { query, retry: 'idempotent' });
  }

  /** Cancels a pending or processing job (it becomes `cancelled`); a finished job answers 409. */
  async cancelJob(jobId: string): Promise<void> {
    await this.send('DELETE', `/api/v2/data-ingestion/jobs/${encodeURIComponent(jobId)}`, { retry: 'idempotent' });
  }

  listAdapters(): Promise<Adapter[]> {
    return this.json<Adapter[]>('GET', '/api/v2/data-ingestion/adapters', { retry: 'idempotent' });
  }

  createKnowledgeBase(knowledgeBase: NewKnowledgeBase): Promise<KnowledgeBase> {
    return this.json<KnowledgeBase>('POST', '/api/v2/knowledge-bases', {
      body: JSON.stringify(knowledgeBase),
      contentType: 'application/json',
      retry: 'unprocessed',
    });
  }

  getKnowledgeBase(id: string): Promise<KnowledgeBase> {
    return this.json<KnowledgeBase>('GET', `/api/v2/knowledge-bases/${encodeURIComponent(id)}`, { retry: 'idempotent' });
  }

  listKnowledgeBases(query: { limit?: number; offset?: number } = {}): Promise<KnowledgeBasesPage> {
    return this.json<KnowledgeBasesPage>('GET', '/api/v2/knowledge-bases', { query, retry: 'idempotent' });
  }

  /** The entries of a knowledge base, newest first, filtered by source, tag or title text. */
  listEntries(knowledgeBaseId: string, query: Partial<ListEntriesFilter> = {}): Promise<EntriesPage> {
    return this.json<EntriesPage>('GET', `/api/v2/knowledge-bases/${encodeURIComponent(knowledgeBaseId)}/entries`, {
      query,
      retry: 'idempotent',
    });
  }

  private async json<Body>(method: string, path: string, options: RequestOptions): Promise<Body> {
    const response = await this.send(method, path, options);
    return (await response.json()) as Body;
  }

  /** Sends a request with the current token, retrying per its policy; throws LoreApiError on an error answer. */
  private async send(method: string, path: string, options: RequestOptions): Promise<Response> {
    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    let renewedAfter401 = false;
    for (let attempt = 0; ; attempt += 1) {
      const headers: Record<string, string> = { accept: 'application/json' };
      if (options.contentType) headers['content-type'] = options.contentType;
      if (options.authenticated !== false) headers.authorization = `Bearer ${await this.currentToken()}`;
      const canRetry = attempt < this.retries;
      let response: Response;
      try {
        response = await fetch(url, { method, headers, body: options.body, signal: AbortSignal.timeout(this.timeoutMs) });
      } catch (error) {
        const unsent = unsentErrorCodes.has(errorCodeOf(error) ?? '');
        if (canRetry && (unsent || options.retry === 'idempotent')) {
          await sleep(this.backoffMs(attempt));
          continue;
        }
        throw new LoreConnectionError(`${method} ${url.origin}${path}`, { cause: error, reason: networkReason(error, this.timeoutMs) });
      }
      if (response.ok) return response;
      // A client-credentials token may expire early by the service's clock: one fresh token, one more try.
      if (response.status === 401 && this.options.clientId && options.authenticated !== false && !renewedAfter401) {
        await response.body?.cancel();
        renewedAfter401 = true;
        this.token = undefined;
        continue;
      }
      if (canRetry && retriedStatuses[options.retry].includes(response.status)) {
        await response.body?.cancel();
        await sleep(retryAfterMs(response) ?? this.backoffMs(attempt));
        continue;
      }
      throw new LoreApiError(await errorBodyOf(response, url.pathname));
    }
  }

  /** Exponential backoff with jitter, so that clients failing together do not retry together. */
  private backoffMs(attempt: number): number {
    return this.retryDelayMs * 2 ** attempt * (0.75 + Math.random() / 2);
  }

  /** The bearer token: the given one, or a client-credentials token renewed before it expires (one grant at a time). */
  private async currentToken(): Promise<string> {
    if (this.token && Date.now() < this.token.renewAt) return this.token.value;
    this.tokenRequest ??= this.grantToken().finally(() => {
      this.tokenRequest = undefined;
    });
    return this.tokenRequest;
  }

  private async grantToken(): Promise<string> {
    const requestedAt = Date.now();
    const response = await this.send('POST', '/v2/auth/access-tokens', {
      body: JSON.stringify({ clientId: this.options.clientId, clientSecret: this.options.clientSecret }),
      contentType: 'application/json',
      retry: 'idempotent',
      authenticated: false,
    });
    const grant = (await response.json()) as { access_token: string; expires_in: number };
    // Renew when a tenth of the lifetime is left (at most a minute early), so no request goes out with a token about to expire.
    const lifetimeMs = grant.expires_in * 1000;
    this.token = { value: grant.access_token, renewAt: requestedAt + lifetimeMs - Math.min(lifetimeMs / 10, 60_000) };
    return grant.access_token;
  }
}
