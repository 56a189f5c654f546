import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertExactError } from '../../../test/assert-error.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { seedSession } from '../../../test/seed-queries.ts';
import { MAX_GAP_QUESTIONS } from './insights.schemas.ts';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
type Tenant = { workspaceId: string; token: string };

const noQueries = { queries: 0, answered: 0, fallback: 0, answeredShare: null, fallbackShare: null, feedbackUp: 0, feedbackDown: 0, medianLatencyMs: null };

describe(`insights (${engine})`, () => {
  let server: TestServer;
  let tenantA: Tenant;
  let tenantB: Tenant;
  let support: string;
  let sales: string;
  let sessions: Record<string, string>;

  const get = (token: string, query: string) => server.request('GET', `/api/v2/insights${query}`, { token });

  async function experience(token: string, name: string): Promise<string> {
    const answer = await server.request('POST', '/api/v2/experiences', { token, body: { name } });
    assert.equal(answer.status, 201, answer.text);
    return answer.body.id;
  }

  before(async () => {
    // The default encoder (builtin-fast), the one whose scale GAP_SIMILARITY was measured on.
    server = await startTestServer();
    tenantA = await server.tenant();
    tenantB = await server.tenant();
    support = await experience(tenantA.token, 'Support');
    sales = await experience(tenantA.token, 'Sales');
    const db = server.context.db;
    const seed = async (workspaceId: string, experienceId: string, queries: Parameters<typeof seedSession>[3]) =>
      (await seedSession(db, workspaceId, experienceId, queries)).sessionId;
    sessions = {
      first: await seed(tenantA.workspaceId, support, [
        { text: 'How do I reset my password?', grounded: false, at: '2026-10-01T08:00:00.000Z', latencyMs: 100 },
        { text: 'What are your opening hours?', grounded: true, at: '2026-10-01T10:00:00.000Z', latencyMs: 200, rating: 'up' },
      ]),
      second: await seed(tenantA.workspaceId, support, [{ text: 'password reset not working', grounded: false, at: '2026-10-01T09:00:00.000Z', latencyMs: 300 }]),
      third: await seed(tenantA.workspaceId, support, [
        { text: 'How do I reset my password?', grounded: true, at: '2026-10-03T08:00:00.000Z', latencyMs: 400, rating: 'down' },
        { text: 'Do you ship to Canada?', grounded: false, at: '2026-10-03T09:00:00.000Z', latencyMs: 500 },
        { text: 'Is there a student discount?', grounded: true, at: '2026-10-03T10:00:00.000Z', latencyMs: 600, rating: 'up' },
      ]),
      sales: await seed(tenantA.workspaceId, sales, [
        { text: 'How much does the premium plan cost?', grounded: false, at: '2026-10-02T12:00:00.000Z', latencyMs: 50 },
      ]),
      // Just outside the period, on either side.
      outside: await seed(tenantA.workspaceId, support, [
        { text: 'Where is my order?', grounded: false, at: '2026-09-30T23:59:59.999Z', rating: 'down' },
        { text: 'Where is my order?', grounded: false, at: '2026-10-04T00:00:00.000Z' },
      ]),
    };
    const otherExperience = await experience(tenantB.token, 'Support');
    sessions.otherWorkspace = await seed(tenantB.workspaceId, otherExperience, [
      { text: 'How do I reset my password?', grounded: false, at: '2026-10-01T08:30:00.000Z', latencyMs: 70, rating: 'down' },
    ]);
  });
  after(async () => {
    await server.close();
  });

  const passwordGap = () => ({
    question: 'How do I reset my password?',
    count: 3,
    unanswered: 2,
    thumbsDown: 1,
    lastAskedAt: '2026-10-03T08:00:00.000Z',
    examples: [
      { text: 'How do I reset my password?', sessionId: sessions.third, askedAt: '2026-10-03T08:00:00.000Z' },
      { text: 'password reset not working', sessionId: sessions.second, askedAt: '2026-10-01T09:00:00.000Z' },
    ],
  });
  const canadaGap = () => ({
    question: 'Do you ship to Canada?',
    count: 1,
    unanswered: 1,
    thumbsDown: 0,
    lastAskedAt: '2026-10-03T09:00:00.000Z',
    examples: [{ text: 'Do you ship to Canada?', sessionId: sessions.third, askedAt: '2026-10-03T09:00:00.000Z' }],
  });

  test('one experience: per-day figures, totals, and its gaps with paraphrases grouped and unrelated questions apart', async () => {
    const answer = await get(tenantA.token, `?experienceId=${support}&from=2026-10-01&to=2026-10-03`);
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(answer.body, {
      experienceId: support,
      from: '2026-10-01',
      to: '2026-10-03',
      totals: { queries: 6, answered: 3, fallback: 3, answeredShare: 0.5, fallbackShare: 0.5, feedbackUp: 2, feedbackDown: 1, medianLatencyMs: 350 },
      days: [
        {
          date: '2026-10-01',
          queries: 3,
          answered: 1,
          fallback: 2,
          answeredShare: 0.3333,
          fallbackShare: 0.6667,
          feedbackUp: 1,
          feedbackDown: 0,
          medianLatencyMs: 200,
        },
        { date: '2026-10-02', ...noQueries },
        {
          date: '2026-10-03',
          queries: 3,
          answered: 2,
          fallback: 1,
          answeredShare: 0.6667,
          fallbackShare: 0.3333,
          feedbackUp: 1,
          feedbackDown: 1,
          medianLatencyMs: 500,
        },
      ],
      gaps: { considered: 4, limit: MAX_GAP_QUESTIONS, truncated: false, groups: [passwordGap(), canadaGap()] },
    });
  });

  test('without experienceId: every experience of the workspace, never another workspace\'s', async () => {
    const answer = await get(tenantA.token, '?from=2026-10-01&to=2026-10-03');
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.experienceId, null);
    assert.deepEqual(answer.body.totals, {
      queries: 7,
      answered: 3,
      fallback: 4,
      answeredShare: 0.4286,
      fallbackShare: 0.5714,
      feedbackUp: 2,
      feedbackDown: 1,
      medianLatencyMs: 300,
    });
    assert.deepEqual(answer.body.days[1], {
      date: '2026-10-02',
      queries: 1,
      answered: 0,
      fallback: 1,
      answeredShare: 0,
      fallbackShare: 1,
      feedbackUp: 0,
      feedbackDown: 0,
      medianLatencyMs: 50,
    });
    const premium = {
      question: 'How much does the premium plan cost?',
      count: 1,
      unanswered: 1,
      thumbsDown: 0,
      lastAskedAt: '2026-10-02T12:00:00.000Z',
      examples: [{ text: 'How much does the premium plan cost?', sessionId: sessions.sales, askedAt: '2026-10-02T12:00:00.000Z' }],
    };
    assert.deepEqual(answer.body.gaps, { considered: 5, limit: MAX_GAP_QUESTIONS, truncated: false, groups: [passwordGap(), canadaGap(), premium] });

    const other = await get(tenantB.token, '?from=2026-10-01&to=2026-10-03');
    assert.equal(other.status, 200, other.text);
    assert.deepEqual(other.body.totals, { queries: 1, answered: 0, fallback: 1, answeredShare: 0, fallbackShare: 1, feedbackUp: 0, feedbackDown: 1, medianLatencyMs: 70 });
    assert.deepEqual(other.body.gaps.groups, [
      {
        question: 'How do I reset my password?',
        count: 1,
        unanswered: 1,
        thumbsDown: 1,
        lastAskedAt: '2026-10-01T08:30:00.000Z',
        examples: [{ text: 'How do I reset my password?', sessionId: sessions.otherWorkspace, askedAt: '2026-10-01T08:30:00.000Z' }],
      },
    ]);
  });

  test('periods: default the last 30 days, from alone ends today, 366 days at most, and a period of one day', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const defaults = await get(tenantA.token, '');
    assert.equal(defaults.status, 200, defaults.text);
    const thirtyDaysAgo = new Date(Date.parse(today) - 29 * 86_400_000).toISOString().slice(0, 10);
    assert.deepEqual([defaults.body.from, defaults.body.to, defaults.body.days.length], [thirtyDaysAgo, today, 30]);
    const fromAlone = await get(tenantA.token, `?from=${thirtyDaysAgo}`);
    assert.deepEqual([fromAlone.body.from, fromAlone.body.to], [thirtyDaysAgo, today]);
    const leapYear = await get(tenantA.token, '?from=2024-01-01&to=2024-12-31');
    assert.equal(leapYear.status, 200, leapYear.text);
    assert.deepEqual([leapYear.body.days.length, leapYear.body.days[59].date, leapYear.body.totals], [366, '2024-02-29', noQueries]);
    assert.deepEqual(leapYear.body.gaps, { considered: 0, limit: MAX_GAP_QUESTIONS, truncated: false, groups: [] });
    const oneDay = await get(tenantA.token, `?experienceId=${support}&from=2026-10-03&to=2026-10-03`);
    assert.deepEqual(
      oneDay.body.days.map((day: { date: string; queries: number }) => [day.date, day.queries]),
      [['2026-10-03', 3]],
    );
    assert.deepEqual(oneDay.body.gaps.groups.map((group: { question: string; count: number }) => [group.question, group.count]), [
      ['Do you ship to Canada?', 1],
      ['How do I reset my password?', 1],
    ]);
  });

  test('a reversed or too long period, a bad date or id, or an unknown parameter is a 400 naming it', async () => {
    const cases: Array<[string, { path: string; message: string }]> = [
      ['?from=2026-10-04&to=2026-10-03', { path: 'querystring:/from', message: 'must not be after to (2026-10-03)' }],
      ['?from=2024-01-01&to=2025-01-01', { path: 'querystring:/to', message: 'must be at most 365 days after from (a period of at most 366 days)' }],
      ['?from=2026-13-01', { path: 'querystring:/from', message: 'must be a date in ISO 8601 form (such as 2026-01-31)' }],
      ['?to=yesterday', { path: 'querystring:/to', message: 'must be a date in ISO 8601 form (such as 2026-01-31)' }],
      ['?experienceId=support', { path: 'querystring:/experienceId', message: 'must be a UUID' }],
      ['?experience=support', { path: 'querystring:/experience', message: 'is not a known field (known fields: experienceId, from, to)' }],
    ];
    for (const [query, error] of cases) {
      assertExactError(await get(tenantA.token, query), 400, '/v2/insights', { errors: [error] });
    }
  });

  test('an unknown experience, or another workspace\'s, is a 404', async () => {
    for (const id of [UNKNOWN_ID, support]) {
      assertExactError(await get(tenantB.token, `?experienceId=${id}`), 404, '/v2/insights');
    }
  });

  test('the route needs a token with sessions:read', async () => {
    assertExactError(await server.request('GET', '/api/v2/insights'), 401, '/v2/insights');
    const withoutScope = await server.token(tenantA.workspaceId, ['experiences:read']);
    assertExactError(await get(withoutScope, ''), 403, '/v2/insights', { required: ['sessions:read'], missing: ['sessions:read'] });
    const reader = await server.token(tenantA.workspaceId, ['sessions:read']);
    assert.equal((await get(reader, '?from=2026-10-01&to=2026-10-03')).body.totals.queries, 7);
  });

  test(`gaps consider the ${MAX_GAP_QUESTIONS} most recent questions and say so`, async () => {
    const tenant = await server.tenant();
    const busy = await experience(tenant.token, 'Busy');
    const { sessionId } = await seedSession(server.context.db, tenant.workspaceId, busy, [
      { text: 'Where is my parcel?', grounded: false, at: '2026-08-01T00:00:00.000Z' },
    ]);
    // 500 more of the same question, a second apart, after the first.
    await server.context.db.query(
      `INSERT INTO queries (workspace_id, session_id, experience_id, text, standalone_text, answer, grounded, generator, model, latency_ms, asked_at, created_at)
       SELECT $1, $2, $3, 'Where is my parcel?', 'Where is my parcel?', 'Sorry.', false, 'extractive', 'test', 10, t, t
       FROM generate_series(1, $4::int) AS n, LATERAL (SELECT timestamptz '2026-08-01T00:00:00Z' + n * interval '1 second' AS t) AS at`,
      [tenant.workspaceId, sessionId, busy, MAX_GAP_QUESTIONS],
    );
    const answer = await get(tenant.token, '?from=2026-08-01&to=2026-08-01');
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.totals.queries, MAX_GAP_QUESTIONS + 1);
    const { groups, ...bounds } = answer.body.gaps;
    assert.deepEqual(bounds, { considered: MAX_GAP_QUESTIONS, limit: MAX_GAP_QUESTIONS, truncated: true });
    assert.deepEqual(groups, [
      {
        question: 'Where is my parcel?',
        count: MAX_GAP_QUESTIONS,
        unanswered: MAX_GAP_QUESTIONS,
        thumbsDown: 0,
        lastAskedAt: '2026-08-01T00:08:20.000Z',
        examples: [{ text: 'Where is my parcel?', sessionId, askedAt: '2026-08-01T00:08:20.000Z' }],
      },
    ]);
  });
});
