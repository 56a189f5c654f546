import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { DEFAULT_FALLBACK_MESSAGE } from '../src/features/experiences/experiences.schemas.ts';
import { createTestDatabase, engine } from './harness.ts';
import { freePort, LoreServer, send, type LoreOptions } from './lore-process.ts';

const run = promisify(execFile);
const loreBin = fileURLToPath(new URL('../bin/lore.js', import.meta.url));
const sample = fileURLToPath(new URL('../samples/debian-docs.json', import.meta.url));
const uuid = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const blockTitle = 'lore: first start';

/** The value printed after `label` on its own line of the first-start block. */
function printed(stdout: string, label: string, pattern: string): string {
  const match = new RegExp(`^ {2}${label} +(${pattern})(?: |$)`, 'm').exec(stdout);
  assert.ok(match, `the first-start block prints the ${label}:\n${stdout}`);
  return match[1]!;
}

/** A printed command that starts with `start`, with its continuation lines, exactly as an operator would paste it. */
function printedCommand(stdout: string, start: string, containing = ''): string {
  const lines = stdout.split('\n');
  const first = lines.findIndex((line) => line.trimStart().startsWith(start) && line.includes(containing));
  assert.ok(first >= 0, `a line starting with ${start} is printed:\n${stdout}`);
  let end = first;
  while (lines[end]!.endsWith('\\')) end += 1;
  return lines.slice(first, end + 1).join('\n').trimStart();
}

/** A printed curl command for `path`. */
function curlCommand(stdout: string, path: string): string {
  return printedCommand(stdout, 'curl ', path);
}

/** Starts `lore start` on a fresh port and waits until it listens. */
async function startLore(options: LoreOptions, started: LoreServer[]): Promise<{ server: LoreServer; url: string }> {
  const port = await freePort();
  const server = LoreServer.start({ ...options, env: { ...options.env, PORT: String(port) } });
  started.push(server);
  return { server, url: await server.listening() };
}

