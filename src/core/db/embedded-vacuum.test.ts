import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../test/fake-openai.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { createKnowledgeBase, ingest, markdownDocument } from '../../../test/ingestion.ts';
import { dueAction, vacuumWhereDue } from './embedded-vacuum.ts';

describe('the autovacuum rule', () => {
  test('vacuums past 50 + 20 % dead rows or 1000 + 20 % inserted rows, analyzes past 50 + 10 % changed rows', () => {
    const table = { table: 'chunks', tuples: 1000, dead: 0, modified: 0, inserted: 0 };
    assert.equal(dueAction(table), undefined);
    assert.equal(dueAction({ ...table, dead: 250 }), undefined);
    assert.equal(dueAction({ ...table, dead: 251 }), 'vacuum');
    assert.equal(dueAction({ ...table, inserted: 1200, modified: 1200 }), 'analyze');
    assert.equal(dueAction({ ...table, inserted: 1201, modified: 1201 }), 'vacuum');
    assert.equal(dueAction({ ...table, modified: 150 }), undefined);
    assert.equal(dueAction({ ...table, modified: 151 }), 'analyze');
    // A table never analyzed estimates -1 rows: the thresholds are the bases alone.
    assert.equal(dueAction({ ...table, tuples: -1, modified: 51 }), 'analyze');
    assert.equal(dueAction({ ...table, tuples: -1, inserted: 1001, modified: 1001 }), 'vacuum');
  });
});

describe(`bulk tables are tidied after bulk changes (${engine})`, () => {
  let server: TestServer;
  let fake: FakeOpenAi;
  let token: string;

  before(async () => {
    fake = await startFakeOpenAi();
    server = await startTestServer(fakeEmbeddingsEnv(fake));
    ({ token } = await server.tenant());
  });
  after(async () => {
    await server.close();
    await fake.close();
  });

  const lastTidied = async () => {
    const { rows } = await server.context.db.query<{ table: string; vacuumed: Date | null; analyzed: Date | null; dead: number }>(
      `SELECT relname AS table, last_vacuum AS vacuumed, last_analyze AS analyzed, n_dead_tup::int AS dead
       FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname IN ('chunks', 'keyword_postings') ORDER BY relname`,
    );
    return Object.fromEntries(rows.map((row) => [row.table, row]));
  };

  test('a job of 120 records leaves its postings vacuumed on PGlite; on PostgreSQL lore leaves it to autovacuum', async () => {
    const knowledgeBaseId = await createKnowledgeBase(server, token);
    const records = Array.from({ length: 120 }, (_, index) => ({ id: `doc-${index}`, content: markdownDocument(index, 700) }));
    await ingest(server, token, knowledgeBaseId, records);
    if (engine === 'postgres') {
      // Only a manual VACUUM or ANALYZE sets these; the server's autovacuum sets last_autovacuum.
      const tables = await lastTidied();
      assert.equal(tables.keyword_postings!.vacuumed, null);
      assert.equal(tables.chunks!.analyzed, null);
      return;
    }
    // The worker tidies right after it completes the job: wait for that.
    const deadline = Date.now() + 20_000;
    while ((await lastTidied()).keyword_postings!.vacuumed === null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    const tables = await lastTidied();
    assert.ok(tables.keyword_postings!.vacuumed, 'keyword_postings vacuumed after its thousands of inserted postings');
    assert.ok(tables.chunks!.analyzed, 'chunks analyzed after 120 new rows');
    // Done once: nothing is due again until more changes.
    assert.deepEqual(await vacuumWhereDue(server.context.db), { vacuumed: [], analyzed: [] });

    // Deleting the knowledge base leaves dead chunks and postings, which the next round removes.
    assert.equal((await server.request('DELETE', `/api/v2/knowledge-bases/${knowledgeBaseId}`, { token })).status, 204);
    const done = await vacuumWhereDue(server.context.db);
    assert.ok(done.vacuumed.includes('chunks') && done.vacuumed.includes('keyword_postings'), JSON.stringify(done));
    const after = await lastTidied();
    assert.equal(after.chunks!.dead, 0);
    assert.equal(after.keyword_postings!.dead, 0);
  });
});
