/**
 * Whose data a statement may touch: one workspace and, for a token whose client is restricted to
 * some knowledge bases (decision 24), only those. A token's claims are a Reach; so is
 * `{ workspaceId }` alone, for a caller that no restriction binds.
 */
export type Reach = { workspaceId: string; knowledgeBaseIds?: readonly string[] | undefined };

/**
 * The restriction as the `uuid[]` parameter of the conditions below: the allowed knowledge bases,
 * or null for every knowledge base of the workspace.
 */
export function allowedKnowledgeBases(reach: Reach): readonly string[] | null {
  return reach.knowledgeBaseIds ?? null;
}

/** SQL: the knowledge base id in `column` is one the `uuid[]` parameter `$n` allows. */
export function knowledgeBaseAllowed(column: string, parameter: number): string {
  return `($${parameter}::uuid[] IS NULL OR ${column} = ANY($${parameter}::uuid[]))`;
}

/**
 * SQL: every knowledge base in `column` (an experience's `knowledge_base_ids`) is one `$n` allows.
 * An experience answers from all its knowledge bases at once, so a single one outside the
 * restriction puts the experience outside, as the query endpoint's 403 does.
 */
export function knowledgeBasesAllowed(column: string, parameter: number): string {
  return `($${parameter}::uuid[] IS NULL OR ${column} <@ $${parameter}::uuid[])`;
}

/**
 * SQL: the experience whose id is in `column` is allowed by `$n` (see `knowledgeBasesAllowed`),
 * `$1` being the workspace. Sessions and queries follow their experience, deleted or not: they
 * hold its answers, and those come from its knowledge bases.
 */
export function experienceAllowed(column: string, parameter: number): string {
  return `($${parameter}::uuid[] IS NULL OR EXISTS (
    SELECT 1 FROM experiences reached WHERE reached.workspace_id = $1 AND reached.id = ${column}
      AND reached.knowledge_base_ids <@ $${parameter}::uuid[]))`;
}
