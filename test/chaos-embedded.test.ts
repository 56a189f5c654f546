/**
 * Chaos on the embedded engine: `lore start` on PGlite is killed with SIGKILL mid-job five times
 * and started again on the same DATA_DIR each time. A restart is not the job's fault, so the job
 * completes (rather than failing with "Gave up after N attempts"), every record is stored once
 * with its chunk, and the job's counters equal its results and the stored rows.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openPglite } from '../src/core/db/pglite.ts';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from './fake-openai.ts';
import { ADMIN_KEY, engine } from './harness.ts';
import { checkFinishedJob, describeProcesses, Findings } from './chaos-checks.ts';
import { freePort, LoreServer, send } from './lore-process.ts';

const TOKEN_SECRET = 'chaos-test-secret-0123456789-0123456789';
// 2,000 one-chunk records: 20 batches of 100, enough for five lives of the server to each store
// some and still leave work after the last kill.
const RECORDS = 2000;
// INGESTION_MAX_ATTEMPTS keeps its default of 5: five kills make six claims of the job, one more
// than a limit that counts claims would allow, while none of them is the job's fault.
const KILLS = 5;
// The first life stores 150 records, every later one 100 more, before its kill: 550 at least
// over five lives; progress shows in steps of a batch, so it was 1,300 in practice (PACE_MS).
const FIRST_KILL_AT = 150;
const KILL_EVERY = 100;
// One embeddings call of 300 ms per batch of 100 keeps the job at about 330 records/s at most, so
// a kill lands within about a batch of the poll that decided it.
const PACE_MS = 300;
// A kill needs two batches of the job left, or the scenario did not happen.
const MIN_LEFT = 200;
// Five times the heartbeat (lease / 3) is still shorter than a restart on a busy machine, so a
// restarted server rarely waits for the lease (were the orphaned job not released at start).
const LEASE_SECONDS = 5;
const POLL_MS = 100;
// Opening a fresh embedded database and migrating it took up to 56 s on a busy 2-core machine
// (test/lore-process.ts); a restart on the same data is quicker, but shares that machine.
const START_MS = 150_000;
const FINISH_MS = 120_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const records = Array.from({ length: RECORDS }, (_, index) => ({
  id: `embedded-${index}`,
  content: `Chaos embedded record ${index}: the courier left parcel ${index * 7} at dock ${index % 40} before noon.`,
}));

if (engine === 'pglite') {
  describe('chaos on the embedded engine: the server killed with SIGKILL mid-job, again and again', () => {
    let fake: FakeOpenAi;
    let dir: string;
    const lives: LoreServer[] = [];

    before(async () => {
      fake = await startFakeOpenAi();
      dir = await mkdtemp(join(tmpdir(), 'lore-chaos-embedded-'));
    });
    after(async () => {
      await Promise.all(lives.map((life) => life.kill()));
      await fake?.close();
      await rm(dir, { recursive: true, force: true });
    });

    test(`killed ${KILLS} times and restarted on the same data: the job completes, every record once, exact counters`, { timeout: 300_000 }, async () => {
      const findings = new Findings();
      const progress: Array<{ processed: number; total: number; status: string }> = [];
      try {
        const env = {
          ...fakeEmbeddingsEnv(fake),
          TOKEN_SECRET,
          ADMIN_API_KEY: ADMIN_KEY,
          BOOTSTRAP: 'never',
          LOG_FORMAT: 'json',
          LOG_LEVEL: 'info',
          DATA_DIR: join(dir, 'data'),
          PORT: String(await freePort()),
          HOST: '127.0.0.1',
          INGESTION_LEASE_SECONDS: String(LEASE_SECONDS),
          INGESTION_POLL_MS: String(POLL_MS),
        };
        const startLife = async () => {
          const life = LoreServer.start({ env, cwd: dir });
          lives.push(life);
          return life.listening(START_MS);
        };
        const base = await startLife();
        const workspace = await send('POST', `${base}/api/v2/admin/workspaces`, { token: ADMIN_KEY, json: { name: 'chaos' } });
        const client = await send('POST', `${base}/api/v2/admin/workspaces/${workspace.body.id}/access-token-clients`, {
          token: ADMIN_KEY,
          json: { name: 'chaos', scopes: ['*'] },
        });
        const grant = await send('POST', `${base}/v2/auth/access-tokens`, { json: { clientId: client.body.clientId, clientSecret: client.body.clientSecret } });
        const token: string = grant.body.access_token;
        const knowledgeBaseId: string = (await send('POST', `${base}/api/v2/knowledge-bases`, { token, json: { name: 'chaos' } })).body.id;
        fake.delayMs = PACE_MS;
        const submitted = await send('POST', `${base}/api/v2/data-ingestion/jobs`, {
          token,
          json: { adapterType: 'generic-json', knowledgeBaseId, data: { records } },
        });
        if (submitted.status !== 202) throw new Error(`submit: ${submitted.status} ${JSON.stringify(submitted.body)}`);
        const jobId: string = submitted.body.jobId;

        /** Polls the job until `until` holds; a kill in between only costs a poll. Fails when the server exits by itself. */
        const waitForJob = async (what: string, until: (job: any) => boolean, timeoutMs: number): Promise<any> => {
          const deadline = Date.now() + timeoutMs;
          const life = lives.at(-1)!;
          while (Date.now() < deadline) {
            if (life.exitStatus) throw new Error(`lore start exited ${JSON.stringify(life.exitStatus)} while waiting for ${what}`);
            const reply = await send('GET', `${base}/api/v2/data-ingestion/jobs/${jobId}`, { token }).catch(() => undefined);
            if (reply?.status === 200) {
              const { processed, total } = reply.body.data.progress;
              progress.push({ processed, total, status: reply.body.status });
              if (until(reply.body)) return reply.body;
            }
            await sleep(POLL_MS);
          }
          throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last progress: ${JSON.stringify(progress.at(-1))}`);
        };

        let killAt = FIRST_KILL_AT;
        for (let kill = 1; kill <= KILLS; kill += 1) {
          const job = await waitForJob(`${killAt} records processed before kill ${kill}`, (found) => found.data.progress.processed >= killAt || found.status !== 'processing', 90_000);
          if (job.status !== 'processing' || job.data.progress.processed > RECORDS - MIN_LEFT) {
            throw new Error(`before kill ${kill} the job was ${job.status} with ${job.data.progress.processed} processed: the scenario needs it mid-job (result: ${JSON.stringify(job.result)})`);
          }
          await lives.at(-1)!.kill();
          console.log(`# kill ${kill} with ${job.data.progress.processed} processed`);
          await startLife();
          killAt = job.data.progress.processed + KILL_EVERY;
        }
        fake.delayMs = 0;
        const job = await waitForJob('the job to finish', (found) => found.status !== 'processing' && found.status !== 'pending', FINISH_MS);

        const drops = progress.filter((sample, index) => index > 0 && sample.processed < progress[index - 1]!.processed);
        findings.none(drops, 'polls where data.progress.processed decreased', (sample) => JSON.stringify(sample));
        findings.none(progress.filter((sample) => sample.processed > sample.total), 'polls where data.progress.processed exceeded total', (sample) => JSON.stringify(sample));

        // PGlite is one process's: the server stops before the test opens its data.
        findings.equal((await lives.at(-1)!.stop()).code, 0, 'exit code of the last server after SIGTERM');
        const db = await openPglite(join(dir, 'data', 'pgdata'));
        try {
          await checkFinishedJob(findings, (sql, values) => db.query(sql, values), job, records, knowledgeBaseId);
        } finally {
          await db.close();
        }
        if (findings.problems.length > 0) throw new Error(findings.report());
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        const found = findings.problems.length > 0 && !message.includes(findings.problems[0]!) ? `\nAlso found:\n${findings.report()}` : '';
        const processes = lives.map((process, index) => ({ name: `life ${index + 1}`, process }));
        throw new Error(`${message}${found}\n\nServer lives:\n${describeProcesses(processes)}`, { cause: error });
      }
    });
  });
}
