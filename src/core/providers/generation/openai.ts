import {
  AttemptError,
  attemptFailure,
  gatewayError,
  postJson,
  upstreamMessage,
  withRetries,
  type AttemptContext,
  type RetryPolicy,
} from '../openai-http.ts';
import { buildGroundedPrompt, type ChatMessage } from './grounded-prompt.ts';
import type { AnswerGenerator, GenerationRequest } from './provider.ts';

export type OpenAiAnswerOptions = {
  /** Base URL of an OpenAI-compatible API, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1` (Ollama). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …` when set; local servers usually need none. */
  apiKey?: string | undefined;
  /** Default chat model; a request's `model` overrides it. */
  model: string;
  /**
   * Time limit in milliseconds of one try until the first text arrives, and then of each silence
   * between two chunks of the stream (default 30,000).
   */
  timeoutMs?: number;
  /** Retries after a 429, a 5xx or a network error before any text arrived (default 2). */
  maxRetries?: number;
  /** First backoff delay in milliseconds, doubled at each retry, with jitter (default 500). */
  retryBaseMs?: number;
  /** Longest wait between two tries, also the cap on `Retry-After` (default 10,000: someone is waiting). */
  maxRetryDelayMs?: number;
};

type ChatCompletionsBody = { model: string; messages: ChatMessage[]; stream: true };

/** A chunk of a streamed answer (`data:` line), or a whole answer when the server does not stream. */
type CompletionPayload = {
  choices?: { delta?: { content?: unknown }; message?: { content?: unknown }; finish_reason?: unknown }[];
  error?: { message?: unknown } | string;
};

/** An answer whose first text has arrived; the rest is read when asked for. */
type OpenedAnswer = { first: string; rest: AsyncGenerator<string, string | null> };

/** Answers from any OpenAI-compatible `POST {baseUrl}/chat/completions` endpoint, streamed. */
export class OpenAiAnswerGenerator implements AnswerGenerator {
  readonly name = 'openai';
  readonly model: string;
  private readonly url: string;
  private readonly timeoutMs: number;
  private readonly retryPolicy: RetryPolicy;

  constructor(private readonly options: OpenAiAnswerOptions) {
    this.model = options.model;
    this.url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.retryPolicy = {
      maxRetries: options.maxRetries ?? 2,
      retryBaseMs: options.retryBaseMs ?? 500,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 10_000,
      // The user has already waited the whole limit once; another try would double the wait.
      retryTimeouts: false,
    };
  }

  async *generate(request: GenerationRequest): AsyncGenerator<string> {
    // Nothing relevant was retrieved: the model could only make an answer up, and would cost a call.
    if (request.sources.length === 0) {
      yield request.fallbackMessage;
      return;
    }
    const model = request.model ?? this.model;
    // Names the model, not the URL: this message reaches the anonymous users of a public experience.
    const label = `Chat completions request for model ${model}`;
    const body: ChatCompletionsBody = { model, messages: buildGroundedPrompt(request), stream: true };
    // Only the part before the first text is retried: text already shown cannot be taken back.
    const answer = await withRetries(label, this.retryPolicy, request.signal, () => this.open(body, request.signal));
    try {
      yield answer.first;
      for (;;) {
        let next: IteratorResult<string, string | null>;
        try {
          next = await answer.rest.next();
        } catch (error) {
          if (error instanceof AttemptError) throw gatewayError(`${label} failed while streaming the answer: ${error.message}`, error.timedOut);
          throw error;
        }
        if (next.done) return;
        yield next.value;
      }
    } finally {
      // Stops reading (and closes the connection) when the caller leaves before the end.
      await answer.rest.return(null);
    }
  }

  /** One try: sends the request and waits for the first text of the answer. */
  private async open(body: ChatCompletionsBody, signal: AbortSignal | undefined): Promise<OpenedAnswer> {
    const deadline = new Deadline(this.timeoutMs);
    const context: AttemptContext = { apiKey: this.options.apiKey, signal, timeout: deadline.signal, timeoutMs: this.timeoutMs };
    let response: Response;
    try {
      response = await postJson(this.url, body, context);
    } catch (error) {
      deadline.clear();
      throw error;
    }
    const rest = this.texts(response, deadline, context);
    const first = await rest.next();
    if (first.done) {
      throw new AttemptError(`the API answered no text${first.value ? ` (finish_reason ${first.value})` : ''}`, false);
    }
    return { first: first.value, rest };
  }

