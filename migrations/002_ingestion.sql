-- Ingestion: data sources, entries with their chunks and vectors, and the job queue.

-- One data source per knowledge base and adapter, created on first use (result.sourceId).
CREATE TABLE data_sources (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  knowledge_base_id uuid NOT NULL REFERENCES knowledge_bases (id) ON DELETE CASCADE,
  adapter text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (knowledge_base_id, adapter)
);
CREATE INDEX data_sources_workspace ON data_sources (workspace_id);

-- One entry per record id and knowledge base: re-sending a record updates it, never duplicates it.
CREATE TABLE entries (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  knowledge_base_id uuid NOT NULL REFERENCES knowledge_bases (id) ON DELETE CASCADE,
  source_id uuid NOT NULL REFERENCES data_sources (id) ON DELETE CASCADE,
  record_id text NOT NULL,
  title text NOT NULL,
  content text NOT NULL,
  content_type text NOT NULL CHECK (content_type IN ('text', 'markdown', 'code', 'qa_pair')),
  url text,
  tags text[] NOT NULL DEFAULT '{}',
  metadata jsonb NOT NULL DEFAULT '{}',
  -- SHA-256 (hex) of the normalized title, content, contentType, url, tags and metadata.
  content_hash text NOT NULL,
  chunk_count integer NOT NULL DEFAULT 0,
  job_id uuid,
  -- When the job that wrote this version was submitted: a job never overwrites or deletes a
  -- version written by a job submitted after it, so concurrent jobs end as if run in order.
  job_created_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (knowledge_base_id, record_id)
);
CREATE INDEX entries_workspace ON entries (workspace_id);
CREATE INDEX entries_hash ON entries (knowledge_base_id, content_hash);
CREATE INDEX entries_listing ON entries (knowledge_base_id, created_at DESC, id);
CREATE INDEX entries_tags ON entries USING gin (tags);
CREATE INDEX entries_source ON entries (source_id);

-- Chunks carry the vector and the full-text document. The vector column has no fixed dimension
-- so that providers of any dimension fit; each dimension in use gets its own partial HNSW index
-- on `embedding::vector(N)` (created on first use), which is what pgvector recommends for this.
CREATE TABLE chunks (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  knowledge_base_id uuid NOT NULL REFERENCES knowledge_bases (id) ON DELETE CASCADE,
  entry_id uuid NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
  ordinal integer NOT NULL,
  text text NOT NULL,
  heading_path text[] NOT NULL DEFAULT '{}',
  start_offset integer NOT NULL,
  end_offset integer NOT NULL,
  -- SHA-256 (hex) of the text that was embedded: an update re-uses the vectors of unchanged chunks.
  text_hash text NOT NULL,
  embedding vector NOT NULL,
  embedding_dimension integer NOT NULL,
  search_vector tsvector NOT NULL,
  UNIQUE (entry_id, ordinal)
);
CREATE INDEX chunks_kb_text_hash ON chunks (knowledge_base_id, text_hash);
CREATE INDEX chunks_workspace ON chunks (workspace_id);
CREATE INDEX chunks_search ON chunks USING gin (search_vector);

CREATE TABLE ingestion_jobs (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  knowledge_base_id uuid NOT NULL REFERENCES knowledge_bases (id) ON DELETE CASCADE,
  source_id uuid NOT NULL REFERENCES data_sources (id) ON DELETE CASCADE,
  adapter_type text NOT NULL,
  adapter_id text NOT NULL,
  status text NOT NULL DEFAULT 'pending'
    CHECK (status IN ('pending', 'processing', 'completed', 'failed', 'cancelled')),
  record_count integer NOT NULL,
  payload jsonb NOT NULL,
  -- Counters, kept equal to the rows of ingestion_job_results (recounted when a job is resumed).
  processed integer NOT NULL DEFAULT 0,
  successful integer NOT NULL DEFAULT 0,
  failed integer NOT NULL DEFAULT 0,
  skipped integer NOT NULL DEFAULT 0,
  entries_created integer NOT NULL DEFAULT 0,
  entries_updated integer NOT NULL DEFAULT 0,
  entries_skipped integer NOT NULL DEFAULT 0,
  entries_deleted integer NOT NULL DEFAULT 0,
  embeddings_generated integer NOT NULL DEFAULT 0,
  timings jsonb NOT NULL DEFAULT '{}',
  error text,
  -- The queue: a worker owns a processing job while its lease is current.
  lease_owner text,
  lease_expires_at timestamptz,
  attempts integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  completed_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ingestion_jobs_listing ON ingestion_jobs (workspace_id, created_at DESC, id);
CREATE INDEX ingestion_jobs_queue ON ingestion_jobs (created_at) WHERE status IN ('pending', 'processing');

-- One row per processed record: the resume point after a crash, and data.results.
CREATE TABLE ingestion_job_results (
  job_id uuid NOT NULL REFERENCES ingestion_jobs (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  ordinal integer NOT NULL,
  record_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('success', 'skipped', 'deleted', 'failed')),
  action text,
  reason text,
  entry_id uuid,
  embedding_count integer NOT NULL DEFAULT 0,
  error text,
  PRIMARY KEY (job_id, ordinal)
);
