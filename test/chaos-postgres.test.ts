/**
 * Chaos on PostgreSQL, with real processes on a private cluster: one `lore start` (no ingestion
 * workers of its own) and two `lore worker`s, a job of thousands of records, and a query load of
 * a few clients that records every answer.
 *
 * - A: the database restarts mid-job. B: it stops mid-job, stays down 20 s, and starts again.
 *   While it is down every data route answers 503 in the spec's error shape with Retry-After,
 *   /healthz stays 200 and /readyz answers 503; afterwards, without restarting any lore process,
 *   queries answer 200 again and the job completes.
 * - C: the worker that owns the job is frozen with SIGSTOP for 16 s, three times, the first time
 *   inside a record's transaction; the other worker takes the job over within the lease.
 *
 * Throughout, no lore process exits and no answer is a network error or a 500. At the end every
 * record is stored exactly once with its chunk and vector, and the job's counters equal its
 * results and the stored rows.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from './fake-openai.ts';
import { ADMIN_KEY, engine } from './harness.ts';
import { freePort, LoreServer } from './lore-process.ts';
import { PrivatePostgres } from './private-postgres.ts';
import { checkFinishedJob, describeProcesses, Findings } from './chaos-checks.ts';

const TOKEN_SECRET = 'chaos-test-secret-0123456789-0123456789';
// Issue 8's lease: short enough that a takeover fits well inside a 16 s stall.
const LEASE_SECONDS = 6;
// An idle worker looks for jobs 5 times a second: a takeover waits at most 0.2 s past the lease.
const POLL_MS = 200;

// Case A and B: 3,000 one-chunk records are 30 batches of 100 (the worker's batch size). With one
// embeddings call of 500 ms per batch the job runs at about 200 records/s, so it outlasts a
// restart, a lost lease and the wait that follows (about 12 s) and is at most half done when the
// outage begins.
const RECORDS_AB = 3000;
const PACE_AB_MS = 500;
const OUTAGE_MS = 20_000;
// Three batches stored: the job is under way on a worker before the first blow.
const UNDER_WAY = 300;
// Two batches more than before a blow: the job was resumed, by either worker.
const RESUMED = 200;
// Once the database accepts connections again, a pool reconnects on its next use: a query answers
// 200 within a second; 30 s is the limit for a busy machine.
const BACK_MS = 30_000;
// A job interrupted mid-batch waits for its lease to expire before it is claimed again.
const RESUME_MS = LEASE_SECONDS * 1000 + 30_000;

// Case C: the owner is frozen for lease + 10 s, so that a takeover held up by the frozen worker's
// locks (which end only when it resumes) cannot pass for one that merely came late.
const STALL_MS = 16_000;
const STALLS = 3;
// Lease, one poll, the claim and a first batch (one 1 s embeddings call) plus 5 s of slack for a
// busy 2-core machine: still 3 s before the frozen worker resumes.
const TAKEOVER_MS = LEASE_SECONDS * 1000 + 7_000;
// One second per batch (about 100 records/s): each stall lets the other worker write for about
// 10 s, so 4,000 records outlast three stalls and leave work for the last takeover to show.
const RECORDS_C = 4000;
const PACE_C_MS = 1000;
// A stall is only worth starting while the job has this much left: 4 s of work at the pace above.
const STALL_MIN_LEFT = 400;
// How long to look for a worker inside a record's transaction before the restart, the outage or
// a freeze goes ahead anyway: a batch's writes take a few hundred ms of every 0.5 to 1 s, so this
// is dozens of chances.
const CATCH_TRANSACTION_MS = 15_000;

// Three query clients and two probes keep every route busy without starving the 2 cores that run
// the database, three lore processes and this test; each query waits for one embeddings call.
const QUERY_CLIENTS = 3;
const QUERY_PAUSE_MS = 100;
const JOB_POLL_MS = 400;
const PROBE_MS = 500;
// An answer slower than this counts as a failure: a route must not hang while the database is away.
const REQUEST_TIMEOUT_MS = 20_000;
// After the last chaos the job runs without an embedding delay: only the writes are left.
const FINISH_MS = 120_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type GenericRecord = { id: string; content: string };

/** Records with distinct texts short enough to be one chunk each, so stored counts are exact. */
function makeRecords(prefix: string, count: number): GenericRecord[] {
  return Array.from({ length: count }, (_, index) => ({
    id: `${prefix}-${index}`,
    content: `Chaos ${prefix} record ${index}: the courier left parcel ${index * 7} at dock ${index % 40} before noon.`,
  }));
}

