import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../../test/fake-openai.ts';
import type { Queryable } from '../../../core/db/db.ts';
import { engine, startTestServer, type TestServer } from '../../../../test/harness.ts';
import { createKnowledgeBase, ingest, type GenericRecord } from '../../../../test/ingestion.ts';
import { exhaustiveKeywordSearch, keywordSearch, type KeywordRanking } from './keyword-search.ts';
import { PostingLists, postingListsOf, roundLikePostgres } from './posting-lists.ts';
import { retrieve } from '../retrieve.service.ts';
import { random } from '../../../../test/random.ts';

// Words of the corpus, most frequent first: a document draws word i with probability about
// 1 / (i + 1), so the first few are in most documents (common, low idf) and the last in a few.
const WORDS = [
  'river', 'canyon', 'meadow', 'glacier', 'valley', 'harbor', 'orchard', 'ledger', 'lantern', 'compass',
  'falcon', 'granite', 'willow', 'saddle', 'beacon', 'quarry', 'thistle', 'anchor', 'marble', 'juniper',
  'walrus', 'tundra', 'kettle', 'mosaic', 'pelican', 'sextant', 'bramble', 'cobalt', 'parsnip', 'gazebo',
];

function corpus(prefix: string, count: number, seed: number): GenericRecord[] {
  const next = random(seed);
  return Array.from({ length: count }, (_, index) => {
    const words: string[] = [];
    for (const [rank, word] of WORDS.entries()) {
      const copies = next() < 1.5 / (rank + 1.5) ? 1 + Math.floor(next() * 3) : 0;
      for (let copy = 0; copy < copies; copy += 1) words.push(word);
    }
    // Lengths vary, so that length normalization and the bounds' length factor matter.
    for (let filler = Math.floor(next() * 12); filler > 0; filler -= 1) words.push(`note${Math.floor(next() * 500)}`);
    return { id: `${prefix}-${index}`, title: `Field notes ${index % 7}`, content: words.sort(() => next() - 0.5).join(' ') };
  });
}

/** Questions mixing common and rare words: every pair of one of the 8 most common with one of the rest, and some triples. */
function questions(): string[] {
  const list: string[] = [];
  for (let common = 0; common < 8; common += 1) {
    for (let rare = 8; rare < WORDS.length; rare += 3) list.push(`${WORDS[common]} ${WORDS[rare]}`);
  }
  for (let index = 0; index + 2 < WORDS.length; index += 4) list.push(`${WORDS[index]} ${WORDS[index + 1]} ${WORDS[WORDS.length - 1 - index]}`);
  // Longer questions leave several lexemes outside the first summed set, whose candidates are
  // completed (and dropped) one lexeme at a time.
  for (let index = 8; index + 1 < WORDS.length; index += 3) list.push(`${WORDS[index]} ${WORDS[index + 1]} ${WORDS[1]} ${WORDS[3]} ${WORDS[5]} ${WORDS[0]}`);
  list.push(WORDS.slice(0, 6).join(' '), `${WORDS[0]} ${WORDS[1]}`, WORDS[WORDS.length - 1]!, 'nothing matches this');
  return list;
}

/** The ranking and document frequencies, without the coverage a ranking from memory carries. */
function rankingOf({ ranking, documentFrequencies }: KeywordRanking): KeywordRanking {
  return { ranking, documentFrequencies };
}

