/**
 * The API's shapes, taken from the service's own schemas so the console cannot drift from them
 * (type-only imports: nothing of the server ends up in the bundle).
 */
import type { Entry, EntryWithChunks } from '../../src/features/entries/entries.schemas.ts';
import type { Action as ExperienceAction } from '../../src/features/experiences/action.schema.ts';
import type { Experience } from '../../src/features/experiences/experiences.schemas.ts';
import type { Job, JobStatus, RecordResult } from '../../src/features/ingestion/jobs.schemas.ts';
import type { KnowledgeBase } from '../../src/features/knowledge-bases/knowledge-bases.schemas.ts';
import type { Source } from '../../src/features/query/query.schemas.ts';
import type { Insights } from '../../src/features/insights/insights.schemas.ts';
import type { Message, Session as ChatSession, SessionListItem, SessionTranscript } from '../../src/features/sessions/sessions.schemas.ts';
import type { Tool, ToolCall } from '../../src/features/tools/tool.schema.ts';
import type { Delivery as WebhookDelivery, DeliveryDetail as WebhookDeliveryDetail, Webhook, WebhookEvent } from '../../src/features/webhooks/webhooks.schemas.ts';

export type {
  ChatSession,
  Entry,
  EntryWithChunks,
  Experience,
  ExperienceAction,
  Insights,
  Job,
  JobStatus,
  KnowledgeBase,
  RecordResult,
  SessionListItem,
  Tool,
  ToolCall,
  Webhook,
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookEvent,
};

/** An endpoint as created or rotated: the only answers that carry its signing secret. */
export type WebhookWithSecret = Webhook & { secret: string };

export type Adapter = { name: string; format: string; version: string };

/** One answered query of a session, its sources typed as the query response has them. */
export type SessionMessage = Omit<Message, 'sources'> & { sources: Source[] };

export type ChatSessionWithMessages = Omit<SessionTranscript, 'messages'> & { messages: SessionMessage[] };


/** What `POST /api/v2/experiences/{id}/tools/{name}/test` answers (src/features/experiences/tool-test.routes.ts). */
export type ToolTestResult = { call: ToolCall; response: string | null; answer: string | null };
