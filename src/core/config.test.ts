import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadClientConfig, loadConfig, type Config } from './config.ts';

const validSecret = 'a-token-secret-of-at-least-32-characters';

/** The ConfigError `loadConfig` throws for an environment (fails the test when it throws none). */
function configError(environment: Record<string, string>): ConfigError {
  try {
    loadConfig(environment, false);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error;
  }
  assert.fail(`expected ${JSON.stringify(environment)} to be refused`);
}

describe('loadConfig', () => {
  test('an empty environment gives the documented defaults', () => {
    const config = loadConfig({}, false);
    const expected: Partial<Config> = {
      port: 3000,
      host: '127.0.0.1',
      dataDir: './data',
      modelsDir: './data/models',
      databaseUrl: undefined,
      databasePoolSize: 10,
      adminApiKey: undefined,
      tokenSecret: undefined,
      tokenTtlSeconds: 3600,
      redisUrl: undefined,
      logLevel: 'info',
      logFormat: 'json',
      embeddingsProvider: 'builtin-fast',
      llmProvider: 'extractive',
      openaiBaseUrl: 'https://api.openai.com/v1',
      openaiApiKey: undefined,
      bootstrap: 'auto',
    };
    for (const [key, value] of Object.entries(expected)) {
      assert.deepEqual(config[key as keyof Config], value, `default of ${key}`);
    }
    assert.ok(Object.isFrozen(config));
  });

  test('set variables are read and numbers converted', () => {
    const config = loadConfig(
      {
        PORT: '8080',
        HOST: '0.0.0.0',
        DATA_DIR: '/var/lib/lore',
        DATABASE_URL: 'postgresql://lore@db:5432/lore',
        TOKEN_SECRET: validSecret,
        TOKEN_TTL_SECONDS: '600',
        LOG_LEVEL: 'debug',
        OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1',
        BOOTSTRAP: 'never',
      },
      false,
    );
    assert.equal(config.port, 8080);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.dataDir, '/var/lib/lore');
    assert.equal(config.databaseUrl, 'postgresql://lore@db:5432/lore');
    assert.equal(config.tokenSecret, validSecret);
    assert.equal(config.tokenTtlSeconds, 600);
    assert.equal(config.logLevel, 'debug');
    assert.equal(config.openaiBaseUrl, 'http://127.0.0.1:11434/v1');
    assert.equal(config.bootstrap, 'never');
  });

  test('an empty string counts as unset', () => {
    const config = loadConfig({ PORT: '', HOST: '', TOKEN_SECRET: '', DATABASE_URL: '', LOG_LEVEL: '' }, false);
    assert.equal(config.port, 3000);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.tokenSecret, undefined);
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.logLevel, 'info');
  });

  const badValues: Array<{ variable: string; value: string; reason: RegExp }> = [
    { variable: 'PORT', value: 'abc', reason: /must be integer/ },
    { variable: 'PORT', value: '70000', reason: /must be <= 65535/ },
    { variable: 'PORT', value: '80.5', reason: /must be integer/ },
    { variable: 'LOG_LEVEL', value: 'loud', reason: /allowed values: fatal, error, warn, info, debug, trace, silent/ },
    { variable: 'DATABASE_URL', value: 'mysql://x', reason: /must match pattern/ },
    { variable: 'TOKEN_SECRET', value: 'too-short', reason: /fewer than 32 characters/ },
    { variable: 'TOKEN_TTL_SECONDS', value: '10', reason: /must be >= 60/ },
    { variable: 'OPENAI_BASE_URL', value: 'not a url', reason: /format "uri"/ },
    { variable: 'BOOTSTRAP', value: 'always', reason: /allowed values: auto, never/ },
    { variable: 'OPENAI_EMBEDDINGS_DIMENSIONS', value: '16384', reason: /must be <= 16000/ },
    { variable: 'TOOLS_MATCH_COSINE', value: '1.5', reason: /must be <= 1/ },
  ];
  for (const { variable, value, reason } of badValues) {
    test(`${variable}=${value} is refused with a message naming ${variable}`, () => {
      const environment: Record<string, string> = variable === 'DATABASE_URL' ? { TOKEN_SECRET: validSecret } : {};
      const error = configError({ ...environment, [variable]: value });
      assert.equal(error.problems.length, 1, error.message);
      assert.match(error.problems[0]!, new RegExp(`^${variable}: `));
      assert.match(error.problems[0]!, reason);
      assert.match(error.message, /^Invalid configuration:\n {2}- /);
    });
  }

  test('webhook settings: the Standard Webhooks retry schedule by default, durations parsed, a malformed schedule refused', () => {
    assert.deepEqual(loadConfig({}, false).webhooks, {
      allowHttp: false,
      allowPrivateTargets: false,
      retryScheduleMs: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
      timeoutMs: 15_000,
    });
    const set = loadConfig({ WEBHOOKS_RETRY_SCHEDULE: '300ms, 2s,1m ,1h', WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_TIMEOUT_MS: '2500' }, false).webhooks;
    assert.deepEqual([set.retryScheduleMs, set.allowHttp, set.timeoutMs], [[300, 2_000, 60_000, 3_600_000], true, 2_500]);
    for (const schedule of ['5 s', '5s,,5m', '1d', 'soon']) {
      assert.match(configError({ WEBHOOKS_RETRY_SCHEDULE: schedule }).message, /WEBHOOKS_RETRY_SCHEDULE/, schedule);
    }
  });

  test('TRUST_PROXY: off unless set; the proxies\' addresses and ranges; true, a hop count and a bad address refused, naming the forms', () => {
    assert.equal(loadConfig({}, false).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: 'false' }, false).trustProxy, false);
    assert.deepEqual(loadConfig({ TRUST_PROXY: ' 10.0.0.0/8, 127.0.0.1 ,fd00::/8,loopback' }, false).trustProxy, ['10.0.0.0/8', '127.0.0.1', 'fd00::/8', 'loopback']);
    const forms = 'give the addresses or CIDR ranges of the proxies in front of lore, comma-separated (e.g. TRUST_PROXY=10.0.0.2 or TRUST_PROXY=10.0.0.0/8,127.0.0.1)';
    const refused: Array<[string, string[]]> = [
      ['true', [`TRUST_PROXY: true would trust every address, so any client could pick its own by sending X-Forwarded-For; ${forms}`]],
      ['2', [`TRUST_PROXY: a hop count (2) cannot tell a proxy from a client that reaches lore directly; ${forms}`]],
      ['10.0.0.300, 10.0.0.0/33,127.0.0.1', [
        `TRUST_PROXY: 10.0.0.300 is not an IP address, a CIDR range or one of loopback, linklocal, uniquelocal; ${forms}`,
        `TRUST_PROXY: 10.0.0.0/33 is not an IP address, a CIDR range or one of loopback, linklocal, uniquelocal; ${forms}`,
      ]],
    ];
    for (const [value, problems] of refused) assert.deepEqual(configError({ TRUST_PROXY: value }).problems, problems, value);
  });

  test('several bad variables are reported at once', () => {
    const error = configError({ PORT: 'abc', LOG_LEVEL: 'loud', TOKEN_TTL_SECONDS: '10', OPENAI_BASE_URL: 'not a url' });
    const named = error.problems.map((problem) => problem.split(':', 1)[0]).sort();
    assert.deepEqual(named, ['LOG_LEVEL', 'OPENAI_BASE_URL', 'PORT', 'TOKEN_TTL_SECONDS']);
    for (const name of named) assert.ok(error.message.includes(`- ${name}: `), `${name} is in the message`);
  });

  test('DATABASE_URL without TOKEN_SECRET is refused, naming TOKEN_SECRET, also alongside other bad variables', () => {
    const error = configError({ DATABASE_URL: 'postgres://lore@db/lore' });
    assert.equal(error.problems.length, 1);
    assert.match(error.problems[0]!, /^TOKEN_SECRET: is required with DATABASE_URL/);
    const both = configError({ DATABASE_URL: 'postgres://lore@db/lore', PORT: 'abc' });
    assert.deepEqual(both.problems.map((problem) => problem.split(':', 1)[0]).sort(), ['PORT', 'TOKEN_SECRET']);
  });

  test('secret values and database URLs are never echoed in the message', () => {
    const error = configError({ TOKEN_SECRET: 'tiny-secret', ADMIN_API_KEY: 'short', DATABASE_URL: 'mysql://user:hunter2@db/x' });
    for (const secret of ['tiny-secret', 'short', 'hunter2']) assert.ok(!error.message.includes(secret), error.message);
    assert.match(error.message, /TOKEN_SECRET: must NOT have fewer than 32 characters/);
  });

  test('LOG_FORMAT auto is pretty in a terminal and JSON otherwise; an explicit format wins', () => {
    const cases: Array<{ format?: string; isTerminal: boolean; expected: Config['logFormat'] }> = [
      { isTerminal: true, expected: 'pretty' },
      { isTerminal: false, expected: 'json' },
      { format: 'auto', isTerminal: true, expected: 'pretty' },
      { format: 'json', isTerminal: true, expected: 'json' },
      { format: 'pretty', isTerminal: false, expected: 'pretty' },
    ];
    for (const { format, isTerminal, expected } of cases) {
      const config = loadConfig(format ? { LOG_FORMAT: format } : {}, isTerminal);
      assert.equal(config.logFormat, expected, `LOG_FORMAT=${format ?? '(unset)'} with isTerminal=${isTerminal}`);
    }
  });
});

