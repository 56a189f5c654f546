import type { Db } from '../../core/db/db.ts';
import { AppError, notFound } from '../../core/errors.ts';
import { allowedKnowledgeBases, knowledgeBaseAllowed, type Reach } from '../auth/reach.ts';
import { webhookPayload, type JobSnapshot } from './webhook-payload.ts';
import type { Attempt, Delivery, DeliveryDetail, WebhookEvent } from './webhooks.schemas.ts';
import { getWebhook } from './webhooks.service.ts';

type DeliveryRow = {
  id: string;
  event: WebhookEvent;
  job_id: string;
  status: Delivery['status'];
  attempts: number;
  next_attempt_at: Date | null;
  created_at: Date;
  last_at: Date | null;
  last_status_code: number | null;
  last_latency_ms: number | null;
  last_error: string | null;
};

type AttemptRow = { at: Date; status_code: number | null; latency_ms: number; error: string | null };

const deliveryColumns = `d.id, d.event, d.job_id, d.status, d.attempts, d.next_attempt_at, d.created_at,
  last.at AS last_at, last.status_code AS last_status_code, last.latency_ms AS last_latency_ms, last.error AS last_error`;

const lastAttemptJoin = `LEFT JOIN LATERAL (
    SELECT a.at, a.status_code, a.latency_ms, a.error FROM webhook_delivery_attempts a
    WHERE a.workspace_id = d.workspace_id AND a.delivery_id = d.id ORDER BY a.number DESC LIMIT 1
  ) last ON true`;

/**
 * SQL: the delivery `d` is of a job of a knowledge base the `uuid[]` parameter `$n` allows. Its
 * snapshot keeps the job's knowledge base, since the job itself may be gone.
 */
const deliveryWithin = (parameter: number) => knowledgeBaseAllowed("(d.snapshot -> 'job' ->> 'knowledge_base_id')::uuid", parameter);

function toAttempt(row: AttemptRow): Attempt {
  return { at: row.at.toISOString(), statusCode: row.status_code, latencyMs: row.latency_ms, error: row.error };
}

function toDelivery(row: DeliveryRow): Delivery {
  return {
    id: row.id,
    event: row.event,
    jobId: row.job_id,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.status === 'pending' ? (row.next_attempt_at?.toISOString() ?? null) : null,
    lastAttempt: row.last_at
      ? toAttempt({ at: row.last_at, status_code: row.last_status_code, latency_ms: row.last_latency_ms!, error: row.last_error })
      : null,
    createdAt: row.created_at.toISOString(),
  };
}

/** An endpoint's deliveries (of jobs within reach), newest first; 404 when the endpoint is not the workspace's. */
export async function listDeliveries(
  db: Db,
  reach: Reach,
  endpointId: string,
  page: { limit: number; offset: number },
): Promise<{ total: number; deliveries: Delivery[] }> {
  const { workspaceId } = reach;
  await getWebhook(db, workspaceId, endpointId);
  const values = [workspaceId, endpointId, allowedKnowledgeBases(reach)];
  const where = `d.workspace_id = $1 AND d.endpoint_id = $2 AND ${deliveryWithin(3)}`;
  const [{ rows }, count] = await Promise.all([
    db.query<DeliveryRow>(
      `SELECT ${deliveryColumns} FROM webhook_deliveries d ${lastAttemptJoin}
       WHERE ${where} ORDER BY d.created_at DESC, d.id LIMIT $4 OFFSET $5`,
      [...values, page.limit, page.offset],
    ),
    db.query<{ total: number }>(`SELECT count(*)::int AS total FROM webhook_deliveries d WHERE ${where}`, values),
  ]);
  return { total: count.rows[0]!.total, deliveries: rows.map(toDelivery) };
}

/** One delivery (of a job within reach) with every attempt and the payload it sends; 404 otherwise. */
export async function getDelivery(db: Db, reach: Reach, endpointId: string, deliveryId: string): Promise<DeliveryDetail> {
  const { workspaceId } = reach;
  const { rows } = await db.query<DeliveryRow & { snapshot: JobSnapshot }>(
    `SELECT ${deliveryColumns}, d.snapshot FROM webhook_deliveries d ${lastAttemptJoin}
     WHERE d.workspace_id = $1 AND d.endpoint_id = $2 AND d.id = $3 AND ${deliveryWithin(4)}`,
    [workspaceId, endpointId, deliveryId, allowedKnowledgeBases(reach)],
  );
  const row = rows[0];
  if (!row) throw notFound('Delivery', deliveryId);
  const attempts = await db.query<AttemptRow>(
    'SELECT at, status_code, latency_ms, error FROM webhook_delivery_attempts WHERE workspace_id = $1 AND delivery_id = $2 ORDER BY number',
    [workspaceId, deliveryId],
  );
  return {
    ...toDelivery(row),
    attemptLog: attempts.rows.map(toAttempt),
    payload: webhookPayload(row.event, row.snapshot, row.created_at),
  };
}

/**
 * Queues a delivery again, due now, with the retry schedule started afresh and the same
 * `webhook-id` (receivers deduplicate by it). 409 when its endpoint is disabled: it would not be
 * sent until the endpoint is enabled again, and enabling it sends its pending deliveries anyway.
 */
export async function redeliver(db: Db, reach: Reach, endpointId: string, deliveryId: string): Promise<void> {
  const { workspaceId } = reach;
  const endpoint = await getWebhook(db, workspaceId, endpointId);
  const values = [workspaceId, endpointId, deliveryId, allowedKnowledgeBases(reach)];
  const { rowCount } = await db.query(
    `UPDATE webhook_deliveries d SET status = 'pending', next_attempt_at = now(), round_attempts = 0, lease_owner = NULL
     WHERE d.workspace_id = $1 AND d.endpoint_id = $2 AND d.id = $3 AND ${deliveryWithin(4)} AND $5::boolean`,
    [...values, endpoint.enabled],
  );
  if (rowCount > 0) return;
  const { rows } = await db.query(`SELECT 1 FROM webhook_deliveries d WHERE d.workspace_id = $1 AND d.endpoint_id = $2 AND d.id = $3 AND ${deliveryWithin(4)}`, values);
  if (rows.length === 0) throw notFound('Delivery', deliveryId);
  throw new AppError('CONFLICT', 'The webhook is disabled; enable it (PATCH {"enabled": true}) before redelivering.');
}
