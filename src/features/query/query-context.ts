import type { Queryable } from '../../core/db/db.ts';
import { columnsOfE, toExperience, type ExperienceRow } from '../experiences/experiences.service.ts';
import type { Experience } from '../experiences/experiences.schemas.ts';
import type { Session } from '../sessions/sessions.schemas.ts';
import { sessionColumns, toSession, type SessionRow } from '../sessions/sessions.service.ts';

/** Everything a query needs to know before it retrieves, read in one statement. */
export type QueryContext = {
  experience: Experience;
  workspaceStatus: string;
  /** The session the request names, of the experience's workspace (null: none such). */
  session: Session | null;
  /**
   * The dimension of the vectors of the encoder in use in the experience's knowledge bases (null
   * when none holds vectors of it), which retrieval would otherwise look up on its own.
   */
  vectorDimension: number | null;
};

// The session's columns aliased `session_…`, so that they sit beside the experience's in one row.
const sessionColumnsOfS = sessionColumns
  .split(',')
  .map((column) => `s.${column.trim()} AS session_${column.trim()}`)
  .join(', ');

type SessionColumns = { [K in keyof SessionRow as `session_${K & string}`]: SessionRow[K] | null };

function sessionOf(row: SessionColumns): Session | null {
  if (row.session_id === null) return null;
  const entries = Object.entries(row).filter(([key]) => key.startsWith('session_')).map(([key, value]) => [key.slice('session_'.length), value]);
  return toSession(Object.fromEntries(entries) as SessionRow);
}

/**
 * An experience that was not deleted, found by its id alone, with its workspace's status, the
 * session `sessionId` names and the vector dimension of `encoder`: the public query endpoint knows
 * no workspace until it has read this row, so the session and the knowledge bases are joined on
 * the experience's workspace. One statement instead of three (bench/history.md, "Round trips per query").
 */
export async function queryContext(
  db: Queryable,
  experienceId: string,
  lookup: { sessionId?: string; encoder?: { name: string; model: string } } = {},
): Promise<QueryContext | undefined> {
  const { rows } = await db.query<ExperienceRow & SessionColumns & { workspace_status: string; vector_dimension: number | null }>(
    `SELECT ${columnsOfE}, w.status AS workspace_status, ${sessionColumnsOfS},
       (SELECT min(b.embedding_dimension) FROM knowledge_bases b
        WHERE b.workspace_id = e.workspace_id AND b.id = ANY(e.knowledge_base_ids) AND b.embedding_provider = $3 AND b.embedding_model = $4) AS vector_dimension
     FROM experiences e JOIN workspaces w ON w.id = e.workspace_id
     LEFT JOIN sessions s ON s.workspace_id = e.workspace_id AND s.id = $2::uuid
     WHERE e.id = $1 AND e.deleted_at IS NULL`,
    [experienceId, lookup.sessionId ?? null, lookup.encoder?.name ?? null, lookup.encoder?.model ?? null],
    { prepare: true, question: true },
  );
  const row = rows[0];
  if (!row) return undefined;
  return { experience: toExperience(row), workspaceStatus: row.workspace_status, session: sessionOf(row), vectorDimension: row.vector_dimension };
}
