/** What a retrieval asks for, shared by the keyword and vector searches. */
export type RetrieveMode = 'hybrid' | 'vector' | 'keyword';

export type RetrieveFilter = {
  /** Entries carrying at least one of these tags. */
  tags?: string[];
  contentType?: string[];
  /** Entries whose metadata contains these key/values (JSON containment). */
  metadata?: Record<string, unknown>;
};

export type RetrieveInput = {
  workspaceId: string;
  knowledgeBaseIds: string[];
  query: string;
  topK: number;
  mode: RetrieveMode;
  filter?: RetrieveFilter;
  /**
   * The dimension of the encoder's vectors in the knowledge bases, when the caller read it already
   * (null: none of them holds vectors of the encoder); looked up when absent.
   */
  vectorDimension?: number | null;
  /** The question's vector, when the caller embedded `query` already with the same encoder. */
  queryVector?: Float32Array;
};

export type Ranked = { id: string; score: number }[];

/** Whether the filter restricts anything. */
export function hasFilter(filter: RetrieveFilter | undefined): filter is RetrieveFilter {
  return Boolean(filter && (filter.tags?.length || filter.contentType?.length || filter.metadata));
}

/**
 * The entries a filter admits, as a condition on chunks `c` whose statement has the workspace in $1
 * and the knowledge bases in $2; its own values start at `firstParameter`.
 */
export function filterClause(filter: RetrieveFilter | undefined, firstParameter: number): { sql: string; values: unknown[] } {
  if (!hasFilter(filter)) return { sql: '', values: [] };
  const p = firstParameter;
  return {
    sql: `AND c.entry_id IN (SELECT e.id FROM entries e WHERE e.workspace_id = $1 AND e.knowledge_base_id = ANY($2::uuid[])
            AND ($${p}::text[] IS NULL OR e.tags && $${p}::text[])
            AND ($${p + 1}::text[] IS NULL OR e.content_type = ANY($${p + 1}::text[]))
            AND ($${p + 2}::jsonb IS NULL OR e.metadata @> $${p + 2}::jsonb))`,
    values: [filter.tags?.length ? filter.tags : null, filter.contentType?.length ? filter.contentType : null, filter.metadata ? JSON.stringify(filter.metadata) : null],
  };
}

