-- Foundation: workspaces (the unit of isolation), access-token clients, knowledge bases and
-- experiences. Every tenant table carries workspace_id, and every statement in the code filters
-- by it.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE workspaces (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE access_token_clients (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name text NOT NULL,
  client_id text NOT NULL UNIQUE,
  secret_hash text NOT NULL,
  scopes text[] NOT NULL,
  -- NULL: every knowledge base of the workspace; otherwise only these.
  knowledge_base_ids uuid[],
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX access_token_clients_workspace ON access_token_clients (workspace_id, created_at);

CREATE TABLE knowledge_bases (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  chunk_size integer NOT NULL DEFAULT 800 CHECK (chunk_size BETWEEN 100 AND 8000),
  chunk_overlap integer NOT NULL DEFAULT 100 CHECK (chunk_overlap >= 0 AND chunk_overlap < chunk_size),
  -- Set by the first ingestion: vectors of one knowledge base never mix providers or dimensions.
  embedding_provider text,
  embedding_model text,
  embedding_dimension integer,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX knowledge_bases_workspace ON knowledge_bases (workspace_id, created_at);

CREATE TABLE experiences (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name text NOT NULL,
  knowledge_base_ids uuid[] NOT NULL DEFAULT '{}',
  require_auth boolean NOT NULL DEFAULT false,
  allowed_origins text[] NOT NULL DEFAULT '{}',
  instructions text NOT NULL DEFAULT '',
  fallback_message text NOT NULL,
  actions jsonb NOT NULL DEFAULT '[]',
  -- Retrieval, generation and rate-limit settings; their shape is validated by the API schema.
  settings jsonb NOT NULL DEFAULT '{}',
  deleted_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX experiences_workspace ON experiences (workspace_id, created_at);