describe('loadClientConfig (lore ingest)', () => {
  const cases: Array<{ environment: Record<string, string>; serviceUrl: string | undefined; from: string }> = [
    { environment: {}, serviceUrl: 'http://127.0.0.1:3000', from: 'the default' },
    { environment: { PORT: '8080' }, serviceUrl: 'http://127.0.0.1:8080', from: 'HOST and PORT' },
    { environment: { HOST: '0.0.0.0', PORT: '8080' }, serviceUrl: 'http://127.0.0.1:8080', from: 'HOST and PORT' },
    { environment: { HOST: 'lore.internal' }, serviceUrl: 'http://lore.internal:3000', from: 'HOST and PORT' },
    { environment: { HOST: '::' }, serviceUrl: 'http://[::1]:3000', from: 'HOST and PORT' },
    { environment: { HOST: 'fd00::7', PORT: '81' }, serviceUrl: 'http://[fd00::7]:81', from: 'HOST and PORT' },
    { environment: { HOST: '', PORT: '' }, serviceUrl: 'http://127.0.0.1:3000', from: 'the default' },
    { environment: { LORE_URL: 'https://lore.example.com/', HOST: '0.0.0.0', PORT: '8080' }, serviceUrl: 'https://lore.example.com', from: 'LORE_URL' },
    { environment: { LORE_URL: 'http://10.0.0.5:3000/lore' }, serviceUrl: 'http://10.0.0.5:3000/lore', from: 'LORE_URL' },
    // PORT=0 lets the server take any free port: only the server knows which.
    { environment: { PORT: '0' }, serviceUrl: undefined, from: 'HOST and PORT' },
  ];
  for (const { environment, serviceUrl, from } of cases) {
    test(`${JSON.stringify(environment)} calls ${serviceUrl} (${from})`, () => {
      const config = loadClientConfig(environment);
      assert.deepEqual([config.serviceUrl, config.serviceUrlFrom], [serviceUrl, from]);
      assert.ok(Object.isFrozen(config));
    });
  }

  test('the credentials come from LORE_TOKEN, LORE_CLIENT_ID and LORE_CLIENT_SECRET', () => {
    const config = loadClientConfig({ LORE_TOKEN: 'a.b.c', LORE_CLIENT_ID: 'lore_1', LORE_CLIENT_SECRET: 'shh' });
    assert.deepEqual([config.token, config.clientId, config.clientSecret], ['a.b.c', 'lore_1', 'shh']);
  });

  test('a bad LORE_URL or PORT is refused, naming it; a bad server-only variable is not lore ingest\'s business', () => {
    assert.throws(
      () => loadClientConfig({ LORE_URL: 'localhost:3000', PORT: 'abc', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud' }),
      (error: unknown) => error instanceof ConfigError && error.problems.map((problem) => problem.split(':', 1)[0]).sort().join() === 'LORE_URL,PORT',
    );
    assert.throws(() => loadClientConfig({ LORE_TOKEN: '', LORE_URL: 'ftp://lore.example.com' }), {
      message: 'Invalid configuration:\n  - LORE_URL: must match pattern "^https?://" (got "ftp://lore.example.com")',
    });
    assert.doesNotThrow(() => loadClientConfig({ DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud' }));
  });
});
