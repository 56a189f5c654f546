-- Conversations: sessions, the queries answered in them, and feedback on those answers.

CREATE TABLE sessions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  experience_id uuid NOT NULL REFERENCES experiences (id) ON DELETE CASCADE,
  -- Lower-cased; NULL for an anonymous session, which only anonymous queries may continue.
  user_id text,
  metadata jsonb NOT NULL DEFAULT '{}',
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'completed')),
  query_count integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  last_query_at timestamptz,
  completed_at timestamptz
);
CREATE INDEX sessions_listing ON sessions (workspace_id, created_at DESC, id);
CREATE INDEX sessions_experience ON sessions (workspace_id, experience_id, created_at DESC);
CREATE INDEX sessions_user ON sessions (workspace_id, user_id) WHERE user_id IS NOT NULL;

-- One row per answered query: the transcript of a session, and the record operators audit.
CREATE TABLE queries (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  session_id uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  experience_id uuid NOT NULL REFERENCES experiences (id) ON DELETE CASCADE,
  user_id text,
  text text NOT NULL,
  -- The question as retrieval saw it, rewritten with the conversation's context.
  standalone_text text NOT NULL,
  answer text NOT NULL,
  format text NOT NULL DEFAULT 'markdown',
  sources jsonb NOT NULL DEFAULT '[]',
  actions jsonb NOT NULL DEFAULT '[]',
  metadata jsonb NOT NULL DEFAULT '{}',
  -- Whether the answer came from the knowledge base (false: the fallback message).
  grounded boolean NOT NULL,
  generator text NOT NULL,
  model text NOT NULL,
  latency_ms integer NOT NULL,
  timings jsonb NOT NULL DEFAULT '{}',
  -- The request's `timestamp` (the client's clock), and when lore answered.
  asked_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX queries_session ON queries (session_id, created_at);
CREATE INDEX queries_workspace ON queries (workspace_id, created_at DESC);

-- The latest rating of an answer; a second rating of the same query replaces the first.
CREATE TABLE query_feedback (
  query_id uuid PRIMARY KEY REFERENCES queries (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  rating text NOT NULL CHECK (rating IN ('up', 'down')),
  comment text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX query_feedback_workspace ON query_feedback (workspace_id, created_at DESC);