describe('first start on an empty embedded database, then a restart', { skip: engine !== 'pglite' && 'first start seeds only the embedded engine' }, () => {
  const started: LoreServer[] = [];
  let dataDir: string;
  let options: LoreOptions;
  let stdout: string;
  let url: string;
  let accessToken: string;
  let adminKey: string;
  const ids = { workspace: '', knowledgeBase: '', experience: '' };

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'lore-first-start-'));
    // What an operator has after a clone: no BOOTSTRAP, no ADMIN_API_KEY, no TOKEN_SECRET.
    options = { cwd: dataDir, env: { DATA_DIR: dataDir, HOST: '127.0.0.1' } };
  });
  after(async () => {
    for (const server of started) await server.kill();
    await rm(dataDir, { recursive: true, force: true });
  });

  test('lore start prints the first-start block with ids, credentials, the admin key and curl lines', async () => {
    ({ url } = await startLore(options, started));
    stdout = started[0]!.stdout;
    assert.ok(stdout.includes(blockTitle), `the first-start block is printed:\n${stdout}`);
    ids.workspace = printed(stdout, 'workspace', uuid);
    ids.knowledgeBase = printed(stdout, 'knowledge base', uuid);
    ids.experience = printed(stdout, 'experience', uuid);
    assert.match(printed(stdout, 'client id', '\\S+'), /^lore_[0-9a-f]{24}$/);
    assert.match(printed(stdout, 'client secret', '\\S+'), /^[\w-]{43}$/);
    const adminKeyLine = /^ {2}ADMIN_API_KEY=(\S+)$/m.exec(stdout);
    assert.ok(adminKeyLine, `the generated admin key is printed:\n${stdout}`);
    adminKey = adminKeyLine[1]!;
    assert.match(adminKey, /^lore_admin_[\w-]{32}$/);

    const queryCurl = curlCommand(stdout, '/api/v2/query');
    assert.ok(queryCurl.startsWith(`curl -s ${url}/api/v2/query `), queryCurl);
    assert.ok(queryCurl.includes(`"experienceId":"${ids.experience}"`), queryCurl);
  });

  test('the block prints the console, the widget demo and the API reference, and GET / links them; each answers', async () => {
    for (const path of ['/console', '/demo', '/docs']) {
      assert.match(stdout, new RegExp(`^ {2}${url}${path} +\\S`, 'm'), `the block prints ${url}${path}:\n${stdout}`);
      assert.equal((await send('GET', `${url}${path}`)).status, 200, path);
    }
    const home = await send('GET', `${url}/`);
    assert.equal(home.status, 200);
    for (const path of ['/console', '/demo', '/docs']) assert.ok(String(home.body).includes(`href="${path}"`), `GET / links ${path}`);
  });

  test('the printed token curl line, run as printed, yields an access token', async () => {
    const command = curlCommand(stdout, '/v2/auth/access-tokens');
    assert.ok(command.startsWith(`curl -s ${url}/v2/auth/access-tokens `), command);
    const { stdout: answer } = await run('bash', ['-c', command], { timeout: 15_000 });
    const token = JSON.parse(answer);
    assert.deepEqual(Object.keys(token).sort(), ['access_token', 'expires_in', 'scope', 'token_type']);
    assert.equal(token.token_type, 'Bearer');
    assert.equal(token.expires_in, 3600);
    assert.equal(token.scope, '*');
    assert.match(token.access_token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
    accessToken = token.access_token;
  });

  test('the printed ingest line loads the README\'s sample, and the printed question, run as printed, is answered from it: the answer first, citing its section', async () => {
    // As printed, but with the repository's paths: the test runs in a temp directory, without npx.
    const ingestLine = printedCommand(stdout, 'npx lore ingest ')
      .replace('npx lore ', `${process.execPath} ${loreBin} `)
      .replace(' samples/debian-docs.json ', ` ${sample} `);
    assert.ok(ingestLine.includes(`--kb ${ids.knowledgeBase} `), ingestLine);
    const loaded = await run('bash', ['-c', ingestLine], { cwd: dataDir, timeout: 120_000, env: { PATH: process.env.PATH, MODELS_DIR: process.env.MODELS_DIR } });
    assert.match(loaded.stdout, /^ {2}created +31$/m, loaded.stdout);

    const { stdout: answered } = await run('bash', ['-c', curlCommand(stdout, '/api/v2/query')], { timeout: 30_000 });
    const answer = JSON.parse(answered);
    assert.notEqual(answer.answer, DEFAULT_FALLBACK_MESSAGE);
    assert.match(answer.answer, /^To build with TLS support, you'll need OpenSSL development libraries \(e\.g\. libssl-dev on Debian\/Ubuntu\) and run:\n/);
    assert.match(answer.answer, /make BUILD_TLS=yes/);
    const cited = [...answer.answer.matchAll(/\[(\d+)\]/g)].map((match) => Number(match[1]));
    const first = answer.sources.find((source: any) => source.number === cited[0]);
    assert.deepEqual([first.title, first.url], ['Building Redis (Redis)', 'https://github.com/redis/redis/blob/7.0/README.md#building-redis']);
  });

  test('the token sees the default knowledge base and public experience; the admin key lists the workspace', async () => {
    const knowledgeBases = await send('GET', `${url}/api/v2/knowledge-bases`, { token: accessToken });
    assert.equal(knowledgeBases.status, 200);
    assert.equal(knowledgeBases.body.total, 1);
    assert.deepEqual(
      knowledgeBases.body.knowledgeBases.map((knowledgeBase: any) => [knowledgeBase.id, knowledgeBase.name]),
      [[ids.knowledgeBase, 'default']],
    );

    const experience = await send('GET', `${url}/api/v2/experiences/${ids.experience}`, { token: accessToken });
    assert.equal(experience.status, 200);
    assert.equal(experience.body.name, 'default');
    assert.equal(experience.body.requireAuth, false);
    assert.deepEqual(experience.body.knowledgeBaseIds, [ids.knowledgeBase]);

    const workspaces = await send('GET', `${url}/api/v2/admin/workspaces`, { token: adminKey });
    assert.equal(workspaces.status, 200);
    assert.equal(workspaces.body.total, 1);
    assert.deepEqual(
      workspaces.body.workspaces.map((workspace: any) => [workspace.id, workspace.name, workspace.status]),
      [[ids.workspace, 'default', 'active']],
    );
  });

  test('SIGTERM stops the server cleanly', async () => {
    assert.deepEqual(await started[0]!.stop(), { code: 0, signal: null });
    assert.ok(started[0]!.logs().some((line) => line.msg === 'shutting down' && line.signal === 'SIGTERM'));
  });

  test('the generated secrets are kept in DATA_DIR/secrets.json, readable by the owner only', async () => {
    const file = join(dataDir, 'secrets.json');
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    const secrets = JSON.parse(await readFile(file, 'utf8'));
    assert.equal(secrets.adminApiKey, adminKey);
    assert.ok(secrets.tokenSecret.length >= 32);
  });

  test('a restart on the same DATA_DIR keeps data and tokens and prints no first-start block', async () => {
    const restarted = await startLore(options, started);
    url = restarted.url;

    const knowledgeBases = await send('GET', `${url}/api/v2/knowledge-bases`, { token: accessToken });
    assert.equal(knowledgeBases.status, 200, 'the token issued before the restart is still valid');
    assert.deepEqual(
      knowledgeBases.body.knowledgeBases.map((knowledgeBase: any) => knowledgeBase.id),
      [ids.knowledgeBase],
    );
    const experience = await send('GET', `${url}/api/v2/experiences/${ids.experience}`, { token: accessToken });
    assert.equal(experience.status, 200);
    const workspaces = await send('GET', `${url}/api/v2/admin/workspaces`, { token: adminKey });
    assert.equal(workspaces.status, 200);
    assert.deepEqual(
      workspaces.body.workspaces.map((workspace: any) => workspace.id),
      [ids.workspace],
    );

    assert.deepEqual(await restarted.server.stop(), { code: 0, signal: null });
    // Checked once the process has ended, so that its whole output is in.
    assert.ok(!restarted.server.stdout.includes(blockTitle), restarted.server.stdout);
    assert.ok(!restarted.server.stdout.includes('ADMIN_API_KEY='), 'the admin key is printed only once');
    assert.ok(!restarted.server.stdout.includes(adminKey));
  });
});