  /**
   * The text deltas of a response: `data:` events of a stream up to `[DONE]`, or the one message of
   * a server that ignored `stream`. Returns the finish reason. Failures are AttemptErrors.
   */
  private async *texts(response: Response, deadline: Deadline, context: AttemptContext): AsyncGenerator<string, string | null> {
    const reader = response.body?.pipeThrough(new TextDecoderStream()).getReader();
    let streamed = false;
    let finishReason: string | null = null;
    try {
      if (!reader) throw new AttemptError('the API answered without a body', true);
      if (response.headers.get('content-type')?.includes('application/json')) {
        let text = '';
        for (let chunk = await read(reader, context); !chunk.done; chunk = await read(reader, context)) text += chunk.value;
        const choice = parsePayload(text, context.apiKey).choices?.[0];
        const content = choice?.message?.content;
        if (typeof content === 'string' && content) yield content;
        return typeof choice?.finish_reason === 'string' ? choice.finish_reason : null;
      }
      const nextChunk = async () => {
        // Once text flows the limit is a stall limit: it counts only the time spent waiting for the server.
        if (streamed) deadline.restart();
        try {
          return await read(reader, context);
        } catch (error) {
          if (streamed && error instanceof AttemptError && error.timedOut) {
            throw new AttemptError(`the stream stalled: no data for ${this.timeoutMs} ms`, false, true);
          }
          throw error;
        }
      };
      for await (const event of sseEvents(nextChunk)) {
        if (event.trim() === '[DONE]') return finishReason;
        const choice = parsePayload(event, context.apiKey).choices?.[0];
        if (typeof choice?.finish_reason === 'string') finishReason = choice.finish_reason;
        const content = choice?.delta?.content;
        if (typeof content === 'string' && content) {
          streamed = true;
          // A caller busy with a delta (a slow client) is not a stalled server: the limit pauses.
          deadline.clear();
          yield content;
        }
      }
      // Servers that omit `[DONE]` still say why they stopped; silence on both means a cut connection.
      if (finishReason === null) throw new AttemptError('the stream ended before the answer was complete', !streamed);
      return finishReason;
    } finally {
      deadline.clear();
      await reader?.cancel().catch(() => {});
    }
  }
}

/** The data of each Server-Sent Event of a body, as each event completes. */
async function* sseEvents(nextChunk: () => Promise<ReadableStreamReadResult<string>>): AsyncGenerator<string> {
  let buffer = '';
  let data: string[] = [];
  for (;;) {
    const chunk = await nextChunk();
    // The end of the body also ends a last event that no blank line closed.
    const lines = chunk.done ? [buffer, ''] : (buffer + chunk.value).split('\n');
    buffer = chunk.done ? '' : lines.pop()!;
    for (const rawLine of lines) {
      const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
      if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      // Other fields (`event:`, `id:`) and comments (`: keep-alive`) carry nothing we need.
      if (line !== '' || data.length === 0) continue;
      yield data.join('\n');
      data = [];
    }
    if (chunk.done) return;
  }
}

/** Reads a chunk of the body, sorting its failures like those of the request. */
async function read(reader: ReadableStreamDefaultReader<string>, context: AttemptContext): Promise<ReadableStreamReadResult<string>> {
  try {
    return await reader.read();
  } catch (error) {
    throw attemptFailure(error, context);
  }
}

/** A completion or a streamed chunk; an `{error}` object in the stream is the server's failure. */
function parsePayload(text: string, apiKey: string | undefined): CompletionPayload {
  let payload: CompletionPayload;
  try {
    payload = JSON.parse(text) as CompletionPayload;
  } catch {
    throw new AttemptError(`the API answered data that is not JSON${upstreamMessage(text, apiKey)}`, false);
  }
  if (payload?.error) throw new AttemptError(`the API reported an error${upstreamMessage(text, apiKey)}`, true);
  return payload;
}

/** A time limit that can start over: the stall limit between chunks once the answer flows. */
class Deadline {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout;

  constructor(private readonly ms: number) {
    this.timer = setTimeout(() => this.controller.abort(), ms);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  restart(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.controller.abort(), this.ms);
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}
