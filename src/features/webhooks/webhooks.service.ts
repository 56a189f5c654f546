import { randomBytes } from 'node:crypto';
import type { Db, Queryable } from '../../core/db/db.ts';
import { notFound } from '../../core/errors.ts';
import { assertTarget, type TargetRules } from './target-url.ts';
import type { NewWebhook, Webhook, WebhookChanges, WebhookEvent } from './webhooks.schemas.ts';

type EndpointRow = {
  id: string;
  url: string;
  events: WebhookEvent[];
  description: string;
  enabled: boolean;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
};

const columns = 'id, url, events, description, enabled, disabled_reason, created_at, updated_at';

// After a rotation the previous secret signs deliveries beside the new one for this long, so
// that receivers can deploy the new secret without rejecting anything meanwhile.
const ROTATION_GRACE = '24 hours';

function toWebhook(row: EndpointRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    disabledReason: row.disabled_reason,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64 (what the verifiers decode). */
function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export async function createWebhook(db: Db, workspaceId: string, input: NewWebhook, rules: TargetRules): Promise<Webhook & { secret: string }> {
  assertTarget(input.url, rules);
  const secret = newSecret();
  const { rows } = await db.query<EndpointRow>(
    `INSERT INTO webhook_endpoints (workspace_id, url, events, description, secret)
     VALUES ($1, $2, $3::text[], $4, $5) RETURNING ${columns}`,
    [workspaceId, input.url, input.events, input.description ?? '', secret],
  );
  return { ...toWebhook(rows[0]!), secret };
}

/** A workspace's endpoints, newest first. */
export async function listWebhooks(db: Db, workspaceId: string, page: { limit: number; offset: number }): Promise<{ total: number; webhooks: Webhook[] }> {
  const [{ rows }, count] = await Promise.all([
    db.query<EndpointRow>(
      `SELECT ${columns} FROM webhook_endpoints WHERE workspace_id = $1 ORDER BY created_at DESC, id LIMIT $2 OFFSET $3`,
      [workspaceId, page.limit, page.offset],
    ),
    db.query<{ total: number }>('SELECT count(*)::int AS total FROM webhook_endpoints WHERE workspace_id = $1', [workspaceId]),
  ]);
  return { total: count.rows[0]!.total, webhooks: rows.map(toWebhook) };
}

/** An endpoint of the workspace; 404 when it does not exist there. */
export async function getWebhook(db: Queryable, workspaceId: string, id: string): Promise<Webhook> {
  const { rows } = await db.query<EndpointRow>(`SELECT ${columns} FROM webhook_endpoints WHERE workspace_id = $1 AND id = $2`, [workspaceId, id]);
  if (!rows[0]) throw notFound('Webhook', id);
  return toWebhook(rows[0]);
}

/** Changes an endpoint; enabling it clears the reason lore disabled it for. */
export async function updateWebhook(db: Db, workspaceId: string, id: string, changes: WebhookChanges, rules: TargetRules): Promise<Webhook> {
  if (changes.url !== undefined) assertTarget(changes.url, rules);
  const { rows } = await db.query<EndpointRow>(
    `UPDATE webhook_endpoints
     SET url = coalesce($3, url), events = coalesce($4::text[], events), description = coalesce($5, description),
         enabled = coalesce($6, enabled),
         disabled_reason = CASE WHEN $6::boolean IS NULL THEN disabled_reason ELSE NULL END,
         updated_at = now()
     WHERE workspace_id = $1 AND id = $2 RETURNING ${columns}`,
    [workspaceId, id, changes.url ?? null, changes.events ?? null, changes.description ?? null, changes.enabled ?? null],
  );
  if (!rows[0]) throw notFound('Webhook', id);
  return toWebhook(rows[0]);
}

/** Deletes an endpoint with its deliveries. */
export async function deleteWebhook(db: Db, workspaceId: string, id: string): Promise<void> {
  const { rowCount } = await db.query('DELETE FROM webhook_endpoints WHERE workspace_id = $1 AND id = $2', [workspaceId, id]);
  if (rowCount === 0) throw notFound('Webhook', id);
}

/** A new secret; the previous one keeps signing beside it for ROTATION_GRACE. */
export async function rotateSecret(db: Db, workspaceId: string, id: string): Promise<Webhook & { secret: string }> {
  const secret = newSecret();
  const { rows } = await db.query<EndpointRow>(
    `UPDATE webhook_endpoints
     SET previous_secret = secret, previous_secret_expires_at = now() + interval '${ROTATION_GRACE}', secret = $3, updated_at = now()
     WHERE workspace_id = $1 AND id = $2 RETURNING ${columns}`,
    [workspaceId, id, secret],
  );
  if (!rows[0]) throw notFound('Webhook', id);
  return { ...toWebhook(rows[0]), secret };
}
