import type { Db, Queryable } from '../../core/db/db.ts';
import { notFound, type FieldError } from '../../core/errors.ts';
import { validationError } from '../../core/http/validation-messages.ts';
import { allowedKnowledgeBases, knowledgeBasesAllowed, type Reach } from '../auth/reach.ts';
import { maskedTool, unmaskedTools } from '../tools/tool-headers.ts';
import type { ToolTargetRules } from '../tools/tool-request.ts';
import { toolsProblems, withDefaults } from '../tools/tool-rules.ts';
import type { Tool } from '../tools/tool.schema.ts';
import type { Action } from './action.schema.ts';
import {
  DEFAULT_FALLBACK_MESSAGE,
  type Experience,
  type ExperienceChanges,
  type NewExperience,
} from './experiences.schemas.ts';
import { parseOriginPattern } from './origin-pattern.ts';

export type ExperienceRow = {
  id: string;
  workspace_id: string;
  name: string;
  knowledge_base_ids: string[];
  require_auth: boolean;
  allowed_origins: string[];
  instructions: string;
  fallback_message: string;
  actions: Action[];
  settings: Experience['settings'];
  tools: Tool[];
  created_at: Date;
  updated_at: Date;
};

const columns = `id, workspace_id, name, knowledge_base_ids, require_auth, allowed_origins, instructions,
  fallback_message, actions, settings, tools, created_at, updated_at`;
/** The same columns of the table aliased `e`, for statements that join it. */
export const columnsOfE = columns
  .split(',')
  .map((column) => `e.${column.trim()}`)
  .join(', ');

