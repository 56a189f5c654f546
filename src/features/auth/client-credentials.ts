/**
 * What authentication reads of an access-token client: its credentials at the token grant, its
 * standing at each request. They live in auth, below access-token-clients (whose routes use the
 * guard), so that the two features do not import each other (issue 36).
 */
import type { Db } from '../../core/db/db.ts';

/** What a token grant needs to authenticate a client. */
export type ClientCredentials = {
  id: string;
  workspaceId: string;
  clientId: string;
  secretHash: string;
  scopes: string[];
  knowledgeBaseIds: string[] | null;
  revoked: boolean;
  workspaceStatus: string;
};

/**
 * Looks a client up by its public id for the token grant. The only lookup not filtered by
 * workspace: the caller's workspace is what the credentials are about to prove.
 */
export async function findCredentials(db: Db, clientId: string): Promise<ClientCredentials | undefined> {
  const { rows } = await db.query<{
    id: string;
    workspace_id: string;
    client_id: string;
    secret_hash: string;
    scopes: string[];
    knowledge_base_ids: string[] | null;
    revoked_at: Date | null;
    workspace_status: string;
  }>(
    `SELECT c.id, c.workspace_id, c.client_id, c.secret_hash, c.scopes, c.knowledge_base_ids, c.revoked_at,
            w.status AS workspace_status
     FROM access_token_clients c JOIN workspaces w ON w.id = c.workspace_id
     WHERE c.client_id = $1`,
    [clientId],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    clientId: row.client_id,
    secretHash: row.secret_hash,
    scopes: row.scopes,
    knowledgeBaseIds: row.knowledge_base_ids,
    revoked: row.revoked_at !== null,
    workspaceStatus: row.workspace_status,
  };
}

/** What a token's client holds now: revoked or not, its current scopes and knowledge bases, its workspace's state. */
export type ClientStanding = { revoked: boolean; scopes: string[]; knowledgeBaseIds: string[] | null; workspaceStatus: string };

/** Whether a token's client still stands, and what it may do now. */
export async function clientStanding(db: Db, workspaceId: string, clientRowId: string): Promise<ClientStanding | undefined> {
  const { rows } = await db.query<{ revoked: boolean; scopes: string[]; knowledge_base_ids: string[] | null; workspace_status: string }>(
    `SELECT c.revoked_at IS NOT NULL AS revoked, c.scopes, c.knowledge_base_ids, w.status AS workspace_status
     FROM access_token_clients c JOIN workspaces w ON w.id = c.workspace_id
     WHERE c.workspace_id = $1 AND c.id = $2`,
    [workspaceId, clientRowId],
  );
  const row = rows[0];
  return row ? { revoked: row.revoked, scopes: row.scopes, knowledgeBaseIds: row.knowledge_base_ids, workspaceStatus: row.workspace_status } : undefined;
}
