/** The widget's side of the query API (POST /api/v2/query in SSE mode, feedback, and its configuration). */
import type { WidgetOptions } from './options.ts';
import { SseParser } from './sse.ts';

export type Source = { number: number; entryId: string; title: string | null; url: string | null; snippet?: string; score?: number };

export type Action = {
  id: string;
  label: string;
  icon?: { type: 'svg' | 'url' | 'emoji'; content: string };
  action: {
    type: 'trigger_handover' | 'open_url' | 'send_event' | 'send_query';
    url?: string;
    target?: '_blank' | '_self';
    query?: string;
    agentType?: string;
    event?: string;
    payload?: Record<string, unknown>;
  };
};

export type Answer = {
  queryId: string;
  answer: string;
  sessionId: string;
  timestamp: string;
  format: string;
  actions: Action[];
  sources: Source[];
};

/** What GET /api/v2/experiences/{id}/widget answers: how the experience presents itself. */
export type WidgetConfig = {
  assistantName: string | null;
  avatarUrl: string | null;
  greeting: string | null;
  starterQuestions: string[];
  imageHosts: string[];
  handover: { actionId: string; label: string; agentType: string | null } | null;
};

/** A failed request: `status` is the HTTP status (0 when the server could not be reached). */
export class RequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Seconds from a 429's Retry-After header, when the browser may read it. */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

/** What a streamed answer reports while it arrives. */
export type StreamHandlers = {
  onMeta(meta: { queryId: string; sessionId: string }): void;
  onDelta(text: string): void;
  onSources(sources: Source[]): void;
  onActions(actions: Action[]): void;
};

function headers(options: WidgetOptions, accept: string, contentType: string | undefined = 'application/json'): Record<string, string> {
  const all: Record<string, string> = { accept };
  // A GET without a body or a token is a simple request: the browser sends it without a preflight.
  if (contentType) all['content-type'] = contentType;
  if (options.token) all.authorization = `Bearer ${options.token}`;
  return all;
}

async function send(url: string, init: RequestInit & { method: 'GET' | 'POST' }): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, credentials: 'omit' });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw new RequestError(0, 'The server could not be reached.');
  }
  if (response.ok) return response;
  // Error answers carry the spec's body {statusCode, error, message, ...}; a proxy's may not.
  const body = (await response.json().catch(() => ({}))) as { message?: string };
  const retryAfter = Number(response.headers.get('retry-after'));
  throw new RequestError(response.status, body.message ?? response.statusText, retryAfter > 0 ? retryAfter : undefined);
}

/**
 * Asks a question and streams the answer: POST with `Accept: text/event-stream`, the events read
 * from the fetch body. Resolves with the whole answer (the `done` event); rejects with a
 * RequestError for an error answer, an `error` event, or a stream that ends early.
 */
export async function streamQuery(
  options: WidgetOptions,
  question: { text: string; sessionId: string | undefined },
  handlers: StreamHandlers,
  signal: AbortSignal,
): Promise<Answer> {
  const body = { text: question.text, experienceId: options.experienceId, sessionId: question.sessionId, userId: options.userId };
  const response = await send(`${options.baseUrl}/api/v2/query`, { method: 'POST', headers: headers(options, 'text/event-stream'), body: JSON.stringify(body), signal });
  if (!response.headers.get('content-type')?.includes('text/event-stream') || !response.body) {
    // A server (or proxy) that answered in JSON: the same answer, all at once.
    const answer = (await response.json()) as Answer;
    handlers.onMeta(answer);
    handlers.onDelta(answer.answer);
    handlers.onSources(answer.sources);
    handlers.onActions(answer.actions);
    return answer;
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const parser = new SseParser();
  let answer: Answer | undefined;
  // Read to the end (the server closes the stream after `done`) rather than cancel the body.
  for (;;) {
    const { value, done } = await reader.read();
    for (const { event, data } of done ? parser.end() : parser.push(value)) {
      let payload;
      try {
        payload = JSON.parse(data);
      } catch {
        throw new RequestError(502, `The answer stream sent a malformed ${event} event.`);
      }
      if (event === 'meta') handlers.onMeta(payload);
      else if (event === 'delta') handlers.onDelta(payload.text);
      else if (event === 'sources') handlers.onSources(payload.sources);
      else if (event === 'actions') handlers.onActions(payload.actions);
      else if (event === 'done') answer = payload as Answer;
      else if (event === 'error') {
        await reader.cancel();
        throw new RequestError(payload.statusCode ?? 500, payload.message ?? 'The answer failed.');
      }
    }
    if (done) break;
  }
  // Cut off by a proxy or a crash: to the visitor, the assistant is in trouble, as with a 502.
  if (!answer) throw new RequestError(502, 'The answer stream ended early.');
  return answer;
}

/** Rates an answer, with an optional comment (POST /api/v2/queries/{queryId}/feedback, 204). */
export async function sendFeedback(options: WidgetOptions, queryId: string, rating: 'up' | 'down', comment?: string): Promise<void> {
  await send(`${options.baseUrl}/api/v2/queries/${encodeURIComponent(queryId)}/feedback`, {
    method: 'POST',
    headers: headers(options, 'application/json'),
    body: JSON.stringify({ rating, comment }),
  });
}

/** The experience's presentation (GET /api/v2/experiences/{id}/widget). */
export async function fetchWidgetConfig(options: WidgetOptions): Promise<WidgetConfig> {
  const response = await send(`${options.baseUrl}/api/v2/experiences/${encodeURIComponent(options.experienceId)}/widget`, {
    method: 'GET',
    headers: headers(options, 'application/json', undefined),
  });
  return (await response.json()) as WidgetConfig;
}

/** The line the panel shows for a failed request: what happened, in the visitor's terms. */
export function friendlyError(error: unknown): string {
  const status = error instanceof RequestError ? error.status : 0;
  if (status === 0) return 'The assistant could not be reached. Check your connection and try again.';
  if (status === 400) return 'The assistant could not take this question. Please rephrase it and try again.';
  if (status === 401) return 'This assistant needs you to be signed in. Please sign in and try again.';
  if (status === 403) return 'This assistant is not available on this site.';
  if (status === 404) return 'This assistant could not be found. It may have been removed.';
  if (status === 409) return 'This conversation has ended. Start a new conversation to continue.';
  if (status === 429) {
    const wait = (error as RequestError).retryAfter;
    return `Too many questions at once. Please wait ${wait ? `${wait} seconds` : 'a moment'} and try again.`;
  }
  if (status >= 500) return 'The assistant is having trouble right now. Please try again in a moment.';
  return 'Something went wrong. Please try again.';
}
