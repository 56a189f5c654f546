/**
 * PGlite's checkpoints (embedded-checkpoint.ts). The embedded engine is opened directly in a
 * directory of the test's own, on either engine's pass: PostgreSQL's checkpointer needs no help.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import type { Db } from './db.ts';
import { checkpointWhereDue, walState } from './embedded-checkpoint.ts';
import { openPglite } from './pglite.ts';

const MB = 2 ** 20;

/** Writes about `megabytes` of WAL: rows of about 2 KB (below the TOAST threshold, so not compressed). */
async function writeWal(db: Db, megabytes: number): Promise<void> {
  for (let written = 0; written < megabytes; written += 1) {
    await db.query(`INSERT INTO filler (body) SELECT repeat(md5(random()::text), 60) FROM generate_series(1, 500)`);
  }
}

/** The bytes of the WAL segments in `pg_wal`. */
async function walOnDisk(dataDir: string): Promise<number> {
  const dir = join(dataDir, 'pg_wal');
  const segments = (await readdir(dir)).filter((name) => /^[0-9A-F]{24}$/.test(name));
  const sizes = await Promise.all(segments.map(async (name) => (await stat(join(dir, name))).size));
  return sizes.reduce((sum, size) => sum + size, 0);
}

describe('PGlite checkpoints where the server would', () => {
  let root: string;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'lore-checkpoint-'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  test("past the limit a checkpoint lets the WAL go, and pg_wal stops growing with the writes; the server's limit is 539 MB", async () => {
    const dataDir = join(root, 'rounds');
    // A check that never comes on its own: this test calls it.
    const db = await openPglite(dataDir, { checkpoint: { everyMs: 3_600_000, limit: Infinity } });
    try {
      // max_wal_size / (1 + checkpoint_completion_target) with PGlite's settings.
      assert.equal(Math.round((await walState(db)).limit / MB), 539);
      await db.exec('CREATE TABLE filler (body text)');
      assert.equal(await checkpointWhereDue(db, 8 * MB), 0, 'nothing due on a new database');
      const onDisk: number[] = [];
      for (let round = 0; round < 3; round += 1) {
        await writeWal(db, 16);
        const since = (await walState(db)).sinceCheckpoint;
        assert.ok(since > 8 * MB, `${since} bytes of WAL written`);
        assert.equal(await checkpointWhereDue(db, 8 * MB), since);
        assert.ok((await walState(db)).sinceCheckpoint < MB, 'the checkpoint is at the end of the WAL');
        assert.equal(await checkpointWhereDue(db, 8 * MB), 0, 'and nothing is due right after it');
        onDisk.push(await walOnDisk(dataDir));
      }
      // Without checkpoints every round adds its 16 MB and more; with them the old segments are recycled.
      assert.ok(onDisk[2]! <= onDisk[0]! + 16 * MB, `pg_wal after each round: ${onDisk.map((bytes) => Math.round(bytes / MB)).join(', ')} MB`);
    } finally {
      await db.close();
    }
  });

  test('an open database checkpoints by itself once its WAL passes the limit, says so in its log, and its rows are intact after a reopen', async () => {
    const dataDir = join(root, 'timer');
    const logged: Record<string, unknown>[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => logged.push(JSON.parse(line) as Record<string, unknown>) });
    const db = await openPglite(dataDir, { log, checkpoint: { everyMs: 5, limit: 8 * MB } });
    try {
      await db.exec('CREATE TABLE filler (body text)');
      await writeWal(db, 16);
      const deadline = Date.now() + 10_000;
      while ((await walState(db)).sinceCheckpoint >= 8 * MB && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok((await walState(db)).sinceCheckpoint < 8 * MB, 'checkpointed within 10 s');
      // Exactly one: the checks every 5 ms come while the 1 MB inserts hold the thread, and each
      // would checkpoint the same WAL again if a check did not wait for the one before it.
      assert.deepEqual(logged.map((line) => [line.level, line.msg]), [[30, 'embedded database checkpointed']]);
      const { walMb, ms } = logged[0] as { walMb: number; ms: number };
      assert.ok(walMb >= 8 && walMb < 32 && ms >= 0, JSON.stringify(logged[0]));
    } finally {
      await db.close();
    }
    const reopened = await openPglite(dataDir);
    try {
      const { rows } = await reopened.query<{ count: number }>('SELECT count(*)::int AS count FROM filler');
      assert.equal(rows[0]!.count, 16 * 500);
    } finally {
      await reopened.close();
    }
  });
});
