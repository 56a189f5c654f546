/**
 * What the OpenAI-compatible providers (embeddings, chat completions) share: one POST with its
 * failures sorted into retryable or not, and the retry loop with backoff that turns the last
 * failure into a 502 or 504 AppError.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../errors.ts';

/** How often and how patiently a provider retries one request. */
export type RetryPolicy = {
  /** Retries after the first try (0: try once). */
  maxRetries: number;
  /** First backoff delay in milliseconds, doubled at each retry, with jitter. */
  retryBaseMs: number;
  /** Longest wait between two tries, also the cap on `Retry-After`. */
  maxRetryDelayMs: number;
  /** Whether a try that ran out of time is tried again (a background job may; a waiting user may not). */
  retryTimeouts: boolean;
};

/** A failed try: whether another may succeed, and how long the server asked us to wait. */
export class AttemptError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly timedOut = false,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** One try's context: its key, the caller's signal and the time limit that ends the try. */
export type AttemptContext = {
  apiKey?: string | undefined;
  /** Aborted when the caller gives up: rethrown as is, never retried. */
  signal?: AbortSignal | undefined;
  /** Aborted when the try runs out of time. */
  timeout: AbortSignal;
  /** The limit `timeout` enforces, for the error message. */
  timeoutMs: number;
};

/**
 * POSTs `body` as JSON and resolves with the response once a 2xx status arrives. Any other status,
 * a network error or the time limit rejects with an AttemptError; the caller's abort rejects with
 * its reason.
 */
export async function postJson(url: string, body: unknown, context: AttemptContext): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (context.apiKey) headers.authorization = `Bearer ${context.apiKey}`;
  const signal = context.signal ? AbortSignal.any([context.signal, context.timeout]) : context.timeout;
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal });
  } catch (error) {
    throw attemptFailure(error, context);
  }
  if (response.ok) return response;
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw attemptFailure(error, context);
  }
  throw new AttemptError(
    `the API answered ${response.status}${upstreamMessage(text, context.apiKey)}`,
    response.status === 429 || response.status >= 500,
    false,
    retryAfterMs(response.headers.get('retry-after')),
  );
}

/**
 * Sorts an error thrown while sending or reading a request: the caller's abort is rethrown as its
 * reason; the time limit and network errors become retryable AttemptErrors.
 */
export function attemptFailure(error: unknown, context: AttemptContext): AttemptError {
  context.signal?.throwIfAborted();
  if (context.timeout.aborted) return new AttemptError(`no answer within ${context.timeoutMs} ms`, true, true);
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return new AttemptError(`${error instanceof Error ? error.message : String(error)}${cause}`, true);
}

/**
 * Runs `attempt` until it succeeds, retrying the retryable AttemptErrors with exponential backoff
 * (or the server's `Retry-After`) up to `policy.maxRetries` times. The last failure becomes a
 * GATEWAY_TIMEOUT (time limit) or BAD_GATEWAY AppError whose message starts with `label`.
 */
export async function withRetries<T>(
  label: string,
  policy: RetryPolicy,
  signal: AbortSignal | undefined,
  attempt: () => Promise<T>,
): Promise<T> {
  for (let tries = 1; ; tries++) {
    signal?.throwIfAborted();
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof AttemptError)) throw error;
      const retryable = error.retryable && (!error.timedOut || policy.retryTimeouts);
      if (!retryable || tries > policy.maxRetries) {
        throw gatewayError(`${label} failed after ${tries} ${tries === 1 ? 'try' : 'tries'}: ${error.message}`, error.timedOut);
      }
      const backoff = Math.min(policy.retryBaseMs * 2 ** (tries - 1), policy.maxRetryDelayMs);
      // Jitter spreads the retries of many callers that hit the same rate limit at once.
      const delay = error.retryAfterMs ?? backoff / 2 + Math.random() * (backoff / 2);
      await sleep(Math.min(delay, policy.maxRetryDelayMs), undefined, { signal }).catch(() => signal?.throwIfAborted());
    }
  }
}

/** The AppError of a provider that failed: 504 when it ran out of time, 502 otherwise. */
export function gatewayError(message: string, timedOut: boolean): AppError {
  return new AppError(timedOut ? 'GATEWAY_TIMEOUT' : 'BAD_GATEWAY', message);
}

/** `Retry-After` in milliseconds: either delay-seconds or an HTTP date. */
export function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/**
 * The API's own error message (OpenAI's `{error: {message}}`), shortened, for the final error. A
 * server that echoes the key back (some proxies quote the whole header) never gets it into our
 * errors, which reach logs and, for answers, end users.
 */
export function upstreamMessage(text: string, apiKey?: string): string {
  let message = text;
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string };
    if (typeof parsed.error === 'string') message = parsed.error;
    else if (typeof parsed.error?.message === 'string') message = parsed.error.message;
  } catch {
    // Not JSON: the raw text is the best description there is.
  }
  if (apiKey) message = message.replaceAll(apiKey, '[redacted]');
  message = message.trim();
  return message ? `: ${message.length > 300 ? `${message.slice(0, 300)}…` : message}` : '';
}
