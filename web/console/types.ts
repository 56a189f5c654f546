/**
 * The API's shapes, taken from the service's own schemas so the console cannot drift from them
 * (type-only imports: nothing of the server ends up in the bundle).
 */
import type { Entry, EntryWithChunks } from '../../src/features/entries/entries.schemas.ts';
import type { Experience } from '../../src/features/experiences/experiences.schemas.ts';
import type { Job, JobStatus, RecordResult } from '../../src/features/ingestion/jobs.schemas.ts';
import type { KnowledgeBase } from '../../src/features/knowledge-bases/knowledge-bases.schemas.ts';
import type { Source } from '../../src/features/query/query.schemas.ts';
import type { Message, Session as ChatSession, SessionTranscript } from '../../src/features/sessions/sessions.schemas.ts';

export type { ChatSession, Entry, EntryWithChunks, Experience, Job, JobStatus, KnowledgeBase, RecordResult };

export type Adapter = { name: string; format: string; version: string };

/** One answered query of a session, its sources typed as the query response has them. */
export type SessionMessage = Omit<Message, 'sources'> & { sources: Source[] };

export type ChatSessionWithMessages = Omit<SessionTranscript, 'messages'> & { messages: SessionMessage[] };

/** The events a webhook endpoint can subscribe to. */
export type WebhookEvent = 'job.started' | 'job.progress' | 'job.completed' | 'job.failed' | 'job.cancelled';

/** A webhook endpoint as `GET /webhooks` lists it (never with its secret). */
export type Webhook = {
  id: string;
  url: string;
  events: WebhookEvent[];
  description: string | null;
  enabled: boolean;
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
};

/** An endpoint as created or rotated: the only answers that carry its signing secret. */
export type WebhookWithSecret = Webhook & { secret: string };

/** One event sent (or to be sent) to an endpoint, with its last attempt. */
export type WebhookDelivery = {
  id: string;
  event: WebhookEvent;
  jobId: string | null;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: string | null;
  lastAttempt: { at: string; statusCode: number | null; latencyMs: number | null; error: string | null } | null;
  createdAt: string;
};
