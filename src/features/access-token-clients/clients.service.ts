import { randomBytes } from 'node:crypto';
import type { Db, Queryable } from '../../core/db/db.ts';
import { notFound } from '../../core/errors.ts';
import { validationError } from '../../core/http/validation-messages.ts';
import { hashSecret } from '../../core/secret-hash.ts';

/** An access-token client as the API shows it (never with its secret). */
export type AccessTokenClient = {
  id: string;
  workspaceId: string;
  name: string;
  clientId: string;
  scopes: string[];
  knowledgeBaseIds: string[] | null;
  revokedAt: string | null;
  createdAt: string;
};

export type NewClient = { name: string; scopes: string[]; knowledgeBaseIds?: string[] | null };

type ClientRow = {
  id: string;
  workspace_id: string;
  name: string;
  client_id: string;
  scopes: string[];
  knowledge_base_ids: string[] | null;
  revoked_at: Date | null;
  created_at: Date;
};

const columns = 'id, workspace_id, name, client_id, scopes, knowledge_base_ids, revoked_at, created_at';

function toClient(row: ClientRow): AccessTokenClient {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    name: row.name,
    clientId: row.client_id,
    scopes: row.scopes,
    knowledgeBaseIds: row.knowledge_base_ids,
    revokedAt: row.revoked_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
  };
}

async function assertKnowledgeBasesInWorkspace(db: Queryable, workspaceId: string, ids: string[]): Promise<void> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM knowledge_bases WHERE workspace_id = $1 AND id = ANY($2::uuid[])',
    [workspaceId, ids],
  );
  const found = new Set(rows.map((row) => row.id));
  const errors = ids.flatMap((id, index) =>
    found.has(id) ? [] : [{ path: `/knowledgeBaseIds/${index}`, message: `names knowledge base ${id}, which does not exist in this workspace` }],
  );
  if (errors.length > 0) throw validationError(errors);
}

/** Creates a client; the returned secret is shown once and stored only as a scrypt hash. */
export async function createClient(
  db: Db,
  workspaceId: string,
  input: NewClient,
): Promise<{ client: AccessTokenClient; clientSecret: string }> {
  // Checked before de-duplication so that each error points at the caller's own index.
  if (input.knowledgeBaseIds) await assertKnowledgeBasesInWorkspace(db, workspaceId, input.knowledgeBaseIds);
  const knowledgeBaseIds = input.knowledgeBaseIds ? [...new Set(input.knowledgeBaseIds)] : null;
  const clientId = `lore_${randomBytes(12).toString('hex')}`;
  const clientSecret = randomBytes(32).toString('base64url');
  const { rows } = await db.query<ClientRow>(
    `INSERT INTO access_token_clients (workspace_id, name, client_id, secret_hash, scopes, knowledge_base_ids)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${columns}`,
    [workspaceId, input.name, clientId, await hashSecret(clientSecret), [...new Set(input.scopes)], knowledgeBaseIds],
  );
  return { client: toClient(rows[0]!), clientSecret };
}

export async function listClients(db: Db, workspaceId: string): Promise<AccessTokenClient[]> {
  const { rows } = await db.query<ClientRow>(
    `SELECT ${columns} FROM access_token_clients WHERE workspace_id = $1 ORDER BY created_at DESC, id`,
    [workspaceId],
  );
  return rows.map(toClient);
}

/** A client of the workspace, revoked or not; 404 otherwise. */
export async function getClient(db: Db, workspaceId: string, id: string): Promise<AccessTokenClient> {
  const { rows } = await db.query<ClientRow>(`SELECT ${columns} FROM access_token_clients WHERE workspace_id = $1 AND id = $2`, [workspaceId, id]);
  if (!rows[0]) throw notFound('Access-token client', id);
  return toClient(rows[0]);
}

/** Revokes a client: its tokens stop working (within the guard's cache time). Idempotent. */
export async function revokeClient(db: Db, workspaceId: string, id: string): Promise<void> {
  const { rowCount } = await db.query(
    `UPDATE access_token_clients SET revoked_at = COALESCE(revoked_at, now()), updated_at = now()
     WHERE workspace_id = $1 AND id = $2`,
    [workspaceId, id],
  );
  if (rowCount === 0) throw notFound('Access-token client', id);
}
