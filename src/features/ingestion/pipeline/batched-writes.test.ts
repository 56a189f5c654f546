import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../../test/fake-openai.ts';
import { engine, startTestServer, type TestServer } from '../../../../test/harness.ts';
import { createKnowledgeBase, ingest, markdownDocument, submit, waitForJob, type GenericRecord } from '../../../../test/ingestion.ts';
import { askAboutReturns, createQueryExperience } from '../../../../test/query-experience.ts';

describe(`ingestion batched writes (${engine})`, () => {
  let server: TestServer;
  let fake: FakeOpenAi;
  let token: string;

  before(async () => {
    fake = await startFakeOpenAi();
    // A short lease, and attempts enough, so that the job is claimed again soon after its failing attempt.
    server = await startTestServer({ ...fakeEmbeddingsEnv(fake), INGESTION_LEASE_SECONDS: '2', INGESTION_MAX_ATTEMPTS: '100' });
    ({ token } = await server.tenant());
  });
  after(async () => {
    await server.close();
    await fake.close();
  });

  const record = (id: string, seed: number, extra = ''): GenericRecord => ({
    id,
    title: `Document ${id}`,
    content: `${markdownDocument(seed, 1200)}${extra}`,
    contentType: 'markdown',
    tags: ['guide', id],
    metadata: { seed },
  });

  async function entries(kb: string): Promise<Map<string, { id: string; chunk_count: number; chunks: number; content: string }>> {
    const { rows } = await server.context.db.query<{ record_id: string; id: string; chunk_count: number; chunks: number; content: string }>(
      `SELECT e.record_id, e.id, e.chunk_count, e.content, (SELECT count(*) FROM chunks c WHERE c.entry_id = e.id)::int AS chunks
       FROM entries e WHERE e.knowledge_base_id = $1`,
      [kb],
    );
    return new Map(rows.map((row) => [row.record_id, row]));
  }

  /** The statistics the chunks' trigger keeps, compared with a recount of chunks and postings. */
  async function assertKeywordStatistics(kb: string): Promise<void> {
    const { rows } = await server.context.db.query<{ lexemes: number; postings: number; stored: number; counted: number; tokens_ok: boolean }>(
      `SELECT
         (SELECT count(*) FROM (SELECT lexeme, sum(chunks) AS df FROM keyword_lexemes WHERE knowledge_base_id = $1 GROUP BY lexeme HAVING sum(chunks) <> 0) s
          FULL JOIN (SELECT lexeme, count(*) AS df FROM keyword_postings WHERE knowledge_base_id = $1 GROUP BY lexeme) p USING (lexeme)
          WHERE s.df IS DISTINCT FROM p.df)::int AS lexemes,
         (SELECT count(*) FROM keyword_postings p WHERE p.knowledge_base_id = $1
            AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.id = p.chunk_id))::int AS postings,
         (SELECT coalesce(sum(chunks), 0) FROM keyword_totals WHERE knowledge_base_id = $1)::int AS stored,
         (SELECT count(*) FROM chunks WHERE knowledge_base_id = $1)::int AS counted,
         (SELECT coalesce(sum(tokens), 0) FROM keyword_totals WHERE knowledge_base_id = $1)
           = (SELECT coalesce(sum(keyword_length(search_vector)), 0) FROM chunks WHERE knowledge_base_id = $1) AS tokens_ok`,
      [kb],
    );
    const check = rows[0]!;
    assert.equal(check.lexemes, 0, 'every lexeme’s document frequency equals its postings');
    assert.equal(check.postings, 0, 'no posting of a chunk that is not stored');
    assert.equal(check.stored, check.counted, 'the chunk total equals the chunks stored');
    assert.ok(check.tokens_ok, 'the token total equals the chunks’ lengths');
  }

  test('a record whose chunks violate a constraint has no entry, chunks or result row; the update, deletion and inserts of its batch commit whole, those after it too, and it is written once it can be', async () => {
    const kb = await createKnowledgeBase(server, token, { chunkSize: 400, chunkOverlap: 50 });
    const first = await ingest(server, token, kb, [record('a', 1), record('b', 2), record('c', 3), record('d', 4)]);
    assert.equal(first.status, 'completed');
    const before = await entries(kb);

    await server.context.db.exec(`ALTER TABLE chunks ADD CONSTRAINT test_poison CHECK (position('POISON-PILL' IN text) = 0) NOT VALID`);
    // An update, a deletion, an unchanged record, new ones, and one whose chunk insert fails,
    // between them. The later new ones take PGlite's writes past one group of about 24 chunks
    // (write-groups.ts), so the group after the failing record's is written too.
    const later = ['h', 'i', 'j', 'k', 'l'];
    const jobId = await submit(server, token, kb, [
      record('a', 11),
      { id: 'b', deleted: true },
      record('c', 3),
      record('e', 5),
      record('f', 6, '\n\nThis paragraph carries the POISON-PILL that the constraint refuses.'),
      record('g', 7),
      ...later.map((id, index) => record(id, 20 + index)),
    ]);
    const stalled = await waitForJob(server, token, jobId, (job) => job.progress?.processed >= 10 || job.data?.progress?.processed >= 10);
    assert.notEqual(stalled.status, 'completed', 'the failing record keeps the job from completing');

    const { rows: results } = await server.context.db.query<{ ordinal: number; record_id: string; status: string; action: string | null }>(
      'SELECT ordinal, record_id, status, action FROM ingestion_job_results WHERE job_id = $1 ORDER BY ordinal',
      [jobId],
    );
    assert.deepEqual(
      results.map((row) => [row.ordinal, row.record_id, row.status, row.action]),
      [
        [0, 'a', 'success', 'updated'],
        [1, 'b', 'deleted', null],
        [2, 'c', 'skipped', null],
        [3, 'e', 'success', 'created'],
        [5, 'g', 'success', 'created'],
        ...later.map((id, index) => [6 + index, id, 'success', 'created']),
      ],
    );
    const during = await entries(kb);
    assert.deepEqual([...during.keys()].sort(), ['a', 'c', 'd', 'e', 'g', ...later]);
    assert.equal(during.get('a')!.id, before.get('a')!.id, 'an update keeps the entry');
    assert.equal(during.get('a')!.content, record('a', 11).content);
    for (const [id, entry] of during) assert.equal(entry.chunks, entry.chunk_count, `${id}: every chunk of its entry, and only those`);
    const { rows: orphans } = await server.context.db.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM chunks c WHERE c.knowledge_base_id = $1 AND (c.entry_id = $2 OR position('POISON-PILL' IN c.text) > 0)`,
      [kb, before.get('b')!.id],
    );
    assert.equal(orphans[0]!.count, 0, 'no chunk of the deleted entry, none of the failing record');
    await assertKeywordStatistics(kb);

    await server.context.db.exec('ALTER TABLE chunks DROP CONSTRAINT test_poison');
    const finished = await waitForJob(server, token, jobId);
    assert.equal(finished.status, 'completed');
    const after = await entries(kb);
    assert.deepEqual([...after.keys()].sort(), ['a', 'c', 'd', 'e', 'f', 'g', ...later]);
    assert.equal(after.get('f')!.chunks, after.get('f')!.chunk_count);
    assert.equal(after.get('e')!.id, during.get('e')!.id, 'the records written before are not written again');
    await assertKeywordStatistics(kb);
  });
  test('a job of many batches, written two at a time on PostgreSQL, stores every record whole with exact keyword statistics', async () => {
    const kb = await createKnowledgeBase(server, token, { chunkSize: 400, chunkOverlap: 50 });
    // The first batch takes 10 records, the next ones more (batch-size.ts): several batches, and
    // on PostgreSQL two of them in flight at once (writes-in-flight.ts).
    const records = Array.from({ length: 120 }, (_, index) => record(`r${index}`, 100 + index));
    const job = await ingest(server, token, kb, records);
    assert.equal(job.status, 'completed', JSON.stringify(job.result));
    assert.deepEqual(job.data.progress, { processed: 120, total: 120, successful: 120, failed: 0, skipped: 0 });
    const stored = await entries(kb);
    assert.deepEqual([...stored.keys()].sort(), records.map((item) => item.id).sort());
    for (const [id, entry] of stored) {
      assert.equal(entry.content, record(id, 100 + Number(id.slice(1))).content);
      assert.equal(entry.chunks, entry.chunk_count, `${id}: every chunk of its entry, and only those`);
    }
    await assertKeywordStatistics(kb);
  });

  // PGlite writes a batch in groups of whole records while no question has come for a second, a
  // record a transaction while questions come (write-groups.ts). Each entry row's xmin is the
  // transaction that wrote it, whatever else commits meanwhile (polls, the job's bookkeeping).
  if (engine === 'pglite') {
    const RECORDS = 40;
    async function writeTransactions(kb: string): Promise<{ entries: number; transactions: number; chunks: number }> {
      const { rows } = await server.context.db.query<{ entries: number; transactions: number; chunks: number }>(
        `SELECT count(*)::int AS entries, count(DISTINCT xmin::text)::int AS transactions, sum(chunk_count)::int AS chunks
         FROM entries WHERE knowledge_base_id = $1`,
        [kb],
      );
      return rows[0]!;
    }

    test('with no question asked, PGlite writes several records in one transaction', async () => {
      const kb = await createKnowledgeBase(server, token, { chunkSize: 400, chunkOverlap: 50 });
      const job = await ingest(server, token, kb, Array.from({ length: RECORDS }, (_, index) => record(`q${index}`, 300 + index)));
      assert.equal(job.status, 'completed', JSON.stringify(job.result));
      const written = await writeTransactions(kb);
      assert.equal(written.entries, RECORDS);
      // About 5 chunks a record, groups of about 24 chunks: 10 transactions for 205 chunks, where
      // a transaction a record wrote 40.
      assert.ok(written.transactions <= RECORDS / 2, `${written.transactions} write transactions for ${RECORDS} records (${written.chunks} chunks)`);
    });

    test('while questions come, PGlite writes one record a transaction, so that a question waits for one record at most', async () => {
      const experience = await createQueryExperience(server);
      const kb = await createKnowledgeBase(server, token, { chunkSize: 400, chunkOverlap: 50 });
      // Two signed-in visitors (no per-IP limit) asking one question after another: a statement of
      // the query path is sent far more often than once a second, even while one waits for a write.
      let asking = true;
      const visitor = async () => {
        while (asking) assert.equal((await askAboutReturns(server, experience.experienceId, { token: experience.token })).status, 200);
      };
      const visitors = [visitor(), visitor()];
      try {
        await new Promise((resolve) => setTimeout(resolve, 300));
        const job = await ingest(server, token, kb, Array.from({ length: RECORDS }, (_, index) => record(`v${index}`, 400 + index)));
        assert.equal(job.status, 'completed', JSON.stringify(job.result));
      } finally {
        asking = false;
        await Promise.all(visitors);
      }
      const written = await writeTransactions(kb);
      assert.equal(written.entries, RECORDS);
      // 40 here; groups regardless of questions gave 11. A second in which a loaded machine sent no
      // question lets one group of about 5 records through, rightly: the bound allows two.
      assert.ok(written.transactions >= RECORDS - 8, `${written.transactions} write transactions for ${RECORDS} records while questions came`);
    });
  }
});
