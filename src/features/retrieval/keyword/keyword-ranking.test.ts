import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../../test/fake-openai.ts';
import { engine, startTestServer, type TestServer } from '../../../../test/harness.ts';
import { createKnowledgeBase, ingest, markdownDocument, type GenericRecord } from '../../../../test/ingestion.ts';
import { random } from '../../../../test/random.ts';
import { BM25_B, BM25_K1 } from './bm25.ts';
import { exhaustiveKeywordSearch, keywordSearch } from './keyword-search.ts';
import { PostingLists } from './posting-lists.ts';

/**
 * A document of the tests: its words are distinct English nouns that are no stop words and keep
 * their own stem, so that its BM25 statistics can be counted by hand: every word is one token.
 */
type Doc = { id: string; title: string; content: string };

// How far the SQL and TypeScript scores of a chunk may be apart. Both compute each posting's
// weight in the same float operations and round the sum to 9 decimals alike, but they add a
// chunk's terms in another order (SQL in the executor's, TypeScript in the lists' bound order), and
// float addition is not associative: the sums may differ in their last bits (about 1e-15), which
// only matters when one lies that close to a half unit and the two round to neighbouring units,
// 1e-9 apart; the half more covers the error of subtracting two such doubles. On this corpus all
// 1,529 scores agree to the last digit. Raising k1 by 0.01 on one side moved the first score by
// 1e-3 (in SQL) to 8e-3 (in TypeScript), so a change of the formula on one side shows.
const SCORE_TOLERANCE = 1.5e-9;
// More than the chunks of the corpus below: the rankings hold every chunk holding a question lexeme.
const EVERY_CHUNK = 10_000;

/**
 * Documents of varied shape for comparing the rankers: help-centre Markdown of several chunks,
 * and short records with stems, dotted names, decimals, repeated words and seeded random lengths.
 */
function variedCorpus(seed: number): GenericRecord[] {
  const next = random(seed);
  const vocabulary = ['refund', 'refunds', 'refunded', 'invoice', 'invoicing', 'payment', 'password', 'reset', 'export', 'webhook', 'retry', 'limit', 'quota', 'token', 'scope'];
  const records: GenericRecord[] = Array.from({ length: 12 }, (_, index) => ({ id: `guide-${seed}-${index}`, title: `Guide ${index}`, content: markdownDocument(seed * 100 + index, 600 + index * 150), contentType: 'markdown' }));
  for (let index = 0; index < 40; index += 1) {
    const words = Array.from({ length: 1 + Math.floor(next() * 30) }, () => vocabulary[Math.floor(next() ** 2 * vocabulary.length)]!);
    records.push({ id: `note-${seed}-${index}`, title: index % 5 === 0 ? 'Refund policy' : `Note ${index}`, content: words.join(' ') });
  }
  records.push(
    { id: `code-${seed}`, title: 'Paths', content: 'Call os.path.join before copy.deepcopy; pi is 3.14 and the retry limit 5.' },
    { id: `repeat-${seed}`, title: 'Refund', content: 'refund refund refund refund refund' },
  );
  return records;
}

/** Questions of every kind: one word, common and rare words mixed, long, repeated, dotted, stop words only, unknown words. */
const VARIED_QUESTIONS = [
  'refund',
  'How do I get a refund for a failed payment?',
  'invoice refunds',
  'billing settings audit log',
  'Administrators can change shipping rules at any time',
  'refund refund refunded',
  'os.path.join deepcopy',
  'retry limit 3.14',
  'webhooks security exports pricing support limits accounts',
  'what is the',
  'zeppelin',
  'password reset zeppelin',
];

const words = (doc: Doc) => `${doc.title} ${doc.content}`.toLowerCase().split(/\s+/);

/** BM25 of each document for a query, computed here from the words alone, as the ranking must. */
function expectedScores(corpus: Doc[], query: string): Map<string, number> {
  const terms = [...new Set(query.toLowerCase().split(/\s+/))];
  const average = corpus.reduce((sum, doc) => sum + words(doc).length, 0) / corpus.length;
  const scores = new Map<string, number>();
  for (const doc of corpus) {
    const tokens = words(doc);
    let score = 0;
    for (const term of terms) {
      const frequency = tokens.filter((token) => token === term).length;
      if (frequency === 0) continue;
      const df = corpus.filter((other) => words(other).includes(term)).length;
      const idf = Math.log(1 + (corpus.length - df + 0.5) / (df + 0.5));
      score += (idf * frequency * (BM25_K1 + 1)) / (frequency + BM25_K1 * (1 - BM25_B + (BM25_B * tokens.length) / average));
    }
    if (score > 0) scores.set(doc.id, score);
  }
  return scores;
}

