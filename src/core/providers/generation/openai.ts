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
import { ToolCallAccumulator, toolDefinitions, type ToolCall, type ToolCallsMessage, type ToolResultMessage } from './tool-calls.ts';

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

/** A message of the conversation: the grounded prompt, then the rounds of tool calls and results. */
type ConversationMessage = ChatMessage | ToolCallsMessage | ToolResultMessage;

type ChatCompletionsBody = {
  model: string;
  messages: ConversationMessage[];
  stream: true;
  tools?: ReturnType<typeof toolDefinitions>;
  tool_choice?: 'auto';
};

/** What a chunk adds to the reply, or what a whole JSON reply holds. */
type CompletionDelta = { content?: unknown; tool_calls?: unknown };

/** A chunk of a streamed answer (`data:` line), or a whole answer when the server does not stream. */
type CompletionPayload = {
  choices?: { delta?: CompletionDelta; message?: CompletionDelta; finish_reason?: unknown }[];
  error?: { message?: unknown } | string;
};

/** A piece of a reply: text, tool-call fragments (see tool-calls.ts), or both. */
type ReplyDelta = { content: string; toolCalls: unknown };

/** The pieces of one reply; returns its finish reason. */
type ReplyDeltas = AsyncGenerator<ReplyDelta, string | null>;

/** An answer whose first text has arrived; the rest is read when asked for. */
type OpenedAnswer = { kind: 'text'; first: string; rest: ReplyDeltas };

/** A reply that asked for tools, read to its end. */
type ToolCallsReply = { kind: 'tools'; calls: ToolCall[] };

/** Rounds of tool calls before the model must answer in text (issue 37). */
const MAX_TOOL_ROUNDS = 3;

/**
 * Characters of text held back, in a reply that may still turn into tool calls, before it counts as
 * the answer: a model that thinks aloud first ("Let me look up order 12345 for you.") writes one
 * sentence of 30 to 60 characters; 200 (about 50 tokens, under a second of a streamed answer) holds
 * two such sentences and delays the first text of an answer that calls no tool by as little.
 */