describe('start on an empty PostgreSQL database', { skip: engine !== 'postgres' && 'runs with LORE_TEST_ENGINE=postgres' }, () => {
  const started: LoreServer[] = [];
  let database: Awaited<ReturnType<typeof createTestDatabase>>;

  before(async () => {
    database = await createTestDatabase();
  });
  after(async () => {
    for (const server of started) await server.kill();
    await database?.drop();
  });

  test('lore start creates no default workspace and generates no secrets: first start is for the embedded default', async () => {
    const options: LoreOptions = {
      cwd: database.env.DATA_DIR!,
      env: { ...database.env, HOST: '127.0.0.1', TOKEN_SECRET: 'first-start-test-secret-0123456789-abcdef' },
    };
    const { server } = await startLore(options, started);
    assert.deepEqual(await server.stop(), { code: 0, signal: null });
    assert.ok(!server.stdout.includes(blockTitle), server.stdout);
    assert.ok(!server.stdout.includes('ADMIN_API_KEY='), server.stdout);
    assert.deepEqual(await readdir(database.env.DATA_DIR!), []);

    const client = new pg.Client({ connectionString: database.env.DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query<{ count: number }>('SELECT count(*)::int AS count FROM workspaces');
      assert.deepEqual(rows, [{ count: 0 }]);
    } finally {
      await client.end();
    }
  });
});
