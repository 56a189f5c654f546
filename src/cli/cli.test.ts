import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { createTestDatabase, engine } from '../../test/harness.ts';
import { freePort, LoreServer, runLore, send, type Finished, type LoreOptions } from '../../test/lore-process.ts';
import { loadMigrations } from '../core/db/migrate.ts';

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function describeRun(finished: Finished): string {
  return `exit ${finished.code}\nstdout:\n${finished.stdout}\nstderr:\n${finished.stderr}`;
}

// The commands run one after another on one database: on the embedded engine two processes must
// never open the same data directory at once, so the server starts only in the last test.
describe(`the lore command (${engine})`, () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let options: LoreOptions;
  let server: LoreServer | undefined;
  let workspaceId: string;

  before(async () => {
    database = await createTestDatabase();
    options = {
      cwd: database.env.DATA_DIR!,
      env: { ...database.env, TOKEN_SECRET: 'cli-test-token-secret-0123456789-abcdef', BOOTSTRAP: 'never' },
    };
  });
  after(async () => {
    await server?.kill();
    await database?.drop();
  });

  const badStarts: Array<{ env: Record<string, string>; named: string[] }> = [
    { env: { PORT: 'abc' }, named: ['PORT'] },
    { env: { PORT: '70000', LOG_LEVEL: 'loud' }, named: ['PORT', 'LOG_LEVEL'] },
  ];
  for (const bad of badStarts) {
    test(`lore start with ${JSON.stringify(bad.env)} exits with code 2 naming ${bad.named.join(', ')}`, async () => {
      const finished = await runLore(['start'], { ...options, env: { ...options.env, ...bad.env } });
      assert.equal(finished.code, 2, describeRun(finished));
      // Nothing is logged to stdout: the process stops before opening the database or a port.
      assert.equal(finished.stdout, '');
      assert.match(finished.stderr, /^Invalid configuration:\n/);
      for (const name of bad.named) assert.match(finished.stderr, new RegExp(`^ {2}- ${name}: `, 'm'));
    });
  }

  test('lore prepare readies the default encoder\'s token table in MODELS_DIR; another provider has nothing to prepare', async () => {
    // The test runner prepared the shared MODELS_DIR before the suite: this run reads it.
    const ready = await runLore(['prepare'], options);
    assert.equal(ready.code, 0, describeRun(ready));
    assert.match(ready.stdout, new RegExp(`^The token table is ready in ${process.env.MODELS_DIR}/[^\\n]+\\.f32\\.\\n$`));
    const other = await runLore(['prepare'], { ...options, env: { ...options.env, EMBEDDINGS_PROVIDER: 'openai' } });
    assert.equal(other.code, 0, describeRun(other));
    assert.equal(other.stdout, 'Nothing to prepare for EMBEDDINGS_PROVIDER=openai.\n');
  });

  test('lore migrate applies every migration, then reports "Up to date."', async () => {
    const migrations = await loadMigrations();
    const first = await runLore(['migrate'], options);
    assert.equal(first.code, 0, describeRun(first));
    assert.equal(first.stdout, `Applied: ${migrations.map((migration) => `${migration.version} ${migration.name}`).join(', ')}\n`);
    const second = await runLore(['migrate'], options);
    assert.equal(second.code, 0, describeRun(second));
    assert.equal(second.stdout, 'Up to date.\n');
  });

  test('lore admin workspace create prints the new workspace as JSON', async () => {
    const finished = await runLore(['admin', 'workspace', 'create', 'acme'], options);
    assert.equal(finished.code, 0, describeRun(finished));
    const workspace = JSON.parse(finished.stdout);
    assert.deepEqual(Object.keys(workspace).sort(), ['createdAt', 'id', 'name', 'status', 'updatedAt']);
    assert.match(workspace.id, uuid);
    assert.equal(workspace.name, 'acme');
    assert.equal(workspace.status, 'active');
    workspaceId = workspace.id;

    const listed = await runLore(['admin', 'workspace', 'list'], options);
    assert.equal(listed.code, 0, describeRun(listed));
    assert.deepEqual(JSON.parse(listed.stdout), { total: 1, workspaces: [workspace] });
  });

  const refusedClients: Array<{ title: string; args: () => string[]; message: () => string }> = [
    {
      title: 'an unknown scope',
      args: () => ['--workspace', workspaceId, '--scopes', 'knowledge-bases:read,bogus'],
      message: () => 'lore: Unknown scope bogus; known: ',
    },
    {
      title: 'an empty scope list',
      args: () => ['--workspace', workspaceId, '--scopes', ','],
      message: () => 'lore: --scopes needs at least one scope',
    },
    {
      title: 'an unknown workspace id',
      args: () => ['--workspace', '00000000-0000-4000-8000-000000000000', '--scopes', 'knowledge-bases:read'],
      message: () => 'lore: Workspace 00000000-0000-4000-8000-000000000000 does not exist.',
    },
    {
      title: 'a workspace id that is not a UUID',
      args: () => ['--workspace', 'acme', '--scopes', 'knowledge-bases:read'],
      message: () => 'lore: --workspace must be a UUID, got "acme"',
    },
  ];
  for (const refused of refusedClients) {
    test(`lore admin client create refuses ${refused.title} with exit code 1 and a message`, async () => {
      const finished = await runLore(['admin', 'client', 'create', ...refused.args()], options);
      assert.equal(finished.code, 1, describeRun(finished));
      assert.equal(finished.stdout, '');
      assert.ok(finished.stderr.startsWith(refused.message()), describeRun(finished));
    });
  }

  test('lore admin client create prints the secret once, and it obtains a token with exactly those scopes', async () => {
    const scopes = ['knowledge-bases:read', 'experiences:read'];
    const finished = await runLore(['admin', 'client', 'create', '--workspace', workspaceId, '--scopes', scopes.join(',')], options);
    assert.equal(finished.code, 0, describeRun(finished));
    const client = JSON.parse(finished.stdout);
    assert.deepEqual(Object.keys(client).sort(), [
      'clientId',
      'clientSecret',
      'createdAt',
      'id',
      'knowledgeBaseIds',
      'name',
      'revokedAt',
      'scopes',
      'workspaceId',
    ]);
    assert.equal(client.workspaceId, workspaceId);
    assert.equal(client.name, 'cli');
    assert.deepEqual(client.scopes, scopes);
    assert.equal(client.knowledgeBaseIds, null);
    assert.equal(client.revokedAt, null);
    assert.equal(finished.stdout.split(client.clientSecret).length - 1, 1, 'the secret is printed exactly once');

    const port = await freePort();
    server = LoreServer.start({ ...options, env: { ...options.env, PORT: String(port), HOST: '127.0.0.1' } });
    const url = await server.listening();
    assert.equal(url, `http://127.0.0.1:${port}`);

    const granted = await send('POST', `${url}/v2/auth/access-tokens`, {
      json: { clientId: client.clientId, clientSecret: client.clientSecret },
    });
    assert.equal(granted.status, 200, JSON.stringify(granted.body));
    assert.equal(granted.body.scope, scopes.join(' '));
    assert.equal(granted.body.token_type, 'Bearer');
    assert.equal(granted.body.expires_in, 3600);
    const claims = decodeJwt(granted.body.access_token);
    assert.equal(claims.ws, workspaceId);
    assert.equal(claims.sub, client.clientId);
    assert.equal(claims.scope, scopes.join(' '));

    const listed = await send('GET', `${url}/api/v2/knowledge-bases`, { token: granted.body.access_token });
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body, { total: 0, knowledgeBases: [] });
    const writing = await send('POST', `${url}/api/v2/knowledge-bases`, { token: granted.body.access_token, json: { name: 'docs' } });
    assert.equal(writing.status, 403);
    assert.deepEqual(writing.body.required, ['knowledge-bases:write']);
    assert.deepEqual(writing.body.missing, ['knowledge-bases:write']);

    const wrongSecret = await send('POST', `${url}/v2/auth/access-tokens`, {
      json: { clientId: client.clientId, clientSecret: `${client.clientSecret}x` },
    });
    assert.equal(wrongSecret.status, 401);
  });

  if (engine === 'pglite') {
    test('while lore start runs on the embedded database, lore admin refuses with exit code 1 and writes nothing', async () => {
      assert.ok(server, 'the server of the previous test runs');
      const attempts = [
        ['admin', 'client', 'create', '--workspace', workspaceId, '--scopes', '*'],
        ['admin', 'workspace', 'create', 'ghost'],
        ['migrate'],
      ];
      for (const args of attempts) {
        const refused = await runLore(args, options);
        assert.equal(refused.code, 1, describeRun(refused));
        assert.equal(refused.stdout, '', 'no id or secret is printed for a write that did not happen');
        assert.match(refused.stderr, /^lore: The embedded database in \S+ is in use by another lore process \(pid \d+, `lore start` since /, describeRun(refused));
      }
      // The next test finds only the workspace created before the server started: "ghost" was not written.
    });
  }

  test('lore start stops with exit code 0 on SIGTERM; then the database is free again, and holds no refused write', async () => {
    assert.ok(server, 'the server of the earlier test runs');
    assert.deepEqual(await server.stop(), { code: 0, signal: null });
    const listed = await runLore(['admin', 'workspace', 'list'], options);
    assert.equal(listed.code, 0, describeRun(listed));
    assert.deepEqual(JSON.parse(listed.stdout).workspaces.map((workspace: { id: string }) => workspace.id), [workspaceId]);
  });
});