describe(`pruned keyword ranking equals exhaustive BM25 (${engine})`, () => {
  let server: TestServer;
  let fake: FakeOpenAi;
  let token: string;
  let workspaceId: string;

  before(async () => {
    fake = await startFakeOpenAi();
    server = await startTestServer(fakeEmbeddingsEnv(fake));
    ({ token, workspaceId } = await server.tenant());
  });
  after(async () => {
    await server.close();
    await fake.close();
  });

  /**
   * Compares the top k of both (the pruned search from posting lists in memory when `lists` is
   * given) for every question and k; returns how many rankings were compared.
   */
  async function assertSameRankings(knowledgeBaseIds: string[], lists?: PostingLists): Promise<number> {
    let compared = 0;
    for (const query of questions()) {
      for (const k of [1, 10, 50]) {
        const input = { workspaceId, knowledgeBaseIds, query, topK: k, mode: 'keyword' as const };
        const pruned = await keywordSearch(server.context.db, input, k, lists);
        const exhaustive = await exhaustiveKeywordSearch(server.context.db, input, k);
        assert.deepEqual(pruned.ranking, exhaustive.ranking, `"${query}", top ${k}`);
        assert.deepEqual(pruned.documentFrequencies, exhaustive.documentFrequencies, `"${query}": document frequencies`);
        compared += 1;
      }
    }
    return compared;
  }

  test('the same chunks, scores and order for every question and k, after writes, updates and deletions, over one or two knowledge bases', async () => {
    const first = await createKnowledgeBase(server, token);
    const second = await createKnowledgeBase(server, token);
    const records = corpus('doc', 240, 7);
    await ingest(server, token, first, records);
    await ingest(server, token, second, corpus('other', 60, 11));

    const oneBase = await assertSameRankings([first]);
    assert.equal(oneBase, questions().length * 3);
    // A full ranking holds more than k results, so that the top k is a choice among many.
    const full = await exhaustiveKeywordSearch(server.context.db, { workspaceId, knowledgeBaseIds: [first], query: `${WORDS[0]} ${WORDS[20]}`, topK: 1000, mode: 'keyword' }, 1000);
    assert.ok(full.ranking.length > 150, `${full.ranking.length} chunks hold the words`);

    // Updates change frequencies and lengths; deletions lower document frequencies (while the
    // stored bounds stay as they were: still bounds, only looser).
    const next = random(3);
    const updated = records.slice(0, 40).map((record) => ({ ...record, content: `${record.content} ${WORDS[29]} ${WORDS[Math.floor(next() * WORDS.length)]}` }));
    const deleted = records.slice(40, 100).map((record) => ({ id: record.id, deleted: true }));
    const job = await ingest(server, token, first, [...updated, ...deleted]);
    assert.equal(job.result.entriesUpdated, 40);
    assert.equal(job.result.entriesDeleted, 60);
    await assertSameRankings([first]);
    await assertSameRankings([first, second]);
  });

  test('posting lists in memory rank as exhaustive BM25 while their versions match, and a list changed since is not used', async () => {
    const db = server.context.db;
    const first = await createKnowledgeBase(server, token);
    const second = await createKnowledgeBase(server, token);
    const records = corpus('kept', 240, 19);
    await ingest(server, token, first, records);
    await ingest(server, token, second, corpus('beside', 60, 23));
    // Questions do not wait for the lists they miss here: each goes to the database while its
    // lists load, so that the version of every list is checked on its own (waiting: the next test).
    const lists = new PostingLists({ waitMs: 0 });
    const loadAll = async () => {
      const { rows } = await db.query<{ knowledgeBaseId: string; lexeme: string }>(
        'SELECT DISTINCT knowledge_base_id AS "knowledgeBaseId", lexeme FROM keyword_lexemes WHERE workspace_id = $1 AND knowledge_base_id = ANY($2::uuid[])',
        [workspaceId, [first, second]],
      );
      await lists.load(db, workspaceId, rows);
    };
    const served = () => ({ hits: lists.counts.hits, misses: lists.counts.misses });

    // A question whose lists are not held goes to the database and has them loaded meanwhile.
    const question = { workspaceId, knowledgeBaseIds: [first], query: `${WORDS[0]} ${WORDS[20]}`, topK: 10, mode: 'keyword' as const };
    assert.deepEqual(rankingOf(await keywordSearch(db, question, 10, lists)), await exhaustiveKeywordSearch(db, question, 10));
    assert.deepEqual(served(), { hits: 0, misses: 1 });
    await lists.settled();
    assert.deepEqual(rankingOf(await keywordSearch(db, question, 10, lists)), await exhaustiveKeywordSearch(db, question, 10));
    assert.deepEqual(served(), { hits: 1, misses: 1 });

    await loadAll();
    const asked = questions().filter((query) => query !== 'nothing matches this').length * 3;
    let counts = served();
    const { postingsSummed, postingsScanned } = lists.counts;
    await assertSameRankings([first], lists);
    await assertSameRankings([first, second], lists);
    assert.deepEqual(served(), { hits: counts.hits + 2 * asked, misses: counts.misses }, 'every question was ranked from memory');
    // MaxScore left lists (the common words' most of all) to look candidates up in instead of summing them whole.
    const summed = lists.counts.postingsSummed - postingsSummed;
    const scanned = lists.counts.postingsScanned - postingsScanned;
    assert.ok(scanned > summed / 4, `${summed} postings summed, ${scanned} only searched`);

    // Updates and deletions change the versions of the lists they touch: those questions go to
    // the database (a stale list would rank the deleted chunks), until the lists are loaded again.
    const next = random(29);
    const updated = records.slice(0, 40).map((record) => ({ ...record, content: `${record.content} ${WORDS[29]} ${WORDS[Math.floor(next() * WORDS.length)]}` }));
    const deleted = records.slice(40, 100).map((record) => ({ id: record.id, deleted: true }));
    await ingest(server, token, first, [...updated, ...deleted]);
    await lists.settled();
    counts = served();
    assert.deepEqual(rankingOf(await keywordSearch(db, question, 10, lists)), await exhaustiveKeywordSearch(db, question, 10));
    assert.deepEqual(served(), { hits: counts.hits, misses: counts.misses + 1 }, 'the changed lists were not used');
    await assertSameRankings([first], lists);
    await lists.settled();
    await loadAll();
    counts = served();
    await assertSameRankings([first], lists);
    await assertSameRankings([first, second], lists);
    assert.deepEqual(served(), { hits: counts.hits + 2 * asked, misses: counts.misses });
  });

  test('questions that miss their lists wait for them: under many at once each list is read once, and every question is ranked from memory', async () => {
    const db = server.context.db;
    const kb = await createKnowledgeBase(server, token);
    await ingest(server, token, kb, corpus('cold', 200, 43));
    const lists = new PostingLists();
    const asked = questions().filter((query) => query !== 'nothing matches this');
    const inputs = asked.map((query) => ({ workspaceId, knowledgeBaseIds: [kb], query, topK: 10, mode: 'keyword' as const }));
    const rankings = await Promise.all(inputs.map((input) => keywordSearch(db, input, 10, lists)));
    for (const [index, input] of inputs.entries()) {
      assert.deepEqual(rankingOf(rankings[index]!), await exhaustiveKeywordSearch(db, input, 10), `"${input.query}"`);
    }
    const { rows } = await db.query<{ lexemes: number }>(
      `SELECT count(DISTINCT t.lexeme)::int AS lexemes FROM unnest($3::text[]) q(text), unnest(keyword_document(q.text)) t
       WHERE EXISTS (SELECT 1 FROM keyword_lexemes l WHERE l.workspace_id = $1 AND l.knowledge_base_id = $2 AND l.lexeme = t.lexeme AND l.chunks > 0)`,
      [workspaceId, kb, asked],
    );
    assert.ok(rows[0]!.lexemes >= 20, `${rows[0]!.lexemes} lexemes asked`);
    assert.deepEqual(
      { hits: lists.counts.hits, misses: lists.counts.misses, listsRead: lists.counts.listsRead },
      { hits: asked.length, misses: 0, listsRead: rows[0]!.lexemes },
    );
    // Every question but those whose version check came back after the read had ended waited for
    // it (a loaded machine let one of 81 arrive late: a hit without a wait, which is as good).
    assert.ok(lists.counts.waited >= 1 && lists.counts.waited <= asked.length, `${lists.counts.waited} of ${asked.length} waited`);
  });

  test('a question waits for its lists no longer than the bound, nor for a list too long to keep; the database ranks it meanwhile', { timeout: 60_000 }, async () => {
    const db = server.context.db;
    const kb = await createKnowledgeBase(server, token);
    await ingest(server, token, kb, corpus('bound', 120, 47));
    const input = { workspaceId, knowledgeBaseIds: [kb], query: `${WORDS[0]} ${WORDS[21]}`, topK: 10, mode: 'keyword' as const };
    const expected = await exhaustiveKeywordSearch(db, input, 10);

    // The database holds the lists' read back until released: the question does not wait for it.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow: Queryable = {
      query: async (text, values, options) => {
        if (text.includes('string_agg')) await held;
        return db.query(text, values, options);
      },
      exec: (text) => db.exec(text),
    };
    const lists = new PostingLists({ waitMs: 50 });
    assert.deepEqual(rankingOf(await keywordSearch(slow, input, 10, lists)), expected);
    assert.deepEqual({ hits: lists.counts.hits, misses: lists.counts.misses, listsRead: lists.counts.listsRead }, { hits: 0, misses: 1, listsRead: 0 });
    release();
    await lists.settled();
    assert.equal(lists.counts.listsRead, 2);
    assert.deepEqual(rankingOf(await keywordSearch(slow, input, 10, lists)), expected);
    assert.deepEqual({ hits: lists.counts.hits, waited: lists.counts.waited, misses: lists.counts.misses }, { hits: 1, waited: 0, misses: 1 });

    // A list longer than a list may be is never read: the question goes to the database at once.
    const short = new PostingLists({ limits: { postings: 100_000, chunkIds: 10_000, listPostings: 20 } });
    assert.deepEqual(rankingOf(await keywordSearch(db, input, 10, short)), expected);
    assert.deepEqual({ hits: short.counts.hits, misses: short.counts.misses }, { hits: 0, misses: 1 });
    await short.settled();
  });

  test('the keyword coverage of the chunks a hybrid search returns is the same from the posting lists in memory as recounted from the postings', async () => {
    const db = server.context.db;
    const kb = await createKnowledgeBase(server, token);
    await ingest(server, token, kb, corpus('covered', 160, 41));
    const lists = postingListsOf(db);
    const { rows: keys } = await db.query<{ knowledgeBaseId: string; lexeme: string }>(
      'SELECT DISTINCT knowledge_base_id AS "knowledgeBaseId", lexeme FROM keyword_lexemes WHERE workspace_id = $1 AND knowledge_base_id = $2',
      [workspaceId, kb],
    );
    await lists.load(db, workspaceId, keys);
    const seen = { partial: 0, none: 0 };
    // A lexeme no chunk holds weighs in the coverage's whole, at the highest idf.
    for (const query of [...questions(), `${WORDS[2]} ${WORDS[12]} zeppelin`]) {
      const hits = lists.counts.hits;
      const chunks = await retrieve(db, server.context.embedder, { workspaceId, knowledgeBaseIds: [kb], query, topK: 40, mode: 'hybrid' });
      // (A question none of whose lexemes any chunk holds needs no list.)
      assert.equal(lists.counts.hits, hits + (query === 'nothing matches this' ? 0 : 1), `"${query}" was ranked from memory`);
      const { rows } = await db.query<{ id: string; coverage: number }>(
        `WITH terms AS (SELECT DISTINCT t.lexeme FROM unnest(keyword_document($3)) t),
         total AS (SELECT count(*)::float8 AS chunks FROM chunks WHERE workspace_id = $1 AND knowledge_base_id = $2),
         weights AS (
           SELECT t.lexeme, ln(1 + (total.chunks - d.df + 0.5) / (d.df + 0.5)) AS idf FROM terms t CROSS JOIN total
           CROSS JOIN LATERAL (SELECT count(*)::float8 AS df FROM keyword_postings p WHERE p.workspace_id = $1 AND p.knowledge_base_id = $2 AND p.lexeme = t.lexeme) d
         )
         SELECT c.id, coalesce((SELECT sum(w.idf) FROM weights w JOIN keyword_postings p
             ON p.workspace_id = $1 AND p.knowledge_base_id = $2 AND p.lexeme = w.lexeme AND p.chunk_id = c.id), 0) / (SELECT sum(idf) FROM weights) AS coverage
         FROM chunks c WHERE c.workspace_id = $1 AND c.id = ANY($4::uuid[])`,
        [workspaceId, kb, query, chunks.map((chunk) => chunk.chunkId)],
      );
      const recounted = new Map(rows.map((row) => [row.id, Number(row.coverage)]));
      assert.equal(recounted.size, chunks.length);
      for (const chunk of chunks) {
        const expected = recounted.get(chunk.chunkId)!;
        assert.ok(Math.abs(chunk.keywordCoverage - expected) < 1e-12, `"${query}", chunk ${chunk.chunkId}: ${chunk.keywordCoverage} against ${expected}`);
        if (expected > 0 && expected < 1) seen.partial += 1;
        if (expected === 0) seen.none += 1;
      }
    }
    // Chunks holding some of a question's lexemes, and (vector candidates) holding none.
    assert.ok(seen.partial > 100 && seen.none > 0, JSON.stringify(seen));
  });

  test('posting lists stay within their limits; questions whose lists were evicted, too long or never loaded are ranked by the database', async () => {
    const db = server.context.db;
    const kb = await createKnowledgeBase(server, token);
    await ingest(server, token, kb, corpus('bounded', 120, 37));
    const { rows } = await db.query<{ knowledgeBaseId: string; lexeme: string; postings: number }>(
      'SELECT knowledge_base_id AS "knowledgeBaseId", lexeme, sum(chunks)::int AS postings FROM keyword_lexemes WHERE workspace_id = $1 AND knowledge_base_id = $2 GROUP BY 1, 2',
      [workspaceId, kb],
    );
    const longest = Math.max(...rows.map((row) => row.postings));
    assert.ok(longest > 60, `the most common word is in ${longest} chunks`);

    for (const limits of [
      { postings: 400, chunkIds: 10_000, listPostings: 60 },
      { postings: 100_000, chunkIds: 90, listPostings: 60 },
    ]) {
      const lists = new PostingLists({ limits });
      await lists.load(db, workspaceId, rows);
      assert.ok(lists.held.postings <= limits.postings && lists.held.chunkIds <= limits.chunkIds, JSON.stringify({ limits, held: lists.held }));
      assert.ok(lists.held.lists > 0 && lists.held.lists < rows.length, JSON.stringify(lists.held));
      const counts = { ...lists.counts };
      await assertSameRankings([kb], lists);
      await lists.settled();
      assert.ok(lists.counts.hits > counts.hits && lists.counts.misses > counts.misses, JSON.stringify({ limits, counts: lists.counts }));
      assert.ok(lists.held.postings <= limits.postings && lists.held.chunkIds <= limits.chunkIds, JSON.stringify({ limits, held: lists.held }));
    }
  });

  test('scores are rounded to 9 decimals as PostgreSQL rounds a float8 through numeric', async () => {
    const next = random(31);
    const values = [1.2345678905, 0.0000000005, 12.3456789015, 7.0000000004999, 0.1 + 0.2, 1e-12, 3.999999999999999, 123.456789012345];
    for (let index = 0; index < 500; index += 1) values.push(next() * 40, next() / 1000, Math.round(next() * 1e10) / 1e10 + 5e-10);
    // Both ways of rounding (near a half, and far from one), over the range of scores and beyond.
    for (let index = 0; index < 3000; index += 1) values.push(next() * 10 ** (next() * 6 - 2), Math.round(next() * 1e12) / 1e9 + 4.9e-10, -next() * 50);
    const { rows } = await server.context.db.query<{ rounded: number }>(
      'SELECT round(v::numeric, 9)::float8 AS rounded FROM unnest($1::float8[]) WITH ORDINALITY u(v, i) ORDER BY i',
      [values],
    );
    assert.deepEqual(values.map(roundLikePostgres), rows.map((row) => Number(row.rounded)));
  });

  test('a knowledge base newer than the planner statistics is searched by key lookups, not by reading all its postings', async () => {
    const db = server.context.db;
    const older = await createKnowledgeBase(server, token);
    await ingest(server, token, older, corpus('older', 200, 13));
    await db.query('ANALYZE keyword_postings');
    await db.query('ANALYZE keyword_lexemes');
    const newer = await createKnowledgeBase(server, token);
    await ingest(server, token, newer, corpus('newer', 200, 17));

    const query = `${WORDS[20]} ${WORDS[24]}`;
    // Counted inside the search's transaction (this backend's own counters), so that reads by
    // other connections, whose statistics reach the shared counters up to 10 s later, never count.
    const { found, reads } = await db.transaction(async (tx) => {
      const indexReads = async () => {
        const { rows } = await tx.query<{ reads: string }>("SELECT pg_stat_get_xact_tuples_returned('keyword_postings_pkey'::regclass) AS reads");
        return Number(rows[0]!.reads);
      };
      const before = await indexReads();
      const ranking = await keywordSearch(tx, { workspaceId, knowledgeBaseIds: [newer], query, topK: 10, mode: 'keyword' }, 10);
      return { found: ranking, reads: (await indexReads()) - before };
    });
    const counts = await db.query<{ question: number; all: number }>(
      `SELECT count(*) FILTER (WHERE lexeme = ANY(ARRAY(SELECT t.lexeme FROM unnest(keyword_document($2)) t)))::int AS question, count(*)::int AS "all"
       FROM keyword_postings WHERE workspace_id = $3 AND knowledge_base_id = $1`,
      [newer, query, workspaceId],
    );
    const { question, all } = counts.rows[0]!;
    assert.ok(found.ranking.length > 0 && question > 0 && all > 10 * question, JSON.stringify({ question, all }));
    // The question's postings, and a lookup per candidate and lexeme at most: far fewer than all.
    assert.ok(reads > 0, 'the search was counted');
    assert.ok(reads <= 3 * question, `${reads} index entries read for ${question} postings of the question's lexemes (${all} in the knowledge base)`);
  });

  test('the per-lexeme statistics equal a recount, and their bounds hold every posting; a deleted knowledge base leaves none', async () => {
    const kb = await createKnowledgeBase(server, token);
    const records = corpus('stat', 80, 5);
    await ingest(server, token, kb, records);
    await ingest(server, token, kb, [...records.slice(0, 10).map((record) => ({ ...record, content: `${record.content} ${WORDS[3]}` })), ...records.slice(10, 30).map((record) => ({ id: record.id, deleted: true }))]);
    const { rows } = await server.context.db.query<{ mismatched: number; unbounded: number; lexemes: number }>(
      `WITH stored AS (
         SELECT lexeme, sum(chunks)::int AS df, max(max_impact) AS bound FROM keyword_lexemes WHERE knowledge_base_id = $1 GROUP BY lexeme HAVING sum(chunks) <> 0
       ), counted AS (
         SELECT lexeme, count(*)::int AS df, max(keyword_term_weight(frequency, chunk_length, keyword_reference_length())) AS impact
         FROM keyword_postings WHERE knowledge_base_id = $1 GROUP BY lexeme
       )
       SELECT (SELECT count(*) FROM stored s FULL JOIN counted c USING (lexeme) WHERE s.df IS DISTINCT FROM c.df)::int AS mismatched,
         (SELECT count(*) FROM stored s JOIN counted c USING (lexeme) WHERE s.bound < c.impact)::int AS unbounded,
         (SELECT count(*) FROM counted)::int AS lexemes`,
      [kb],
    );
    assert.deepEqual(rows[0], { mismatched: 0, unbounded: 0, lexemes: rows[0]!.lexemes });
    assert.ok(rows[0]!.lexemes > 30);

    assert.equal((await server.request('DELETE', `/api/v2/knowledge-bases/${kb}`, { token })).status, 204);
    const left = await server.context.db.query<{ count: number }>('SELECT count(*)::int AS count FROM keyword_lexemes WHERE knowledge_base_id = $1', [kb]);
    assert.equal(left.rows[0]!.count, 0);
  });
});
