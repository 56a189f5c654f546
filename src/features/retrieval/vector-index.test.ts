import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../test/fake-openai.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { createKnowledgeBase, ingest } from '../../../test/ingestion.ts';

// Distinct words per record, so that the fake encoder's bag-of-words vectors tell them apart.
const words = ['harbour', 'lantern', 'meadow', 'quarry', 'saddle', 'thimble', 'violin', 'walnut', 'anchor', 'biscuit', 'canyon', 'dolphin'];
const records = words.map((word, index) => ({ id: `record-${index}`, title: `About the ${word}`, content: `The ${word} is kept beside the ${words[(index + 5) % words.length]} in room ${index}.` }));

/** The chunk indexes of the chunks table: name and definition. */
async function chunkIndexes(server: TestServer): Promise<Map<string, string>> {
  const { rows } = await server.context.db.query<{ indexname: string; indexdef: string }>(
    "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'chunks' AND indexname LIKE 'chunks_embedding%'",
  );
  return new Map(rows.map((row) => [row.indexname, row.indexdef]));
}

/**
 * The pgvector index each dimension gets on PostgreSQL (vector-index.ts): its name and operator
 * class, or none. PGlite has none: its own index (pglite-vectors.ts) takes every dimension.
 */
const expectedIndex: Record<number, [string, string] | undefined> =
  engine === 'pglite'
    ? {}
    : {
        64: ['chunks_embedding_hnsw_64', 'vector(64)) vector_cosine_ops'],
        3072: ['chunks_embedding_halfvec_3072', 'halfvec(3072)) halfvec_cosine_ops'],
        4096: undefined,
      };

/**
 * Vector search of every dimension an embeddings API may give: on PostgreSQL pgvector indexes
 * `vector` up to 2,000 dimensions and `halfvec` up to 4,000, and above that lore searches without
 * an index; PGlite's own index takes every dimension. A
 * chunk's score stays the full-precision cosine of its stored vector throughout.
 */
for (const dimension of [64, 3072, 4096]) {
  describe(`vector search of ${dimension} dimensions (${engine})`, () => {
    let server: TestServer;
    let fake: FakeOpenAi;
    let token: string;

    before(async () => {
      fake = await startFakeOpenAi();
      server = await startTestServer(fakeEmbeddingsEnv(fake, dimension));
      ({ token } = await server.tenant());
    });
    after(async () => {
      await server.close();
      await fake.close();
    });

    test('the job completes with the index of the dimension, and the nearest chunk comes first at full precision', async () => {
      const kb = await createKnowledgeBase(server, token);
      const job = await ingest(server, token, kb, records);
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.deepEqual(job.data.progress, { processed: records.length, total: records.length, successful: records.length, failed: 0, skipped: 0 });

      const indexes = await chunkIndexes(server);
      const expected = expectedIndex[dimension];
      assert.deepEqual([...indexes.keys()], expected ? [expected[0]] : []);
      if (expected) assert.ok(indexes.get(expected[0])!.includes(`(embedding)::${expected[1]}) WHERE (embedding_dimension = ${dimension})`), indexes.get(expected[0]));

      const target = records[7]!;
      const answer = await server.request('POST', `/api/v2/knowledge-bases/${kb}/retrieve`, {
        token,
        body: { query: `${target.title} ${target.content}`, mode: 'vector', topK: 5 },
      });
      assert.equal(answer.status, 200, answer.text);
      const results = answer.body.results as { recordId: string; score: number; vectorScore: number }[];
      assert.equal(results.length, 5);
      assert.equal(results[0]!.recordId, target.id);
      // The same text gives the same vector: its cosine is 1 up to float4 rounding, which a halfvec
      // cosine would miss by about 5e-4.
      assert.ok(Math.abs(results[0]!.vectorScore - 1) < 1e-6, `cosine ${results[0]!.vectorScore}`);
      for (const [index, result] of results.entries()) {
        assert.equal(result.score, result.vectorScore, 'a vector search scores by the stored cosine');
        if (index > 0) assert.ok(results[index - 1]!.score >= result.score, 'best first');
      }
    });
  });
}
