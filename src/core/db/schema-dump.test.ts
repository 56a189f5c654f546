/**
 * docs/schema.sql is what the migrations make, on the engine of the run (PGlite, and PostgreSQL
 * with TEST_DATABASE_URL): a migration changed without `npm run schema`, or the file edited by
 * hand, fails here with a diff that names the statement (the table) where they part. The way
 * pg-boss checks its own schema against its migrations.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { createTestDatabase, engine } from '../../../test/harness.ts';
import type { Db, Queryable } from './db.ts';
import { openPostgres } from './postgres.ts';
import { dumpSchema, freshEmbeddedDb, migratedSchema, SCHEMA_FILE, schemaFileText } from './schema-dump.ts';

/** A new, empty database of the run's engine, and its removal. */
async function emptyDatabase(): Promise<{ db: Db; drop(): Promise<void> }> {
  if (engine === 'pglite') {
    const db = await freshEmbeddedDb();
    return { db, drop: () => db.close() };
  }
  const database = await createTestDatabase();
  const db = await openPostgres({ connectionString: database.env.DATABASE_URL!, poolSize: 2, idleInTransactionTimeoutMs: 60_000 });
  return {
    db,
    async drop() {
      await db.close();
      await database.drop();
    },
  };
}

/** The statement a line belongs to: the last line before it that begins one at the margin. */
function statementsOf(lines: string[]): string[] {
  let current = 'the header';
  return lines.map((line) => {
    if (/^(CREATE|ALTER|COMMENT) /.test(line)) current = line;
    return current;
  });
}

/**
 * Where `actual` parts from `expected`, line by line (a longest common subsequence), each run of
 * changed lines under the statement it is in (unless the line begins that statement itself), the
 * blank lines between statements left out; undefined when they are the same text.
 */
function schemaDifference(expected: string, actual: string): string | undefined {
  if (expected === actual) return undefined;
  const [was, is] = [expected.split('\n'), actual.split('\n')];
  // common[i][j]: the longest common subsequence of was[i..] and is[j..] (800 lines: 0.6 M cells).
  const common = Array.from({ length: was.length + 1 }, () => new Uint32Array(is.length + 1));
  for (let i = was.length - 1; i >= 0; i--) {
    for (let j = is.length - 1; j >= 0; j--) {
      common[i]![j] = was[i] === is[j] ? common[i + 1]![j + 1]! + 1 : Math.max(common[i + 1]![j]!, common[i]![j + 1]!);
    }
  }
  const [wasIn, isIn] = [statementsOf(was), statementsOf(is)];
  const out: string[] = [];
  let heading: string | undefined;
  const note = (statement: string, sign: '-' | '+', line: string) => {
    if (line === '') return;
    if (statement !== heading && statement !== line) out.push(`in ${statement}`);
    heading = statement;
    out.push(`${sign} ${line}`);
  };
  let [i, j] = [0, 0];
  while (i < was.length || j < is.length) {
    if (i < was.length && j < is.length && was[i] === is[j]) [i, j] = [i + 1, j + 1];
    else if (i < was.length && (j === is.length || common[i + 1]![j]! >= common[i]![j + 1]!)) note(wasIn[i]!, '-', was[i++]!);
    else note(isIn[j]!, '+', is[j++]!);
  }
  return out.length > 0 ? out.join('\n') : '(they differ in blank lines only)';
}

/** Fails with the difference when the migrated database's schema is not the file's. */
function assertSchemaIs(expected: string, actual: string) {
  const difference = schemaDifference(expected, actual);
  if (difference !== undefined) {
    assert.fail(`docs/schema.sql (-) and the schema of the migrated database (+) differ; after changing a migration, run \`npm run schema\`:\n${difference}`);
  }
}

/** Carries a result out of a transaction that must not commit. */
class Rollback extends Error {
  constructor(readonly value: unknown) {
    super('rolled back');
  }
}

/** What `work` returns, from a transaction rolled back afterwards: each test leaves the database as migrated. */
async function rolledBack<T>(db: Db, work: (tx: Queryable) => Promise<T>): Promise<T> {
  const thrown = await db.transaction(async (tx) => {
    throw new Rollback(await work(tx));
  }).catch((error: unknown) => error);
  if (thrown instanceof Rollback) return thrown.value as T;
  throw thrown;
}

/** docs/schema.sql's difference from the schema once `ddl` has run on the migrated database (undone after). */
const differenceAfter = (ddl: string) =>
  rolledBack(fresh.db, async (tx) => {
    await tx.exec(ddl);
    return schemaDifference(file, await schemaFileText(tx));
  });

let file: string;
let fresh: Awaited<ReturnType<typeof emptyDatabase>>;
let migrated: string;
before(async () => {
  file = await readFile(SCHEMA_FILE, 'utf8');
  fresh = await emptyDatabase();
  migrated = await migratedSchema(fresh.db);
});
after(() => fresh.drop());

test(`docs/schema.sql is the schema the migrations make (${engine})`, () => {
  assertSchemaIs(file, migrated);
});

test('a schema that drifts from the file fails, with a diff naming the table and the column', async () => {
  assert.equal(await differenceAfter('ALTER TABLE chunks ADD COLUMN drift integer'), 'in CREATE TABLE public.chunks (\n+   drift integer,');
});

test('comments on objects are written: a new one is a difference', async () => {
  const difference = await differenceAfter(`COMMENT ON TABLE chunks IS 'text and vectors'; COMMENT ON COLUMN chunks.page IS 'the file''s page';
    COMMENT ON FUNCTION keyword_slot() IS 'a slot'; COMMENT ON TRIGGER chunks_keyword_insert ON chunks IS 'postings'`);
  assert.equal(
    difference,
    [
      "+ COMMENT ON TRIGGER chunks_keyword_insert on public.chunks IS 'postings';",
      "+ COMMENT ON TABLE public.chunks IS 'text and vectors';",
      "+ COMMENT ON COLUMN public.chunks.page IS 'the file''s page';",
      "+ COMMENT ON FUNCTION public.keyword_slot() IS 'a slot';",
    ].join('\n'),
  );
});

test('an object the dump does not write fails it, rather than go missing from the file', async () => {
  const dumped = rolledBack(fresh.db, async (tx) => {
    await tx.exec("CREATE VIEW recent_jobs AS SELECT id FROM ingestion_jobs; CREATE SEQUENCE tickets; CREATE TYPE mood AS ENUM ('calm')");
    return dumpSchema(tx);
  });
  await assert.rejects(dumped, { message: 'schema-dump.ts does not write sequence tickets, type mood, view recent_jobs: teach it to.' });
});

test('the file, run on an empty schema, makes the same schema again', async () => {
  // The same database emptied rather than a second one: a new PGlite costs 3 s of CPU.
  await fresh.db.exec(`DROP SCHEMA public CASCADE; CREATE SCHEMA public; ${file}`);
  assertSchemaIs(file, await schemaFileText(fresh.db));
});
