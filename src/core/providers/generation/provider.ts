/** One earlier turn of a conversation, oldest first. */
export type ChatTurn = { role: 'user' | 'assistant'; content: string };

/** A retrieved passage the answer may use; `number` is what a citation `[n]` points at. */
export type GroundingSource = {
  number: number;
  entryId: string;
  title: string;
  url: string | null;
  text: string;
  score: number;
  /**
   * Where each of the source's chunks begins in `text`, with the headings above it: a chunk that
   * begins mid-section holds no heading line of its own, yet its sentences are about them.
   */
  sections?: { start: number; headingPath: string[] }[];
  /** The page of the document its best chunk starts on (PDF files). */
  page?: number;
};

export type GenerationRequest = {
  /** The user's latest message, as typed. */
  question: string;
  /** The question rewritten to stand alone, using the conversation (what retrieval searched for). */
  standaloneQuestion: string;
  /** Earlier turns of the session, oldest first (already trimmed to the recent ones). */
  history: ChatTurn[];
  /** The relevant passages, best first, numbered from 1. Empty when nothing relevant was found. */
  sources: GroundingSource[];
  /** The experience's free-text instructions (tone, persona, rules). */
  instructions: string;
  /** What to answer when the sources do not hold the answer. */
  fallbackMessage: string;
  /** The experience's model, overriding the provider's default. */
  model?: string | undefined;
  /** Aborted when the caller goes away; the provider stops and rejects. */
  signal?: AbortSignal | undefined;
  /** The experience's tools, for a generator that lets its model call them (absent: none). */
  tools?: GenerationTools | undefined;
};

/** A function the model may call, in the terms of the chat-completions protocol. */
export type ToolFunction = { name: string; description: string; parameters: Record<string, unknown> };

/** The tools a generator may call while it composes one answer. */
export type GenerationTools = {
  functions: ToolFunction[];
  /**
   * Checks the model's arguments (a JSON text) against the tool's parameters, calls the tool when
   * they hold, records the call, and returns the text of the `tool` message that tells the model
   * what happened (the response, or why nothing was sent). Never throws.
   */
  call(name: string, argumentsJson: string, signal?: AbortSignal): Promise<string>;
};

/**
 * Composes answers. The query pipeline depends only on this: `extractive` (offline) and `openai`
 * (any OpenAI-compatible chat-completions endpoint) implement it.
 */
export interface AnswerGenerator {
  /** `extractive` or `openai`. */
  readonly name: string;
  /** The default model; the request's `model` overrides it where the provider has models. */
  readonly model: string;
  /**
   * Streams the answer as Markdown text deltas; concatenated, they are the whole answer, which
   * cites sources as `[n]`. Rejects with an AppError (BAD_GATEWAY or GATEWAY_TIMEOUT) when an
   * upstream provider fails after its retries: never hangs past its time limit.
   */
  generate(request: GenerationRequest): AsyncIterable<string>;
}
