/**
 * What the chaos tests check after the blows, on either engine: a problem list that reports
 * everything found at once, the state of each lore process, and a finished job against its own
 * results and the rows stored.
 */
import { isDeepStrictEqual } from 'node:util';
import type { LoreServer } from './lore-process.ts';

/** Runs SQL on the database under test (a pg pool or an opened PGlite). */
export type Query = (sql: string, values: unknown[]) => Promise<{ rows: any[] }>;

/** Problems found along the way; a test reports them all at its end, or with the error that stopped it. */
export class Findings {
  readonly problems: string[] = [];

  ok(condition: boolean, problem: () => string): void {
    if (!condition) this.problems.push(problem());
  }

  equal(actual: unknown, expected: unknown, label: string): void {
    if (!isDeepStrictEqual(actual, expected)) this.problems.push(`${label}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  }

  /** Problems of a list of offenders: how many, and the first few. */
  none<T>(offenders: T[], label: string, show: (item: T) => string): void {
    if (offenders.length > 0) {
      this.problems.push(`${label}: ${offenders.length}, e.g.\n${offenders.slice(0, 3).map((item) => `      ${show(item)}`).join('\n')}`);
    }
  }

  report(): string {
    return this.problems.length === 0 ? '' : `${this.problems.length} problem(s):\n${this.problems.map((problem) => `  - ${problem}`).join('\n')}`;
  }
}

function tail(text: string, lines: number): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** Each process's state, the tail of its stderr and its last warnings and errors. */
export function describeProcesses(processes: Array<{ name: string; process: LoreServer }>): string {
  return processes
    .map(({ name, process }) => {
      const exit = process.exitStatus;
      const warnings = process.stdout
        .split('\n')
        .filter((line) => line.startsWith('{') && /"level":(40|50|60)/.test(line))
        .slice(-3)
        .map((line) => `      ${line.slice(0, 500)}`)
        .join('\n');
      return [
        `  ${name} (pid ${process.pid}): ${exit ? `EXITED ${JSON.stringify(exit)}` : 'running'}`,
        `    stderr (tail):\n${tail(process.stderr, 15).replace(/^/gm, '      ') || '      (empty)'}`,
        `    last warnings/errors logged:\n${warnings || '      (none)'}`,
      ].join('\n');
    })
    .join('\n');
}

/**
 * The finished job against its own results and the stored rows: completed, every record once
 * with one chunk and one vector, and every counter equal to what it counts.
 */
export async function checkFinishedJob(findings: Findings, query: Query, job: any, records: Array<{ id: string }>, knowledgeBaseId: string): Promise<void> {
  const count = records.length;
  findings.equal(job.status, 'completed', `job status (result.error: ${job.result?.error})`);
  const results: any[] = job.data.results;
  const withStatus = (status: string) => results.filter((result) => result.status === status).length;
  const embeddings = results.reduce((sum, result) => sum + result.embeddingCount, 0);
  findings.equal(results.length, count, 'data.results.length');
  findings.equal(new Set(results.map((result) => result.sourceId)).size, count, 'distinct data.results[].sourceId');
  findings.equal(
    job.data.progress,
    { processed: results.length, total: count, successful: withStatus('success'), failed: withStatus('failed'), skipped: withStatus('skipped') },
    'data.progress against data.results',
  );
  findings.equal(withStatus('success'), count, 'results with status success');
  findings.equal(job.result.entriesCreated, results.filter((result) => result.action === 'created').length, 'result.entriesCreated against data.results');
  findings.equal(job.result.entriesCreated, count, 'result.entriesCreated');
  findings.equal(job.result.embeddingsGenerated, embeddings, 'result.embeddingsGenerated against the sum of data.results[].embeddingCount');

  const { rows } = await query(
    `SELECT
       (SELECT count(*) FROM entries WHERE knowledge_base_id = $1)::int AS entries,
       (SELECT count(*) FROM (SELECT record_id FROM entries WHERE knowledge_base_id = $1 GROUP BY record_id HAVING count(*) > 1) AS twice)::int AS repeated,
       (SELECT count(*) FROM chunks WHERE knowledge_base_id = $1)::int AS chunks,
       (SELECT count(DISTINCT text) FROM chunks WHERE knowledge_base_id = $1)::int AS texts,
       (SELECT count(*) FROM chunks WHERE knowledge_base_id = $1 AND embedding_dimension <> 64)::int AS "wrongVectors",
       (SELECT count(*) FROM entries AS entry WHERE entry.knowledge_base_id = $1
          AND entry.chunk_count <> (SELECT count(*) FROM chunks WHERE chunks.entry_id = entry.id))::int AS "miscounted"`,
    [knowledgeBaseId],
  );
  const stored = rows[0];
  findings.equal(stored, { entries: count, repeated: 0, chunks: count, texts: count, wrongVectors: 0, miscounted: 0 }, 'stored entries and chunks (one of each per record)');
  findings.equal(job.result.embeddingsGenerated, stored.chunks, 'result.embeddingsGenerated against the stored chunks');
  const { rows: entries } = await query('SELECT record_id, id FROM entries WHERE knowledge_base_id = $1', [knowledgeBaseId]);
  const entryOf = new Map(entries.map((entry) => [entry.record_id, entry.id]));
  findings.none(records.filter((record) => !entryOf.has(record.id)), 'records without a stored entry', (record) => record.id);
  findings.none(results.filter((result) => entryOf.get(result.sourceId) !== result.entryId), 'results whose entryId is not the stored entry', (result) => JSON.stringify(result));
}
