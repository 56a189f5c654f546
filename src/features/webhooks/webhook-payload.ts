import { Webhook as Signer } from 'standardwebhooks';
import type { Counts } from '../ingestion/job-results.ts';
import { jobWithoutResults, type JobFields } from '../ingestion/job-body.ts';
import type { JobStatus } from '../ingestion/jobs.schemas.ts';
import type { WebhookEvent } from './webhooks.schemas.ts';

/** What migration 008's trigger stores for an event: the job's columns and counters at that moment. */
export type JobSnapshot = {
  job: {
    id: string;
    status: JobStatus;
    knowledge_base_id: string;
    source_id: string;
    adapter_type: string;
    adapter_id: string;
    record_count: number;
    /** Absent from the snapshots taken before migration 010. */
    file_name?: string | null;
    retry_of?: string | null;
    timings: Record<string, number>;
    error: string | null;
    created_at: string;
    started_at: string | null;
    completed_at: string | null;
  };
  counts: Counts;
};

/** The Standard Webhooks body: `{type, timestamp, data}`. */
export type WebhookPayload = { type: WebhookEvent; timestamp: string; data: ReturnType<typeof jobWithoutResults> };

/**
 * The payload of an event: the job as `GET /api/v2/data-ingestion/jobs/{id}` showed it when the
 * event happened (`occurredAt`), without its per-record results.
 */
export function webhookPayload(event: WebhookEvent, snapshot: JobSnapshot, occurredAt: Date): WebhookPayload {
  const { job } = snapshot;
  const fields: JobFields = {
    ...job,
    file_name: job.file_name ?? null,
    retry_of: job.retry_of ?? null,
    created_at: new Date(job.created_at),
    started_at: job.started_at ? new Date(job.started_at) : null,
    completed_at: job.completed_at ? new Date(job.completed_at) : null,
  };
  return { type: event, timestamp: occurredAt.toISOString(), data: jobWithoutResults(fields, snapshot.counts, occurredAt.getTime()) };
}

/**
 * The `webhook-signature` header: `v1,<HMAC-SHA256>` with each secret, space-separated (the
 * Standard Webhooks form for a rotation's grace period, which verifiers accept when any matches).
 */
export function signatures(secrets: string[], messageId: string, timestamp: Date, body: string): string {
  return secrets.map((secret) => new Signer(secret).sign(messageId, timestamp, body)).join(' ');
}
