-- Experience tools (issue 37): an experience's tools are stored with it, as its actions are (one
-- JSON array, validated by the API before it is written); each query keeps the tool calls its
-- answer made, for the session transcript. Header values stay in `tools`: reads mask them, and no
-- statement copies them into `tool_calls`.
ALTER TABLE experiences ADD COLUMN tools jsonb NOT NULL DEFAULT '[]';
ALTER TABLE queries ADD COLUMN tool_calls jsonb NOT NULL DEFAULT '[]';
