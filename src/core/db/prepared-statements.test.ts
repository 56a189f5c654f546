import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';

// A statement with a parameter in its projection and in its filter, so that a result computed
// with the values of an earlier call would show.
const SQUARES = 'SELECT n, n * $1::int AS product FROM generate_series(1, $2::int) n WHERE n % $1::int = 0 ORDER BY n';

describe(`statements run with { prepare: true } (${engine})`, () => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  test('answer as the same statement unprepared, whatever the values of earlier calls', async () => {
    const db = server.context.db;
    // More calls than the pool has connections, and more than the 5 after which PostgreSQL may
    // switch a prepared statement to its generic plan.
    for (let call = 0; call < 24; call += 1) {
      const values = [1 + (call % 4), 10 + call];
      const prepared = await db.query(SQUARES, values, { prepare: true });
      const plain = await db.query(SQUARES, values);
      assert.deepEqual(prepared, plain);
      assert.equal(prepared.rows.length, Math.floor(values[1]! / values[0]!));
    }
  });

  test('are parsed once per connection (PGlite: once in its one session)', async () => {
    const listed = await server.context.db.transaction(async (tx) => {
      await tx.query(SQUARES, [2, 8], { prepare: true });
      const again = await tx.query(SQUARES, [3, 9], { prepare: true });
      assert.deepEqual(again.rows, [
        { n: 3, product: 9 },
        { n: 6, product: 18 },
        { n: 9, product: 27 },
      ]);
      await tx.query('SELECT $1::int AS unprepared', [1]);
      const { rows } = await tx.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements ORDER BY statement');
      return rows.map((row) => row.statement);
    });
    // The connection (PGlite's one session) keeps the statement under one name, and nothing of the unprepared one.
    assert.deepEqual(listed, [SQUARES]);
  });

  test('a statement that fails leaves its name usable for the next call', async () => {
    const db = server.context.db;
    const division = 'SELECT 10 / $1::int AS quotient';
    await assert.rejects(db.query(division, [0], { prepare: true }), /division by zero/);
    assert.deepEqual((await db.query(division, [5], { prepare: true })).rows, [{ quotient: 2 }]);
  });
});
