// Throwaway: PGlite time of keyword_list_versions against the statement it replaced.
import { readFileSync, cpSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { helpQuestions } from '../bench/help-center.ts';

const dir = process.env.BENCH_REUSE!;
const kept = JSON.parse(readFileSync(join(dir, 'bench-query.json'), 'utf8'));
const copy = mkdtempSync('/tmp/pgl-copy-');
cpSync(join(dir, 'pgdata'), join(copy, 'pgdata'), { recursive: true });
const db = await PGlite.create(join(copy, 'pgdata'), { extensions: { vector } });
const ws = kept.built.workspaceId, kb = kept.built.knowledgeBaseId;
const questions = helpQuestions(300, kept.built.articles, 11);
const lit = (s: string) => "'" + s.replaceAll("'", "''") + "'";
const TOTALS = `SELECT greatest(sum(chunks), 1)::float8 AS chunks, greatest(sum(tokens), 1)::float8 / greatest(sum(chunks), 1) AS average_length
       FROM keyword_totals WHERE workspace_id = $1 AND knowledge_base_id = ANY($2::uuid[])`;
const old = `WITH totals AS (${TOTALS}),
     question AS (SELECT DISTINCT q.lexeme FROM unnest(keyword_document($3)) q),
     lists AS (
       SELECT l.knowledge_base_id, l.lexeme, sum(l.chunks)::float8 AS postings, sum(l.changes)::text AS version
       FROM unnest($2::uuid[]) b(id)
       CROSS JOIN question q
       JOIN keyword_lexemes l ON l.workspace_id = $1 AND l.knowledge_base_id = b.id AND l.lexeme = q.lexeme
       GROUP BY l.knowledge_base_id, l.lexeme
       HAVING sum(l.chunks) > 0
     ),
     terms AS (SELECT lexeme, sum(postings) AS df FROM lists GROUP BY lexeme)
     SELECT l.knowledge_base_id, l.lexeme, l.postings, l.version, t.df,
       ln(1 + (totals.chunks - t.df + 0.5) / (t.df + 0.5)) AS idf, totals.average_length,
       (SELECT sum(ln(1 + (totals.chunks - coalesce(w.df, 0) + 0.5) / (coalesce(w.df, 0) + 0.5)))
        FROM question q LEFT JOIN terms w ON w.lexeme = q.lexeme) AS whole_idf
     FROM lists l JOIN terms t ON t.lexeme = l.lexeme CROSS JOIN totals`;
await db.exec(`PREPARE old_s(uuid, uuid[], text) AS ${old}`);
await db.exec(`PREPARE new_s(uuid, uuid[], text) AS SELECT * FROM keyword_list_versions($1, $2::uuid[], $3)`);
await db.exec(`PREPARE floor_s(text) AS SELECT $1::text`);
async function time(name: string, call: (q: string) => string) {
  const start = performance.now();
  for (const q of questions) await db.exec(call(q));
  return ((performance.now() - start) / questions.length).toFixed(3);
}
for (let round = 0; round < 3; round++) {
  console.log(JSON.stringify({
    old: await time('old', (q) => `EXECUTE old_s(${lit(ws)}, ARRAY[${lit(kb)}]::uuid[], ${lit(q)})`),
    fn: await time('new', (q) => `EXECUTE new_s(${lit(ws)}, ARRAY[${lit(kb)}]::uuid[], ${lit(q)})`),
    floor: await time('floor', (q) => `EXECUTE floor_s(${lit(q)})`),
  }));
}
console.log((await db.query(`SELECT name, generic_plans, custom_plans FROM pg_prepared_statements`)).rows);
process.exit(0);