describe(`keyword retrieval ranks by BM25 (${engine})`, () => {
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

  async function keyword(kb: string, query: string, requestToken = token): Promise<{ recordId: string; keywordScore: number; score: number }[]> {
    const answer = await server.request('POST', `/api/v2/knowledge-bases/${kb}/retrieve`, { token: requestToken, body: { query, mode: 'keyword', topK: 100 } });
    assert.equal(answer.status, 200, answer.text);
    return answer.body.results;
  }

  /**
   * The results must be the documents BM25 scores, each with its BM25 score, best first (documents
   * of equal score in any order). Returns the record ids in rank order.
   */
  async function assertBm25(kb: string, corpus: Doc[], query: string, requestToken = token): Promise<string[]> {
    const results = await keyword(kb, query, requestToken);
    const expected = expectedScores(corpus, query);
    assert.deepEqual(results.map((result) => result.recordId).sort(), [...expected.keys()].sort());
    results.forEach((result, index) => {
      const score = expected.get(result.recordId)!;
      assert.ok(Math.abs(result.keywordScore - score) < 1e-9, `${result.recordId}: ${result.keywordScore} against ${score}`);
      assert.equal(result.score, result.keywordScore);
      if (index > 0) assert.ok(results[index - 1]!.keywordScore >= result.keywordScore, 'best first');
    });
    return results.map((result) => result.recordId);
  }

  const fillers = (count: number, term: string): Doc[] =>
    Array.from({ length: count }, (_, index) => ({ id: `filler-${term}-${index}`, title: 'Notebook', content: `${term} pencil eraser ${index}` }));

  test('a rare term outweighs a frequent one (idf), scores are exact BM25', async () => {
    const kb = await createKnowledgeBase(server, token);
    // "invoice" is in 11 of 12 documents, "chargeback" in one. Without idf (ts_rank_cd), the
    // document with two occurrences of the frequent term would come first.
    const corpus: Doc[] = [
      ...fillers(10, 'invoice'),
      { id: 'frequent', title: 'Invoice', content: 'invoice reminder' },
      { id: 'rare', title: 'Dispute', content: 'chargeback reminder' },
    ];
    await ingest(server, token, kb, corpus);
    const ranking = await assertBm25(kb, corpus, 'invoice chargeback');
    assert.deepEqual(ranking.slice(0, 2), ['rare', 'frequent']);
  });

  test('longer chunks are normalized by their length', async () => {
    const kb = await createKnowledgeBase(server, token);
    const corpus: Doc[] = [
      { id: 'long', title: 'Orchard', content: 'kiwi apple banana cherry grape lemon mango melon orange papaya peach pear plum quince' },
      { id: 'short', title: 'Orchard', content: 'kiwi apple' },
      { id: 'other', title: 'Garage', content: 'hammer wrench' },
    ];
    await ingest(server, token, kb, corpus);
    assert.deepEqual(await assertBm25(kb, corpus, 'kiwi'), ['short', 'long']);
  });

  test('updated and deleted entries stop counting in document frequencies and lengths', async () => {
    const kb = await createKnowledgeBase(server, token);
    let corpus: Doc[] = [
      ...fillers(6, 'ledger'),
      { id: 'target', title: 'Audit', content: 'ledger ledger receipt' },
      { id: 'changing', title: 'Audit', content: 'ledger receipt voucher' },
    ];
    await ingest(server, token, kb, corpus);
    await assertBm25(kb, corpus, 'ledger receipt');

    // An update that drops "ledger" and grows the document; a deletion by record; one through the entries API.
    const changed: Doc = { id: 'changing', title: 'Audit', content: 'receipt voucher stamp folder binder' };
    const job = await ingest(server, token, kb, [changed, { id: 'filler-ledger-0', deleted: true }]);
    assert.equal(job.result.entriesUpdated, 1);
    assert.equal(job.result.entriesDeleted, 1);
    const entries = await server.request('GET', `/api/v2/knowledge-bases/${kb}/entries?limit=100`, { token });
    const victim = entries.body.entries.find((entry: { recordId: string }) => entry.recordId === 'filler-ledger-1');
    assert.equal((await server.request('DELETE', `/api/v2/knowledge-bases/${kb}/entries/${victim.id}`, { token })).status, 204);
    corpus = corpus.filter((doc) => !['filler-ledger-0', 'filler-ledger-1', 'changing'].includes(doc.id)).concat(changed);
    await assertBm25(kb, corpus, 'ledger receipt');
  });

  test("another workspace's and another knowledge base's documents change neither idf nor results", async () => {
    const corpus: Doc[] = [
      ...fillers(3, 'harbor'),
      { id: 'lighthouse', title: 'Coast', content: 'lighthouse harbor beacon' },
    ];
    const kb = await createKnowledgeBase(server, token);
    await ingest(server, token, kb, corpus);
    const before = await keyword(kb, 'lighthouse harbor');

    // The same words, many times over, in a second knowledge base of this workspace and in another workspace.
    const crowd: Doc[] = Array.from({ length: 20 }, (_, index) => ({ id: `crowd-${index}`, title: 'Coast', content: `lighthouse harbor lighthouse ${index}` }));
    await ingest(server, token, await createKnowledgeBase(server, token), crowd);
    const other = await server.tenant();
    const otherKb = await createKnowledgeBase(server, other.token);
    await ingest(server, other.token, otherKb, crowd);

    assert.deepEqual(await keyword(kb, 'lighthouse harbor'), before);
    await assertBm25(kb, corpus, 'lighthouse harbor');
    await assertBm25(otherKb, crowd, 'lighthouse harbor', other.token);
    // The other workspace's token cannot search this knowledge base at all.
    assert.equal((await server.request('POST', `/api/v2/knowledge-bases/${kb}/retrieve`, { token: other.token, body: { query: 'lighthouse' } })).status, 404);
  });

  test('the statistics equal a recount from the chunks after writes, updates and deletions; a deleted knowledge base leaves none', async () => {
    const kb = await createKnowledgeBase(server, token, { chunkSize: 200, chunkOverlap: 20 });
    const long = (seed: number) => Array.from({ length: 60 }, (_, index) => ['river', 'canyon', 'meadow', 'glacier', 'valley'][(index * seed) % 5]).join(' ');
    await ingest(server, token, kb, [1, 2, 3, 4].map((seed) => ({ id: `doc-${seed}`, title: `Landscape ${seed}`, content: long(seed) })));
    await ingest(server, token, kb, [
      { id: 'doc-1', title: 'Landscape one', content: long(7) },
      { id: 'doc-2', deleted: true },
    ]);
    const { db } = server.context;
    const recount = await db.query<{ missing: number; extra: number; totals_match: boolean }>(
      `WITH expected AS (
         SELECT c.knowledge_base_id, t.lexeme, c.id AS chunk_id, array_length(t.positions, 1) AS frequency,
           sum(array_length(t.positions, 1)) OVER (PARTITION BY c.id) AS chunk_length
         FROM chunks c, unnest(c.search_vector) t WHERE c.knowledge_base_id = $1
       ), stored AS (
         SELECT knowledge_base_id, lexeme, chunk_id, frequency, chunk_length FROM keyword_postings WHERE knowledge_base_id = $1
       )
       SELECT (SELECT count(*) FROM (SELECT * FROM expected EXCEPT SELECT * FROM stored) m)::int AS missing,
         (SELECT count(*) FROM (SELECT * FROM stored EXCEPT SELECT * FROM expected) e)::int AS extra,
         (SELECT (sum(chunks)::bigint, sum(tokens)::bigint) FROM keyword_totals WHERE knowledge_base_id = $1)
           = (SELECT (count(DISTINCT chunk_id), sum(frequency)) FROM expected) AS totals_match`,
      [kb],
    );
    assert.deepEqual(recount.rows[0], { missing: 0, extra: 0, totals_match: true });
    const chunks = await db.query<{ count: number }>('SELECT count(*)::int AS count FROM chunks WHERE knowledge_base_id = $1', [kb]);
    assert.ok(chunks.rows[0]!.count > 6, 'the documents span several chunks each');

    assert.equal((await server.request('DELETE', `/api/v2/knowledge-bases/${kb}`, { token })).status, 204);
    const left = await db.query<{ postings: number; totals: number }>(
      `SELECT (SELECT count(*) FROM keyword_postings WHERE knowledge_base_id = $1)::int AS postings,
         (SELECT count(*) FROM keyword_totals WHERE knowledge_base_id = $1)::int AS totals`,
      [kb],
    );
    assert.deepEqual(left.rows[0], { postings: 0, totals: 0 });
  });
  test('the SQL rankers and the TypeScript ranker give every chunk the same score, in the same order', async () => {
    const { db } = server.context;
    const first = await createKnowledgeBase(server, token, { chunkSize: 300, chunkOverlap: 30 });
    const second = await createKnowledgeBase(server, token);
    const records = variedCorpus(3);
    await ingest(server, token, first, records);
    await ingest(server, token, second, variedCorpus(5));
    // After an update and deletions, so that frequencies, lengths and document frequencies changed.
    await ingest(server, token, first, [
      ...records.slice(12, 20).map((record) => ({ ...record, content: `${record.content} quota quota scope` })),
      ...records.slice(20, 26).map((record) => ({ id: record.id, deleted: true })),
    ]);
    // Every list held before the questions, so that each is ranked from memory (none waits).
    const lists = new PostingLists({ waitMs: 0 });
    const { rows: keys } = await db.query<{ knowledgeBaseId: string; lexeme: string }>(
      'SELECT DISTINCT knowledge_base_id AS "knowledgeBaseId", lexeme FROM keyword_lexemes WHERE workspace_id = $1 AND knowledge_base_id = ANY($2::uuid[])',
      [workspaceId, [first, second]],
    );
    await lists.load(db, workspaceId, keys);

    let compared = 0;
    for (const knowledgeBaseIds of [[first], [first, second]]) {
      for (const query of VARIED_QUESTIONS) {
        const { rows } = await db.query<{ chunks: number }>(
          `SELECT count(DISTINCT p.chunk_id)::int AS chunks FROM unnest(keyword_document($3)) t
           JOIN keyword_postings p ON p.workspace_id = $1 AND p.knowledge_base_id = ANY($2::uuid[]) AND p.lexeme = t.lexeme`,
          [workspaceId, knowledgeBaseIds, query],
        );
        // Every chunk holding a lexeme of the question, and a top 10, where both prune by MaxScore.
        for (const k of [EVERY_CHUNK, 10]) {
          const label = `"${query}" over ${knowledgeBaseIds.length} knowledge base(s), top ${k}`;
          const input = { workspaceId, knowledgeBaseIds, query, topK: k, mode: 'keyword' as const };
          const hits = lists.counts.hits;
          const typescript = (await keywordSearch(db, input, k, lists)).ranking;
          // (A question none of whose lexemes a chunk holds needs no list.)
          assert.equal(lists.counts.hits - hits, rows[0]!.chunks > 0 ? 1 : 0, `${label}: ranked from the lists in memory`);
          assert.equal(typescript.length, Math.min(k, rows[0]!.chunks), `${label}: every chunk holding a lexeme is scored`);
          const sql = { keyword_top_k: (await keywordSearch(db, input, k)).ranking, exhaustive: (await exhaustiveKeywordSearch(db, input, k)).ranking };
          for (const [ranker, ranking] of Object.entries(sql)) {
            assert.deepEqual(
              typescript.map((chunk) => chunk.id),
              ranking.map((chunk) => chunk.id),
              `${label}: ${ranker} orders as the TypeScript ranker`,
            );
            typescript.forEach((chunk, index) => {
              const difference = Math.abs(chunk.score - ranking[index]!.score);
              assert.ok(difference <= SCORE_TOLERANCE, `${label}: chunk ${chunk.id} scores ${chunk.score} in TypeScript, ${ranking[index]!.score} in ${ranker}`);
            });
          }
          if (k === EVERY_CHUNK) compared += typescript.length;
        }
      }
    }
    assert.ok(compared > 1000, `${compared} chunk scores compared`);
  });
});
