import type { Db } from '../../core/db/db.ts';
import type { AttemptOutcome, NextStep } from './retry-schedule.ts';
import type { JobSnapshot } from './webhook-payload.ts';
import type { WebhookEvent } from './webhooks.schemas.ts';

/** A delivery a dispatcher holds the lease of, with what it needs to send it. */
export type ClaimedDelivery = {
  id: string;
  workspaceId: string;
  endpointId: string;
  event: WebhookEvent;
  snapshot: JobSnapshot;
  createdAt: Date;
  url: string;
  /** The current secret, then the previous one while its rotation grace lasts. */
  secrets: string[];
  /** The dispatcher holding the lease: the outcome is only applied while it still does. */
  owner: string;
};

/**
 * Claims the oldest due delivery of an enabled endpoint in one statement, as `claimJob` does:
 * `FOR UPDATE SKIP LOCKED` lets any number of dispatchers poll at once without waiting on each
 * other. The lease is `next_attempt_at` itself, moved past the attempt's time limit: if the
 * dispatcher dies mid-attempt, the delivery is simply due again when the lease ends, and another
 * dispatcher sends it (at least once; receivers deduplicate by `webhook-id`).
 *
 * This and `releaseOrphanedDeliveries` are the statements that read across workspaces:
 * dispatchers serve every workspace. Every statement after the claim filters by its workspace.
 */
export async function claimDelivery(db: Db, owner: string, leaseMs: number): Promise<ClaimedDelivery | undefined> {
  const { rows } = await db.query<{
    id: string;
    workspace_id: string;
    endpoint_id: string;
    event: WebhookEvent;
    snapshot: JobSnapshot;
    created_at: Date;
    url: string;
    secret: string;
    previous_secret: string | null;
  }>(
    `WITH next AS (
       SELECT d.id FROM webhook_deliveries d
       JOIN webhook_endpoints e ON e.workspace_id = d.workspace_id AND e.id = d.endpoint_id
       WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND e.enabled
       ORDER BY d.next_attempt_at, d.id
       LIMIT 1
       FOR UPDATE OF d SKIP LOCKED
     )
     UPDATE webhook_deliveries AS d
     SET next_attempt_at = now() + make_interval(secs => $2::float8 / 1000), lease_owner = $1
     FROM next, webhook_endpoints e
     WHERE d.id = next.id AND e.workspace_id = d.workspace_id AND e.id = d.endpoint_id
     RETURNING d.id, d.workspace_id, d.endpoint_id, d.event, d.snapshot, d.created_at, e.url, e.secret,
       CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret END AS previous_secret`,
    [owner, leaseMs],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    endpointId: row.endpoint_id,
    event: row.event,
    snapshot: row.snapshot,
    createdAt: row.created_at,
    url: row.url,
    secrets: row.previous_secret ? [row.secret, row.previous_secret] : [row.secret],
    owner,
  };
}

/**
 * Records an attempt and applies `decide`'s step, in one transaction. The attempt is always
 * recorded (it happened); its outcome only moves the delivery while this dispatcher still holds
 * the lease: a redelivery or another dispatcher may have taken it meanwhile.
 */
export async function recordAttempt(
  db: Db,
  delivery: ClaimedDelivery,
  at: Date,
  outcome: AttemptOutcome,
  decide: (roundAttempts: number) => NextStep,
): Promise<NextStep | undefined> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ attempts: number; round_attempts: number; lease_owner: string | null }>(
      `UPDATE webhook_deliveries SET attempts = attempts + 1, round_attempts = round_attempts + 1
       WHERE workspace_id = $1 AND id = $2 RETURNING attempts, round_attempts, lease_owner`,
      [delivery.workspaceId, delivery.id],
    );
    const row = rows[0];
    // Deleted with its endpoint meanwhile.
    if (!row) return undefined;
    await tx.query(
      `INSERT INTO webhook_delivery_attempts (delivery_id, workspace_id, number, at, status_code, latency_ms, error)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [delivery.id, delivery.workspaceId, row.attempts, at, outcome.statusCode, outcome.latencyMs, outcome.error],
    );
    if (row.lease_owner !== delivery.owner) return undefined;
    const step = decide(row.round_attempts);
    if (step.kind === 'retry') {
      await tx.query(
        `UPDATE webhook_deliveries SET next_attempt_at = now() + make_interval(secs => $3::float8 / 1000), lease_owner = NULL
         WHERE workspace_id = $1 AND id = $2`,
        [delivery.workspaceId, delivery.id, step.delayMs],
      );
      return step;
    }
    await tx.query(
      `UPDATE webhook_deliveries SET status = $3, next_attempt_at = NULL, lease_owner = NULL WHERE workspace_id = $1 AND id = $2`,
      [delivery.workspaceId, delivery.id, step.kind],
    );
    if (step.kind === 'failed') {
      await tx.query(
        `UPDATE webhook_endpoints SET enabled = false, disabled_reason = $3, updated_at = now()
         WHERE workspace_id = $1 AND id = $2 AND enabled`,
        [delivery.workspaceId, delivery.endpointId, step.disableReason],
      );
    }
    return step;
  });
}

/** Gives a delivery back at once, unsent (a dispatcher stopping mid-attempt). */
export async function releaseDelivery(db: Db, delivery: ClaimedDelivery): Promise<void> {
  await db.query(
    `UPDATE webhook_deliveries SET next_attempt_at = now(), lease_owner = NULL
     WHERE workspace_id = $1 AND id = $2 AND lease_owner = $3 AND status = 'pending'`,
    [delivery.workspaceId, delivery.id, delivery.owner],
  );
}

/**
 * Makes every leased delivery due now. Only for the embedded engine at start-up, as
 * `releaseOrphanedJobs`: one process owns a PGlite database, so a lease there was left by a
 * process that died.
 */
export async function releaseOrphanedDeliveries(db: Db): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE webhook_deliveries SET next_attempt_at = now(), lease_owner = NULL WHERE status = 'pending' AND lease_owner IS NOT NULL`,
  );
  return rowCount;
}
