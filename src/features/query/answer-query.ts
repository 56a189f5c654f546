import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../core/context.ts';
import type { Action } from '../experiences/action.schema.ts';
import { retrieve } from '../retrieval/retrieve.service.ts';
import type { Session } from '../sessions/sessions.schemas.ts';
import { matchTool } from '../tools/match-tool.ts';
import { offlineToolAnswer, toolRunner, type OfflineToolAnswer } from '../tools/offline-answer.ts';
import { missingArgumentsAnswer } from '../tools/tool-answer.ts';
import { asksForHandover, buildActions } from './actions.ts';
import { recentTurns, standaloneQuestion } from './conversation.ts';
import type { ExperienceCaller } from './experience-access.ts';
import { citedNumbers, DEFAULT_MIN_SCORE, DEFAULT_TOP_K, groundingOf, publicSource } from './grounding.ts';
import type { QueryBody, QueryResponse, Source } from './query.schemas.ts';
import { recordQuery, storeSession } from './query.service.ts';

// Chunks retrieved per source wanted: several chunks of one entry collapse into one source, and
// some fall below the relevance threshold.
const CHUNKS_PER_SOURCE = 3;

/** A query whose sources are known and whose answer is being generated. */
export type AnswerInProgress = {
  queryId: string;
  session: Session;
  sources: Source[];
  /** The answer's Markdown, in pieces as the generator produces them. */
  deltas: AsyncIterable<string>;
  /** Builds the actions and the response from the whole answer, and stores the query. */
  complete(answer: string): Promise<QueryResponse>;
  /** Stores the session without an answer: a stream announced it, then failed. */
  keepSession(): Promise<void>;
};

/**
 * The answer pipeline up to generation: session, conversation context, retrieval over the
 * experience's knowledge bases, grounding, then the generator's stream. Each step is a module of
 * its own; this function only wires them.
 */
export async function startAnswer(
  context: AppContext,
  caller: ExperienceCaller,
  body: QueryBody & { session: Session },
  signal: AbortSignal,
): Promise<AnswerInProgress> {
  const started = performance.now();
  const { experience } = caller;
  const { session } = body;
  const settings = experience.settings;
  const history = session.queryCount > 0 ? await recentTurns(context.db, experience.workspaceId, session.id) : [];
  const standalone = standaloneQuestion(body.text, history);
  const generator = context.generators(settings.llmProvider);
  const runner = experience.tools.length > 0 ? toolRunner(experience.tools, context.config.tools) : undefined;
  // Offline, a question close to a tool's examples is the tool's: it is answered from the API,
  // with no retrieval. The chat model instead sees the tools beside the sources and chooses.
  const matching =
    runner && generator.name === 'extractive'
      ? await matchTool(context.embedder, experience.tools, { question: standalone, texts: [body.text, standalone], signal })
      : undefined;
  const match = matching?.match;
  // A question that matches a tool but lacks a required argument does not trigger it: it is
  // answered from the knowledge base, and asked for the argument only where that holds nothing.
  const toolAnswer = match && runner && match.missing.length === 0 ? await offlineToolAnswer(runner, match, signal) : undefined;
  const topK = settings.topK ?? DEFAULT_TOP_K;
  const chunks = toolAnswer ? [] : await retrieve(context.db, context.embedder, {
    workspaceId: experience.workspaceId,
    knowledgeBaseIds: experience.knowledgeBaseIds,
    query: standalone,
    topK: topK * CHUNKS_PER_SOURCE,
    mode: 'hybrid',
    vectorDimension: caller.vectorDimension,
    // Matching embedded the same question with the same encoder.
    ...(matching ? { queryVector: matching.vector } : {}),
  });
  const retrievedAt = performance.now();
  const grounding = groundingOf(chunks, {
    topK,
    minScore: settings.minScore ?? DEFAULT_MIN_SCORE,
    relevantCosine: context.embedder.relevantCosine,
  });
  const offline: OfflineToolAnswer | undefined =
    toolAnswer ?? (match && match.missing.length > 0 && grounding.sources.length === 0 ? { answer: missingArgumentsAnswer(match.tool, match.missing), answered: true } : undefined);
  const deltas = offline ? single(offline.answer) : generator.generate({
    question: body.text,
    standaloneQuestion: standalone,
    history,
    sources: grounding.sources,
    instructions: experience.instructions,
    fallbackMessage: experience.fallbackMessage,
    model: settings.llmModel,
    signal,
    tools: runner?.forModel(),
  });
  const sources = grounding.sources.map(publicSource);
  const queryId = randomUUID();

  return {
    queryId,
    session,
    sources,
    deltas,
    keepSession: () => storeSession(context.db, experience.workspaceId, session),
    async complete(answer) {
      const answeredAt = new Date();
      const cited = citedNumbers(answer);
      const toolCalls = runner?.calls ?? [];
      const fromTool = offline ? offline.answered : toolCalls.some((call) => call.outcome === 'succeeded');
      const answered = (fromTool || grounding.sources.length > 0) && answer.trim() !== experience.fallbackMessage.trim();
      const actions = buildActions({
        // Stored actions were validated against the Action schema when the experience was saved.
        templates: experience.actions as Action[],
        cited: sources.filter((source) => cited.has(source.number)),
        related: [...sources.filter((source) => !cited.has(source.number)), ...grounding.related],
        answered,
        handoverRequested: asksForHandover(body.text),
      });
      const latencyMs = Math.round(performance.now() - started);
      await recordQuery(context.db, session, {
        id: queryId,
        workspaceId: experience.workspaceId,
        experienceId: experience.id,
        userId: session.userId,
        text: body.text,
        standaloneText: standalone,
        answer,
        sources,
        actions,
        toolCalls,
        metadata: body.metadata ?? {},
        grounded: answered,
        generator: offline ? 'tool' : generator.name,
        model: match && offline ? match.tool.name : (settings.llmModel ?? generator.model),
        latencyMs,
        timings: { retrievalMs: Math.round(retrievedAt - started), totalMs: latencyMs },
        askedAt: body.timestamp ?? answeredAt.toISOString(),
        answeredAt: answeredAt.toISOString(),
      });
      return { queryId, answer, sessionId: session.id, timestamp: answeredAt.toISOString(), format: 'markdown', actions, sources };
    },
  };
}

/** A whole answer as a stream of one delta. */
async function* single(text: string): AsyncGenerator<string> {
  yield text;
}