export function toExperience(row: ExperienceRow): Experience {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    name: row.name,
    knowledgeBaseIds: row.knowledge_base_ids,
    requireAuth: row.require_auth,
    allowedOrigins: row.allowed_origins,
    instructions: row.instructions,
    fallbackMessage: row.fallback_message,
    actions: row.actions,
    settings: row.settings,
    tools: row.tools,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** An experience as responses show it: its tools' header values masked (they are write-only). */
export function publicExperience(experience: Experience): Experience {
  return { ...experience, tools: experience.tools.map(maskedTool) };
}

/**
 * Checks what the JSON schema cannot: knowledge bases of this workspace, origin syntax, unique
 * action ids, the tools' rules; and gives the tools with masked header values replaced by the
 * stored ones of `storedTools`.
 */
async function assertConsistent(
  db: Queryable,
  workspaceId: string,
  input: ExperienceChanges,
  toolRules: ToolTargetRules,
  storedTools: readonly Tool[] = [],
): Promise<Tool[] | undefined> {
  const errors: FieldError[] = [];
  const tools = input.tools && unmaskedTools(input.tools, storedTools);
  if (tools) errors.push(...tools.errors, ...toolsProblems(tools.tools, toolRules));
  if (input.knowledgeBaseIds && input.knowledgeBaseIds.length > 0) {
    const { rows } = await db.query<{ id: string }>(
      'SELECT id FROM knowledge_bases WHERE workspace_id = $1 AND id = ANY($2::uuid[])',
      [workspaceId, input.knowledgeBaseIds],
    );
    const found = new Set(rows.map((row) => row.id));
    input.knowledgeBaseIds.forEach((id, index) => {
      if (!found.has(id)) errors.push({ path: `/knowledgeBaseIds/${index}`, message: `names knowledge base ${id}, which does not exist in this workspace` });
    });
  }
  input.allowedOrigins?.forEach((pattern, index) => {
    const parsed = parseOriginPattern(pattern);
    if ('error' in parsed) errors.push({ path: `/allowedOrigins/${index}`, message: `is not a valid origin pattern: ${parsed.error}` });
  });
  const seen = new Set<string>();
  input.actions?.forEach((action, index) => {
    if (seen.has(action.id)) errors.push({ path: `/actions/${index}/id`, message: `duplicates the action id ${action.id}` });
    seen.add(action.id);
  });
  if (errors.length > 0) throw validationError(errors);
  return tools?.tools.map(withDefaults);
}

export async function createExperience(db: Db, workspaceId: string, input: NewExperience, toolRules: ToolTargetRules): Promise<Experience> {
  const tools = await assertConsistent(db, workspaceId, input, toolRules);
  const { rows } = await db.query<ExperienceRow>(
    `INSERT INTO experiences
       (workspace_id, name, knowledge_base_ids, require_auth, allowed_origins, instructions, fallback_message, actions, settings, tools)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${columns}`,
    [
      workspaceId,
      input.name,
      input.knowledgeBaseIds ?? [],
      input.requireAuth ?? false,
      input.allowedOrigins ?? [],
      input.instructions ?? '',
      input.fallbackMessage ?? DEFAULT_FALLBACK_MESSAGE,
      JSON.stringify(input.actions ?? []),
      JSON.stringify(input.settings ?? {}),
      JSON.stringify(tools ?? []),
    ],
  );
  return toExperience(rows[0]!);
}

// The experiences a caller reaches: of its workspace, not deleted, and, for a token restricted to
// some knowledge bases, linking only those ($2).
const reached = `workspace_id = $1 AND deleted_at IS NULL AND ${knowledgeBasesAllowed('knowledge_base_ids', 2)}`;

/** The experiences within reach, newest first. */
export async function listExperiences(db: Db, reach: Reach, page: { limit: number; offset: number }): Promise<{ total: number; experiences: Experience[] }> {
  const values = [reach.workspaceId, allowedKnowledgeBases(reach)];
  const [{ rows }, count] = await Promise.all([
    db.query<ExperienceRow>(`SELECT ${columns} FROM experiences WHERE ${reached} ORDER BY created_at DESC, id LIMIT $3 OFFSET $4`, [
      ...values,
      page.limit,
      page.offset,
    ]),
    db.query<{ total: number }>(`SELECT count(*)::int AS total FROM experiences WHERE ${reached}`, values),
  ]);
  return { total: count.rows[0]!.total, experiences: rows.map(toExperience) };
}

/** An experience within reach (of the workspace, not deleted, of allowed knowledge bases); 404 otherwise. */
export async function getExperience(db: Queryable, reach: Reach, id: string): Promise<Experience> {
  const { rows } = await db.query<ExperienceRow>(`SELECT ${columns} FROM experiences WHERE ${reached} AND id = $3`, [
    reach.workspaceId,
    allowedKnowledgeBases(reach),
    id,
  ]);
  if (!rows[0]) throw notFound('Experience', id);
  return toExperience(rows[0]);
}

/** Changes an experience within reach; 404 otherwise (its current knowledge bases decide, not the new ones). */
export async function updateExperience(db: Db, reach: Reach, id: string, changes: ExperienceChanges, toolRules: ToolTargetRules): Promise<Experience> {
  return db.transaction(async (tx) => {
    // Read first, in the transaction: masked header values are resolved against what is stored.
    const current = await getExperience(tx, reach, id);
    const tools = await assertConsistent(tx, reach.workspaceId, changes, toolRules, current.tools);
    const next = { ...current, ...changes, tools: tools ?? current.tools };
    const { rows } = await tx.query<ExperienceRow>(
      `UPDATE experiences SET name = $4, knowledge_base_ids = $5, require_auth = $6, allowed_origins = $7,
         instructions = $8, fallback_message = $9, actions = $10, settings = $11, tools = $12, updated_at = now()
       WHERE ${reached} AND id = $3 RETURNING ${columns}`,
      [
        reach.workspaceId,
        allowedKnowledgeBases(reach),
        id,
        next.name,
        next.knowledgeBaseIds,
        next.requireAuth,
        next.allowedOrigins,
        next.instructions,
        next.fallbackMessage,
        JSON.stringify(next.actions),
        JSON.stringify(next.settings),
        JSON.stringify(next.tools),
      ],
    );
    return toExperience(rows[0]!);
  });
}

/**
 * Marks an experience deleted: it answers 404 from then on, while the sessions and queries that
 * reference it stay readable for audit.
 */
export async function deleteExperience(db: Db, reach: Reach, id: string): Promise<void> {
  const { rowCount } = await db.query(`UPDATE experiences SET deleted_at = now(), updated_at = now() WHERE ${reached} AND id = $3`, [
    reach.workspaceId,
    allowedKnowledgeBases(reach),
    id,
  ]);
  if (rowCount === 0) throw notFound('Experience', id);
}
