/**
 * The API's shapes, taken from the service's own schemas so the console cannot drift from them
 * (type-only imports: nothing of the server ends up in the bundle).
 */
import type { Entry, EntryWithChunks } from '../../src/features/entries/entries.schemas.ts';
import type { Experience } from '../../src/features/experiences/experiences.schemas.ts';
import type { Job, JobStatus, RecordResult } from '../../src/features/ingestion/jobs.schemas.ts';
import type { KnowledgeBase } from '../../src/features/knowledge-bases/knowledge-bases.schemas.ts';
import type { Session as ChatSession } from '../../src/features/sessions/sessions.schemas.ts';

export type { ChatSession, Entry, EntryWithChunks, Experience, Job, JobStatus, KnowledgeBase, RecordResult };

export type Adapter = { name: string; format: string; version: string };

/** One question and answer of a session (GET /api/v2/sessions/{id}), oldest first. */
export type SessionMessage = {
  queryId: string;
  text: string;
  answer: string;
  format: string;
  sources: { number: number; entryId: string; title: string; url: string | null; snippet: string; score: number }[];
  actions: { id: string; label: string }[];
  metadata: Record<string, unknown>;
  grounded: boolean;
  latencyMs: number;
  askedAt: string;
  createdAt: string;
  feedback: { rating: 'up' | 'down'; comment: string | null; createdAt: string } | null;
};

export type ChatSessionWithMessages = ChatSession & { messages: SessionMessage[] };