/** One answer (or network failure) seen by the test. */
type Outcome = {
  route: 'query' | 'job' | 'healthz' | 'readyz' | 'setup';
  started: number;
  ended: number;
  status?: number;
  retryAfter?: string | null;
  body?: any;
  error?: string;
};

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { code?: string; message?: string } | undefined;
  return `${error.name}: ${error.message}${cause ? ` (${cause.code ?? cause.message})` : ''}`;
}

/** Sends one request and records how it ended; never throws. */
async function call(route: Outcome['route'], method: string, url: string, options: { token?: string; json?: unknown } = {}): Promise<Outcome> {
  const started = Date.now();
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  try {
    const response = await fetch(url, {
      method,
      headers,
      body: options.json === undefined ? undefined : JSON.stringify(options.json),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    let body: unknown = text;
    if (response.headers.get('content-type')?.includes('json')) {
      try {
        body = JSON.parse(text);
      } catch {
        // Kept as text: the shape check reports it.
      }
    }
    return { route, started, ended: Date.now(), status: response.status, retryAfter: response.headers.get('retry-after'), body };
  } catch (error) {
    return { route, started, ended: Date.now(), error: describeError(error) };
  }
}

/** An outcome in one line for a failure message, timed like the processes' log lines. */
function show(outcome: Outcome): string {
  const what = outcome.error ?? `${outcome.status} ${JSON.stringify(outcome.body).slice(0, 300)} retry-after=${outcome.retryAfter}`;
  return `${outcome.route} sent ${new Date(outcome.started).toISOString()}: ${what}`;
}

/** Why `outcome` is not a 503 in the spec's error shape with Retry-After (undefined when it is). */
function notUnavailable(outcome: Outcome, path: string): string | undefined {
  if (outcome.error) return 'a network error';
  if (outcome.status !== 503) return `status ${outcome.status}`;
  const body = outcome.body;
  if (typeof body !== 'object' || body === null) return 'a body that is not JSON';
  const wrong: string[] = [];
  if (body.statusCode !== 503) wrong.push('statusCode');
  if (body.error !== 'Service Unavailable') wrong.push('error');
  if (typeof body.message !== 'string' || body.message.length === 0) wrong.push('message');
  if (typeof body.timestamp !== 'string' || Number.isNaN(Date.parse(body.timestamp)) || new Date(body.timestamp).toISOString() !== body.timestamp) {
    wrong.push('timestamp');
  }
  if (body.path !== path) wrong.push(`path (${body.path} instead of ${path})`);
  // Retry-After is delta-seconds or an HTTP date (RFC 9110, 10.2.3).
  const retryAfter = outcome.retryAfter ?? '';
  if (!/^\d+$/.test(retryAfter) && Number.isNaN(Date.parse(retryAfter))) wrong.push('Retry-After header');
  return wrong.length > 0 ? `a 503 with a wrong ${wrong.join(', ')}` : undefined;
}

/** The lore processes of one test. */
type Lore = { base: string; processes: Array<{ name: string; process: LoreServer }>; server: LoreServer; workers: LoreServer[] };

/** Each process's state, the tail of its stderr and its last warnings and errors. */
function diagnostics(lore: Lore | undefined): string {
  return lore ? describeProcesses(lore.processes) : '';
}

/** Fails at once, naming the process, when any lore process has exited. */
function assertAllRunning(lore: Lore, during: string): void {
  const gone = lore.processes.filter(({ process }) => process.exitStatus);
  if (gone.length > 0) {
    throw new Error(`${gone.map(({ name, process }) => `${name} exited ${JSON.stringify(process.exitStatus)}`).join('; ')} ${during}`);
  }
}

/** Polls `condition` every 100 ms; fails after `timeoutMs`, or as soon as a lore process exits. */
async function waitUntil(lore: Lore, what: string, condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!(await condition())) {
    assertAllRunning(lore, `while waiting for ${what}`);
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
  return Date.now() - started;
}

/**
 * The query clients and the probes of one test: every answer is kept, and the job's last
 * successful poll and its progress over time.
 */
class Traffic {
  readonly outcomes: Outcome[] = [];
  readonly progress: Array<{ at: string; processed: number; total: number; status: string }> = [];
  job: any;
  private running = true;
  private readonly loops: Promise<void>[];

  constructor(base: string, token: string, experienceId: string, jobId: string) {
    const questions = ['Where did the courier leave parcel 70?', 'Which dock had a parcel before noon?', 'What did the courier do at dock 12?'];
    this.loops = [
      ...Array.from({ length: QUERY_CLIENTS }, (_, index) =>
        this.loop(() => call('query', 'POST', `${base}/api/v2/query`, { json: { experienceId, text: questions[index % questions.length] } }), QUERY_PAUSE_MS),
      ),
      this.loop(async () => {
        const outcome = await call('job', 'GET', `${base}/api/v2/data-ingestion/jobs/${jobId}`, { token });
        if (outcome.status === 200) {
          this.job = outcome.body;
          const { processed, total } = outcome.body.data.progress;
          this.progress.push({ at: new Date(outcome.ended).toISOString(), processed, total, status: outcome.body.status });
        }
        return outcome;
      }, JOB_POLL_MS),
      this.loop(() => call('healthz', 'GET', `${base}/healthz`), PROBE_MS),
      this.loop(() => call('readyz', 'GET', `${base}/readyz`), PROBE_MS),
    ];
  }

  private async loop(send: () => Promise<Outcome>, pauseMs: number): Promise<void> {
    while (this.running) {
      this.outcomes.push(await send());
      await sleep(pauseMs);
    }
  }

  /** The job's processed count at its last successful poll. */
  get processed(): number {
    return this.job?.data.progress.processed ?? 0;
  }

  /** Whether a request to `route` sent at or after `since` was answered with `status`. */
  answered(route: Outcome['route'], status: number, since: number): boolean {
    return this.outcomes.some((outcome) => outcome.route === route && outcome.started >= since && outcome.status === status);
  }

  /** Outcomes of `route` sent and answered within [from, to]. */
  within(route: Outcome['route'], from: number, to: number): Outcome[] {
    return this.outcomes.filter((outcome) => outcome.route === route && outcome.started >= from && outcome.ended <= to);
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /** How many answers of each status each route got, e.g. `query 200×812 503×95`. */
  summary(): string {
    const counts = new Map<string, Map<string, number>>();
    for (const outcome of this.outcomes) {
      const byStatus = counts.get(outcome.route) ?? new Map<string, number>();
      const key = outcome.error ? 'error' : String(outcome.status);
      byStatus.set(key, (byStatus.get(key) ?? 0) + 1);
      counts.set(outcome.route, byStatus);
    }
    return [...counts].map(([route, byStatus]) => `${route} ${[...byStatus].map(([key, count]) => `${key}×${count}`).join(' ')}`).join('; ');
  }
}

/** Invariants of the whole run: data routes answer 200 or the spec's 503; /healthz always 200; progress only grows. */
function checkTraffic(findings: Findings, traffic: Traffic, jobId: string): void {
  const paths = { query: '/v2/query', job: `/v2/data-ingestion/jobs/${jobId}` } as const;
  for (const route of ['query', 'job'] as const) {
    const outcomes = traffic.outcomes.filter((outcome) => outcome.route === route);
    findings.none(outcomes.filter((outcome) => outcome.error), `${route}: network errors or time-outs`, show);
    findings.none(outcomes.filter((outcome) => outcome.status !== undefined && outcome.status !== 200 && outcome.status !== 503), `${route}: answers other than 200 or 503`, show);
    findings.none(
      outcomes.filter((outcome) => outcome.status === 503 && notUnavailable(outcome, paths[route])),
      `${route}: 503s not in the spec's shape with Retry-After`,
      (outcome) => `${notUnavailable(outcome, paths[route])}: ${show(outcome)}`,
    );
  }
  findings.none(traffic.outcomes.filter((outcome) => outcome.route === 'healthz' && outcome.status !== 200), '/healthz: answers other than 200', show);
  const drops = traffic.progress.filter((sample, index) => index > 0 && sample.processed < traffic.progress[index - 1]!.processed);
  findings.none(drops, 'data.progress.processed decreased between two polls', (sample) => JSON.stringify(sample));
  findings.none(traffic.progress.filter((sample) => sample.processed > sample.total), 'data.progress.processed exceeded total', (sample) => JSON.stringify(sample));
}

/** While the database was down ([from, to]): data routes 503 in the spec's shape, /healthz 200, /readyz 503. */
function checkOutage(findings: Findings, traffic: Traffic, jobId: string, from: number, to: number): void {
  const expectations = [
    { route: 'query', problem: (outcome: Outcome) => notUnavailable(outcome, '/v2/query') },
    { route: 'job', problem: (outcome: Outcome) => notUnavailable(outcome, `/v2/data-ingestion/jobs/${jobId}`) },
    { route: 'healthz', problem: (outcome: Outcome) => (outcome.status === 200 ? undefined : 'not 200') },
    { route: 'readyz', problem: (outcome: Outcome) => (outcome.status === 503 ? undefined : 'not 503') },
  ] as const;
  for (const { route, problem } of expectations) {
    const outcomes = traffic.within(route, from, to);
    // Several answers of each route inside the outage, or the checks below prove nothing.
    findings.ok(outcomes.length >= 3, () => `only ${outcomes.length} ${route} answer(s) fell inside the outage`);
    findings.none(outcomes.filter((outcome) => problem(outcome)), `during the outage, ${route} answers that break the rule`, (outcome) => `${problem(outcome)}: ${show(outcome)}`);
  }
}

/**
 * Whether a lore process whose application_name is like `pattern` is inside a transaction that
 * has written something (it holds a transaction id, and so row and index locks).
 */
async function writing(db: pg.ClientBase | pg.Pool, pattern: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM pg_stat_activity WHERE application_name LIKE $1 AND backend_xid IS NOT NULL', [pattern]);
  return (rowCount ?? 0) > 0;
}

function expectStatus(outcome: Outcome, status: number, what: string): any {
  if (outcome.status !== status) throw new Error(`${what}: ${show(outcome)}`);
  return outcome.body;
}

/** A workspace, a token with every scope, a knowledge base and a public experience over it. */
async function createTenant(base: string, name: string): Promise<{ token: string; knowledgeBaseId: string; experienceId: string }> {
  const admin = { token: ADMIN_KEY };
  const workspace = expectStatus(await call('setup', 'POST', `${base}/api/v2/admin/workspaces`, { ...admin, json: { name } }), 201, 'workspace');
  const client = expectStatus(
    await call('setup', 'POST', `${base}/api/v2/admin/workspaces/${workspace.id}/access-token-clients`, { ...admin, json: { name, scopes: ['*'] } }),
    201,
    'client',
  );
  const grant = expectStatus(
    await call('setup', 'POST', `${base}/v2/auth/access-tokens`, { json: { clientId: client.clientId, clientSecret: client.clientSecret } }),
    200,
    'token',
  );
  const token: string = grant.access_token;
  const knowledgeBase = expectStatus(await call('setup', 'POST', `${base}/api/v2/knowledge-bases`, { token, json: { name } }), 201, 'knowledge base');
  const experience = expectStatus(
    await call('setup', 'POST', `${base}/api/v2/experiences`, { token, json: { name, knowledgeBaseIds: [knowledgeBase.id] } }),
    201,
    'experience',
  );
  return { token, knowledgeBaseId: knowledgeBase.id, experienceId: experience.id };
}

async function submitJob(base: string, token: string, knowledgeBaseId: string, records: GenericRecord[]): Promise<string> {
  const submitted = await call('setup', 'POST', `${base}/api/v2/data-ingestion/jobs`, {
    token,
    json: { adapterType: 'generic-json', knowledgeBaseId, data: { records } },
  });
  return expectStatus(submitted, 202, 'submit').jobId;
}

if (engine === 'postgres') {
  describe('chaos on PostgreSQL: database restart and outage, stalled worker', () => {
    let fake: FakeOpenAi;
    let cluster: PrivatePostgres | undefined;
    let dir: string;
    const spawned: LoreServer[] = [];

    before(async () => {
      fake = await startFakeOpenAi();
      dir = await mkdtemp(join(tmpdir(), 'lore-chaos-'));
      cluster = await PrivatePostgres.create();
    });
    after(async () => {
      await Promise.all(spawned.map((child) => child.kill()));
      await fake?.close();
      await cluster?.drop();
      await rm(dir, { recursive: true, force: true });
    });

    /** `lore start` (INGESTION_WORKERS=0) and two `lore worker`s; each names itself to PostgreSQL (application_name). */
    async function startLore(): Promise<Lore> {
      const common = {
        ...fakeEmbeddingsEnv(fake),
        TOKEN_SECRET,
        ADMIN_API_KEY: ADMIN_KEY,
        BOOTSTRAP: 'never',
        LOG_FORMAT: 'json',
        LOG_LEVEL: 'info',
        INGESTION_LEASE_SECONDS: String(LEASE_SECONDS),
        INGESTION_POLL_MS: String(POLL_MS),
        // Several times the slowest paced embeddings call (1 s), so a busy machine never fails a batch.
        EMBEDDINGS_TIMEOUT_MS: '10000',
        RATE_LIMIT_WORKSPACE_PER_MINUTE: '1000000',
        RATE_LIMIT_IP_PER_MINUTE: '1000000',
        RATE_LIMIT_SESSION_PER_MINUTE: '1000000',
      };
      const server = LoreServer.start({
        env: { ...common, DATABASE_URL: cluster!.url({ application_name: 'lore-start' }), INGESTION_WORKERS: '0', HOST: '127.0.0.1', PORT: String(await freePort()) },
        cwd: dir,
      });
      spawned.push(server);
      const base = await server.listening();
      // Started after the server has migrated the database, so they do not race to migrate it.
      const workers = [1, 2].map((number) => {
        const worker = LoreServer.spawn(['worker'], { env: { ...common, DATABASE_URL: cluster!.url({ application_name: `lore-worker-${number}` }) }, cwd: dir });
        spawned.push(worker);
        return worker;
      });
      await Promise.all(workers.map((worker) => worker.waitFor('"lore worker started"', (stdout) => (stdout.includes('"msg":"lore worker started"') ? true : undefined), 120_000)));
      const processes = [{ name: 'lore start', process: server }, ...workers.map((worker, index) => ({ name: `lore worker ${index + 1}`, process: worker }))];
      return { base, processes, server, workers };
    }

    /**
     * Waits until a worker is inside a record's transaction (or CATCH_TRANSACTION_MS passes), so
     * that the database goes away under an open transaction; returns whether it caught one.
     */
    async function catchWorkerWriting(): Promise<boolean> {
      const client = new pg.Client({ connectionString: cluster!.url({ application_name: 'lore-chaos-test' }) });
      await client.connect();
      try {
        const deadline = Date.now() + CATCH_TRANSACTION_MS;
        while (Date.now() < deadline) {
          if (await writing(client, 'lore-worker-%')) return true;
          await sleep(10);
        }
        return false;
      } finally {
        await client.end();
      }
    }

    /** Ends a test's processes and leaves the database up with no job for the next test's workers. */
    async function tearDown(lore: Lore | undefined): Promise<void> {
      await Promise.all((lore?.processes ?? []).map(({ process }) => process.kill()));
      await cluster!.start().catch(() => cluster!.ready());
      const client = new pg.Client({ connectionString: cluster!.url() });
      await client.connect();
      try {
        await client.query(`UPDATE ingestion_jobs SET status = 'failed', error = 'abandoned by the test' WHERE status IN ('pending', 'processing')`);
      } finally {
        await client.end();
      }
    }

    /** Runs a test's body; whatever stops it, the failure carries the findings so far and each process's output. */
    async function run(body: (findings: Findings, started: (lore: Lore) => void) => Promise<void>): Promise<void> {
      const findings = new Findings();
      let lore: Lore | undefined;
      try {
        await body(findings, (value) => (lore = value));
        if (lore) assertAllRunning(lore, 'by the end of the test');
        if (findings.problems.length > 0) throw new Error(findings.report());
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        const found = findings.problems.length > 0 && !message.startsWith(`${findings.problems.length} problem(s)`) ? `\nAlso found:\n${findings.report()}` : '';
        throw new Error(`${message}${found}\n\nProcesses:\n${diagnostics(lore)}`, { cause: error });
      } finally {
        // A failing tear-down must not hide the test's own failure.
        await tearDown(lore).catch((error: unknown) => console.error('# tear-down failed:', error));
      }
    }

    test('A+B: the database restarts, then stays down 20 s, mid-job: 503s meanwhile, no process exits, the job completes exactly once', { timeout: 300_000 }, () =>
      run(async (findings, started) => {
        const lore = await startLore();
        started(lore);
        const { token, knowledgeBaseId, experienceId } = await createTenant(lore.base, 'chaos-ab');
        const records = makeRecords('ab', RECORDS_AB);
        fake.delayMs = PACE_AB_MS;
        const jobId = await submitJob(lore.base, token, knowledgeBaseId, records);
        const traffic = new Traffic(lore.base, token, experienceId, jobId);
        const t0 = Date.now();
        let outage: { from: number; to: number } | undefined;
        try {
          await waitUntil(lore, `the job to process ${UNDER_WAY} records`, () => traffic.processed >= UNDER_WAY, 60_000);

          // A: a restart (fast shutdown, then start) mid-job.
          const restartCaught = await catchWorkerWriting();
          const beforeRestart = traffic.processed;
          await cluster!.restart();
          const restarted = Date.now();
          assertAllRunning(lore, 'after the database restart');
          const queryBack = await waitUntil(lore, 'a query answered 200 after the restart', () => traffic.answered('query', 200, restarted), BACK_MS);
          await waitUntil(lore, 'the job to go on after the restart', () => traffic.processed >= beforeRestart + RESUMED, RESUME_MS);
          console.log(
            `# A: restart at +${restarted - t0} ms, ${beforeRestart} processed, a worker inside a transaction: ${restartCaught}; ` +
              `after it, queries 200 in ${queryBack} ms, job on in ${Date.now() - restarted} ms`,
          );

          // B: 20 s down, mid-job.
          const beforeOutage = traffic.processed;
          // A third of the job left at least, so that it is resumed after the outage, not just finished.
          if (beforeOutage > RECORDS_AB - 1000) throw new Error(`the job was nearly done (${beforeOutage}) before the outage: the pace is too fast for the scenario`);
          const outageCaught = await catchWorkerWriting();
          await cluster!.stop();
          const from = Date.now();
          // The outage itself is the scenario: its length is fixed, not awaited.
          await sleep(OUTAGE_MS);
          assertAllRunning(lore, 'during the database outage');
          const to = Date.now();
          outage = { from, to };
          await cluster!.start();
          const up = Date.now();
          const queryUp = await waitUntil(lore, 'a query answered 200 after the outage', () => traffic.answered('query', 200, up), BACK_MS);
          await waitUntil(lore, 'the job to go on after the outage', () => traffic.processed >= beforeOutage + RESUMED, RESUME_MS);
          console.log(
            `# B: down from +${from - t0} to +${to - t0} ms, ${beforeOutage} processed, a worker inside a transaction: ${outageCaught}; ` +
              `after it, queries 200 in ${queryUp} ms, job on in ${Date.now() - up} ms`,
          );

          fake.delayMs = 0;
          await waitUntil(lore, 'the job to finish', () => traffic.job?.status !== 'processing' && traffic.job?.status !== 'pending', FINISH_MS);
        } finally {
          // Also when a wait failed: what the traffic saw until then goes into the failure.
          await traffic.stop();
          console.log(`# A+B traffic: ${traffic.summary()}`);
          checkTraffic(findings, traffic, jobId);
          if (outage) checkOutage(findings, traffic, jobId, outage.from, outage.to);
        }
        for (let index = 0; index < 5; index += 1) {
          const answer = await call('query', 'POST', `${lore.base}/api/v2/query`, { json: { experienceId, text: 'Where did the courier leave parcel 70?' } });
          findings.ok(answer.status === 200, () => `a query after the chaos did not answer 200: ${show(answer)}`);
        }
        const job = expectStatus(await call('job', 'GET', `${lore.base}/api/v2/data-ingestion/jobs/${jobId}`, { token }), 200, 'final job');
        const db = new pg.Pool({ connectionString: cluster!.url({ application_name: 'lore-chaos-test' }), max: 1 });
        try {
          await checkFinishedJob(findings, (sql, values) => db.query(sql, values), job, records, knowledgeBaseId);
        } finally {
          await db.end();
        }
      }),
    );

    test('C: the worker owning the job is frozen (SIGSTOP) 16 s, three times: the other takes over within the lease, counters stay exact', { timeout: 300_000 }, () =>
      run(async (findings, started) => {
        const lore = await startLore();
        started(lore);
        const { token, knowledgeBaseId, experienceId } = await createTenant(lore.base, 'chaos-c');
        const records = makeRecords('c', RECORDS_C);
        fake.delayMs = PACE_C_MS;
        const jobId = await submitJob(lore.base, token, knowledgeBaseId, records);
        const traffic = new Traffic(lore.base, token, experienceId, jobId);
        const db = new pg.Pool({ connectionString: cluster!.url({ application_name: 'lore-chaos-test' }), max: 2 });
        try {
          await stallTheOwner(findings, lore, db, traffic, jobId);
          const job = expectStatus(await call('job', 'GET', `${lore.base}/api/v2/data-ingestion/jobs/${jobId}`, { token }), 200, 'final job');
          await checkFinishedJob(findings, (sql, values) => db.query(sql, values), job, records, knowledgeBaseId);
        } finally {
          await db.end();
        }
      }),
    );

    /**
     * Freezes the job's owner STALLS times (while the job has STALL_MIN_LEFT records left), each
     * time for STALL_MS, recording whether the other worker took over within TAKEOVER_MS; then
     * lets the job finish.
     */
    async function stallTheOwner(findings: Findings, lore: Lore, db: pg.Pool, traffic: Traffic, jobId: string): Promise<void> {
      const names = new Map(lore.workers.map((worker, index) => [worker.pid, `lore-worker-${index + 1}`]));
      const frozen = new Set<LoreServer>();
      const t0 = Date.now();

      /** The job's owner (its pid from `lease_owner`, `<hostname>:<pid>:<hex>`), status and stored result rows. */
      const jobRow = async () => {
        const { rows } = await db.query<{ lease_owner: string | null; status: string; results: number }>(
          `SELECT lease_owner, status, (SELECT count(*) FROM ingestion_job_results WHERE job_id = $1)::int AS results
           FROM ingestion_jobs WHERE id = $1`,
          [jobId],
        );
        const row = rows[0]!;
        const pid = row.lease_owner ? Number(/:(\d+):[^:]*$/.exec(row.lease_owner)?.[1]) : undefined;
        return { ...row, pid };
      };

      /**
       * Freezes `worker` while it has a record's transaction open, when that can be caught
       * within CATCH_TRANSACTION_MS; else freezes it anyway. Returns whether it was caught inside one.
       */
      const freeze = async (worker: LoreServer): Promise<boolean> => {
        const name = names.get(worker.pid)!;
        const deadline = Date.now() + CATCH_TRANSACTION_MS;
        for (;;) {
          const late = Date.now() >= deadline;
          if (late || (await writing(db, name))) {
            process.kill(worker.pid, 'SIGSTOP');
            frozen.add(worker);
            // A statement already sent still completes on the server (a COMMIT in flight ends the
            // transaction): only what is left open 300 ms later is held by the frozen worker.
            await sleep(300);
            const caught = await writing(db, name);
            if (caught || late) return caught;
            process.kill(worker.pid, 'SIGCONT');
            frozen.delete(worker);
          }
          await sleep(10);
        }
      };

      const stalls: Array<{ worker: string; inTransaction: boolean; at: number; resultsAtFreeze: number; takeoverMs?: number }> = [];
      try {
        await waitUntil(lore, `the job to process ${UNDER_WAY} records`, () => traffic.processed >= UNDER_WAY, 60_000);
        for (let stall = 1; stall <= STALLS; stall += 1) {
          const row = await jobRow();
          if (row.status !== 'processing' || traffic.processed > RECORDS_C - STALL_MIN_LEFT) {
            if (stall === 1) throw new Error(`the job was ${row.status} with ${traffic.processed} processed before the first stall: the pace is too fast for the scenario`);
            break;
          }
          const owner = lore.workers.find((worker) => worker.pid === row.pid);
          if (!owner) throw new Error(`lease_owner ${row.lease_owner} names neither worker (pids ${lore.workers.map((worker) => worker.pid).join(', ')})`);
          const other = lore.workers.find((worker) => worker !== owner)!;
          const caught = await freeze(owner);
          const frozenAt = Date.now();
          try {
            const { results: resultsAtFreeze } = await jobRow();
            const record: (typeof stalls)[number] = { worker: names.get(owner.pid)!, inTransaction: caught, at: frozenAt - t0, resultsAtFreeze };
            stalls.push(record);
            // Taken over: the other worker holds the lease (or has finished) and has stored records
            // since the freeze; the frozen one cannot have.
            const deadline = frozenAt + TAKEOVER_MS;
            while (Date.now() < deadline) {
              const now = await jobRow();
              if (now.results > resultsAtFreeze && (now.pid === other.pid || now.status === 'completed')) {
                record.takeoverMs = Date.now() - frozenAt;
                break;
              }
              assertAllRunning(lore, `while ${record.worker} was frozen`);
              await sleep(200);
            }
            console.log(`# C: stall ${stall}: ${JSON.stringify(record)}`);
            findings.ok(record.takeoverMs !== undefined, () => `stall ${stall} (${JSON.stringify(record)}): the other worker did not store a record within ${TAKEOVER_MS} ms`);
            // The stall's length is the scenario: it is fixed, not awaited.
            await sleep(frozenAt + STALL_MS - Date.now());
          } finally {
            process.kill(owner.pid, 'SIGCONT');
            frozen.delete(owner);
          }
          // The next freeze is aimed at a worker that is writing again, not at one that just woke up.
          const resumed = traffic.processed;
          await waitUntil(lore, `the job to go on after stall ${stall}`, async () => traffic.processed >= resumed + 100 || (await jobRow()).status !== 'processing', RESUME_MS);
        }
        findings.ok(stalls[0]?.inTransaction === true, () => `the first stall could not catch the owner inside a record's transaction: ${JSON.stringify(stalls)}`);
        fake.delayMs = 0;
        await waitUntil(lore, 'the job to finish', () => traffic.job?.status !== 'processing' && traffic.job?.status !== 'pending', FINISH_MS);
      } finally {
        for (const worker of frozen) process.kill(worker.pid, 'SIGCONT');
        await traffic.stop();
        console.log(`# C traffic: ${traffic.summary()}`);
        checkTraffic(findings, traffic, jobId);
      }
    }
  });
}
