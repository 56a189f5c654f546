import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { vectorBytes } from './vector-parameter.ts';

describe(`a Float32Array parameter is bound as a pgvector vector (${engine})`, () => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  test('the same vector as its text, first inside a transaction, then beside a text vector in one statement', async () => {
    const db = server.context.db;
    const small = Float32Array.of(0.1, -2.5, 3e-8, 1 / 3);
    // The first vector this process binds, inside a transaction: PGlite reads vector's type id
    // there, where a read beside the open transaction would wait for it.
    const inTransaction = await db.transaction(async (tx) => {
      const { rows } = await tx.query<{ text: string; dimension: number }>('SELECT $1::vector(4)::text AS text, vector_dims($1::vector) AS dimension', [small]);
      return rows[0]!;
    });
    assert.deepEqual(inTransaction, { text: '[0.1,-2.5,3e-08,0.33333334]', dimension: 4 });

    let seed = 7;
    const next = () => ((seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5) * 0.3;
    const large = Float32Array.from({ length: 512 }, next);
    const { rows } = await db.query<{ same: boolean; distance: number; back: string }>(
      'SELECT $1::vector(512) = $2::vector(512) AS same, $1::vector(512) <=> $2::vector(512) AS distance, $1::vector(512)::text AS back',
      [large, `[${Array.prototype.join.call(large, ',')}]`],
    );
    assert.equal(rows[0]!.same, true);
    assert.equal(Number(rows[0]!.distance), 0);
    const back = rows[0]!.back.slice(1, -1).split(',').map(Number);
    assert.deepEqual(Float32Array.from(back), large);
  });

  test("a vector of another dimension than the statement's cast is refused, not truncated", async () => {
    await assert.rejects(server.context.db.query('SELECT $1::vector(3) AS v', [Float32Array.of(1, 2)]), /expected 3 dimensions, not 2/);
  });
});

test('the binary form is vector_recv\'s: dimension and an unused word as int16, then big-endian float4s', () => {
  assert.deepEqual([...vectorBytes(Float32Array.of(1, -2))], [0, 2, 0, 0, 0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0]);
});
