import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.ts';
import type { Db } from './db/db.ts';
import type { EmbeddingProvider } from './providers/embeddings/provider.ts';
import type { AnswerGenerator } from './providers/generation/provider.ts';

/** Secrets resolved at start-up (from config, or generated into the data directory). */
export type Secrets = Readonly<{ tokenSecret: Uint8Array; adminApiKey: string | undefined }>;

/** What every feature needs, built once and passed explicitly: no globals, no container. */
export type AppContext = Readonly<{
  config: Config;
  db: Db;
  secrets: Secrets;
  log: FastifyBaseLogger;
  /** One per process: its worker threads are shared by ingestion and queries. */
  embedder: EmbeddingProvider;
  /** The answer generator of a name (`extractive`, `openai`); LLM_PROVIDER's without one. */
  generators: (name?: Config['llmProvider']) => AnswerGenerator;
  /** The ingestion workers of this process (possibly none). */
  workers: { nudge(): void };
}>;
