/**
 * The database `bench:query` keeps with BENCH_KEEP=1, and what the benches that measure one part of
 * a question on it (BENCH_REUSE=<its DATA_DIR>) read about it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The knowledge base bench:query built, behind a public experience. */
export type Built = {
  workspaceId: string;
  token: string;
  knowledgeBaseId: string;
  experienceId: string;
  articles: number;
  chunks: number;
  seconds: Record<string, number>;
};

/** What BENCH_KEEP leaves in the DATA_DIR for BENCH_REUSE: the database, what was built in it, the job the mixed load reads. */
export type Kept = { env: Record<string, string>; built: Built; jobId?: string };

export const KEPT_FILE = 'bench-query.json';

/** What BENCH_REUSE's DATA_DIR keeps; BENCH_REUSE is required. */
export function keptDatabase(): Kept & { env: { DATA_DIR: string } } {
  const reuseDir = process.env.BENCH_REUSE;
  if (!reuseDir) throw new Error('BENCH_REUSE must name the DATA_DIR of a database kept by bench:query (BENCH_KEEP=1)');
  const kept = JSON.parse(readFileSync(join(reuseDir, KEPT_FILE), 'utf8')) as Kept;
  return { ...kept, env: { ...kept.env, DATA_DIR: kept.env.DATA_DIR ?? reuseDir } };
}