const HELD_TEXT_CHARS = 200;

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
    const tools = request.tools?.functions.length ? request.tools : undefined;
    // Nothing relevant was retrieved and nothing to look up: the model could only make an answer
    // up, and would cost a call. A question for a tool needs no source.
    if (request.sources.length === 0 && !tools) {
      yield request.fallbackMessage;
      return;
    }
    const model = request.model ?? this.model;
    // Names the model, not the URL: this message reaches the anonymous users of a public experience.
    const label = `Chat completions request for model ${model}`;
    const messages: ConversationMessage[] = buildGroundedPrompt(request);
    const ask = <T>(attempt: () => Promise<T>) => withRetries(label, this.retryPolicy, request.signal, attempt);
    for (let round = 1; tools && round <= MAX_TOOL_ROUNDS; round++) {
      const body: ChatCompletionsBody = { model, messages: [...messages], stream: true, tools: toolDefinitions(tools.functions), tool_choice: 'auto' };
      const reply = await ask(() => this.open(body, request.signal, round));
      if (reply.kind === 'text') {
        yield* this.stream(label, reply);
        return;
      }
      // The results join the conversation before the next request: its retries call no tool again.
      messages.push({ role: 'assistant', content: null, tool_calls: reply.calls });
      // One after another, so that the calls are recorded in the order the model asked for them.
      for (const call of reply.calls) {
        const content = await tools.call(call.function.name, call.function.arguments, request.signal);
        messages.push({ role: 'tool', tool_call_id: call.id, content });
      }
    }
    // No tools, or their rounds are spent: a request that offers none must be answered in text.
    // (`tool_choice: 'none'` would keep them offered, and not every compatible server honours it.)
    const body: ChatCompletionsBody = { model, messages, stream: true };
    yield* this.stream(label, await ask(() => this.open(body, request.signal)));
  }

  /** Yields an opened answer to its end; only the part before the first text was retried. */
  private async *stream(label: string, answer: OpenedAnswer): AsyncGenerator<string> {
    try {
      yield answer.first;
      for (;;) {
        let next: IteratorResult<ReplyDelta, string | null>;
        try {
          next = await answer.rest.next();
        } catch (error) {
          if (error instanceof AttemptError) throw gatewayError(`${label} failed while streaming the answer: ${error.message}`, error.timedOut);
          throw error;
        }
        if (next.done) return;
        // A tool call that comes after the text was shown is dropped: the text is the answer.
        if (next.value.content) yield next.value.content;
      }
    } finally {
      // Stops reading (and closes the connection) when the caller leaves before the end.
      await answer.rest.return(null);
    }
  }

  /**
   * One try: sends the request and waits for the first text of the answer, or, when the request
   * offers tools (`toolRound`, from 1), for the end of a reply that calls them. Text in a reply that
   * calls tools is the model thinking aloud, not an answer: it is held back (up to HELD_TEXT_CHARS)
   * and dropped when a call follows.
   */
  private async open(body: ChatCompletionsBody, signal: AbortSignal | undefined): Promise<OpenedAnswer>;
  private async open(body: ChatCompletionsBody, signal: AbortSignal | undefined, toolRound: number): Promise<OpenedAnswer | ToolCallsReply>;
  private async open(body: ChatCompletionsBody, signal: AbortSignal | undefined, toolRound?: number): Promise<OpenedAnswer | ToolCallsReply> {
    const deadline = new Deadline(this.timeoutMs);
    const context: AttemptContext = { apiKey: this.options.apiKey, signal, timeout: deadline.signal, timeoutMs: this.timeoutMs };
    let response: Response;
    try {
      response = await postJson(this.url, body, context);
    } catch (error) {
      deadline.clear();
      throw error;
    }
    const rest = this.deltas(response, deadline, context);
    const calls = toolRound === undefined ? undefined : new ToolCallAccumulator(toolRound);
    let held = '';
    for (;;) {
      // A failure ends `rest`, which closes the body.
      const next = await rest.next();
      if (next.done) {
        if (calls?.size) return { kind: 'tools', calls: calls.list() };
        if (held) return { kind: 'text', first: held, rest };
        throw new AttemptError(`the API answered no text${next.value ? ` (finish_reason ${next.value})` : ''}`, false);
      }
      calls?.add(next.value.toolCalls);
      if (calls?.size) continue;
      held += next.value.content;
      if (held && (!calls || held.length >= HELD_TEXT_CHARS)) return { kind: 'text', first: held, rest };
    }
  }

  /**
   * The pieces of a response: `data:` events of a stream up to `[DONE]`, or the one message of a
   * server that ignored `stream`. Returns the finish reason. Failures are AttemptErrors.
   */
  private async *deltas(response: Response, deadline: Deadline, context: AttemptContext): ReplyDeltas {
    const reader = response.body?.pipeThrough(new TextDecoderStream()).getReader();
    let flowing = false;
    let finishReason: string | null = null;
    try {
      if (!reader) throw new AttemptError('the API answered without a body', true);
      if (response.headers.get('content-type')?.includes('application/json')) {
        let text = '';
        for (let chunk = await read(reader, context); !chunk.done; chunk = await read(reader, context)) text += chunk.value;
        const choice = parsePayload(text, context.apiKey).choices?.[0];
        const delta = replyDelta(choice?.message);
        if (delta) yield delta;
        return typeof choice?.finish_reason === 'string' ? choice.finish_reason : null;
      }
      const nextChunk = async () => {
        // Once the reply flows the limit is a stall limit: it counts only the time spent waiting for the server.
        if (flowing) deadline.restart();
        try {
          return await read(reader, context);
        } catch (error) {
          if (flowing && error instanceof AttemptError && error.timedOut) {
            throw new AttemptError(`the stream stalled: no data for ${this.timeoutMs} ms`, false, true);
          }
          throw error;
        }
      };
      for await (const event of sseEvents(nextChunk)) {
        if (event.trim() === '[DONE]') return finishReason;
        const choice = parsePayload(event, context.apiKey).choices?.[0];
        if (typeof choice?.finish_reason === 'string') finishReason = choice.finish_reason;
        const delta = replyDelta(choice?.delta);
        if (delta) {
          flowing = true;
          // A caller busy with a delta (a slow client) is not a stalled server: the limit pauses.
          deadline.clear();
          yield delta;
        }
      }
      // Servers that omit `[DONE]` still say why they stopped; silence on both means a cut connection.
      // Retryable: a cut after the first text shown ends the answer without a retry (see `stream`).
      if (finishReason === null) throw new AttemptError('the stream ended before the answer was complete', true);
      return finishReason;
    } finally {
      deadline.clear();
      await reader?.cancel().catch(() => {});
    }
  }
}

/** The text and tool-call fragments of a chunk or a message; undefined when it has neither. */
function replyDelta(delta: CompletionDelta | undefined): ReplyDelta | undefined {
  const content = typeof delta?.content === 'string' ? delta.content : '';
  const toolCalls = Array.isArray(delta?.tool_calls) && delta.tool_calls.length > 0 ? delta.tool_calls : undefined;
  return content || toolCalls ? { content, toolCalls } : undefined;
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
