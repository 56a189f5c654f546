import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { DEFAULT_FALLBACK_MESSAGE } from './experiences.schemas.ts';
import { assertError } from '../../../test/assert-error.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/** The spec's error body for `status` at `path`, and for 400s an entry at each JSON pointer. */
/** One action of each type, with every optional part the spec names. */
const everyAction = [
  { id: 'human', label: 'Talk to a person', icon: { type: 'emoji', content: '🙋' }, action: { type: 'trigger_handover', agentType: 'support' } },
  {
    id: 'docs',
    label: 'Open the docs',
    icon: { type: 'url', content: 'https://cdn.example.com/book.png' },
    action: { type: 'open_url', url: 'https://docs.example.com/start', target: '_blank' },
    style: { variant: 'primary' },
    behavior: { closeOnClick: true },
    visibility: { minConfidence: 0.5 },
  },
  { id: 'track', label: 'Track', icon: { type: 'svg', content: '<svg/>' }, action: { type: 'send_event', event: 'clicked', payload: { source: 'answer' } } },
  { id: 'more', label: 'Tell me more', action: { type: 'send_query', query: 'Tell me more about pricing' } },
];

describe(`experiences (${engine})`, () => {
  let server: TestServer;
  let tenantA: { workspaceId: string; token: string };
  let tenantB: { workspaceId: string; token: string };
  let knowledgeBaseOfA: string;
  let secondKnowledgeBaseOfA: string;
  let knowledgeBaseOfB: string;

  const call = (token: string, method: string, path: string, body?: unknown) => server.request(method, path, { token, body });
  async function createIn(token: string, body: Record<string, unknown>): Promise<Record<string, any>> {
    const answer = await call(token, 'POST', '/api/v2/experiences', body);
    assert.equal(answer.status, 201, answer.text);
    return answer.body;
  }
  async function knowledgeBase(token: string, name: string): Promise<string> {
    const answer = await call(token, 'POST', '/api/v2/knowledge-bases', { name });
    assert.equal(answer.status, 201, answer.text);
    return answer.body.id;
  }

  before(async () => {
    server = await startTestServer();
    const scopes = ['experiences:read', 'experiences:write', 'knowledge-bases:write'];
    tenantA = await server.tenant(scopes);
    tenantB = await server.tenant(scopes);
    knowledgeBaseOfA = await knowledgeBase(tenantA.token, 'a1');
    secondKnowledgeBaseOfA = await knowledgeBase(tenantA.token, 'a2');
    knowledgeBaseOfB = await knowledgeBase(tenantB.token, 'b1');
  });
  after(() => server.close());

  test('POST with every field stores them as given; GET reads back the same experience', async () => {
    const input = {
      name: 'Support widget',
      knowledgeBaseIds: [secondKnowledgeBaseOfA, knowledgeBaseOfA],
      requireAuth: true,
      allowedOrigins: ['https://www.example.com', 'https://*.example.org', 'http://localhost:3000'],
      instructions: 'Answer in one paragraph. Cite the handbook.',
      fallbackMessage: 'Please ask our team.',
      actions: everyAction,
      settings: { topK: 8, minScore: 0.25, llmProvider: 'extractive', llmModel: 'none' },
      tools: [],
    };
    const created = await createIn(tenantA.token, input);
    const { id, workspaceId, createdAt, updatedAt, ...fields } = created;
    assert.match(id, UUID);
    assert.equal(workspaceId, tenantA.workspaceId);
    assert.equal(createdAt, updatedAt);
    assert.deepEqual(fields, input);
    const read = await call(tenantA.token, 'GET', `/api/v2/experiences/${id}`);
    assert.equal(read.status, 200);
    assert.deepEqual(read.body, created);
  });

  test('POST with only a name gets the documented defaults', async () => {
    const created = await createIn(tenantA.token, { name: 'Minimal' });
    const { id: _id, workspaceId: _workspaceId, createdAt: _createdAt, updatedAt: _updatedAt, ...fields } = created;
    assert.deepEqual(fields, {
      name: 'Minimal',
      knowledgeBaseIds: [],
      requireAuth: false,
      allowedOrigins: [],
      instructions: '',
      fallbackMessage: DEFAULT_FALLBACK_MESSAGE,
      actions: [],
      settings: {},
      tools: [],
    });
  });

  test('POST validates each action against the spec\'s Action and points at the bad field', async () => {
    const valid = everyAction[3]!;
    const cases: Array<[unknown, string]> = [
      [{ id: 'a', label: 'A', action: { type: 'open_url' } }, '/actions/0/action/url'],
      [{ id: 'a', label: 'A', action: { type: 'open_url', url: 'ftp://files.example.com' } }, '/actions/0/action/url'],
      [{ id: 'a', label: 'A', action: { type: 'open_url', url: 'javascript:alert(1)' } }, '/actions/0/action/url'],
      [{ id: 'a', label: 'A', action: { type: 'open_url', url: 'https://x.com', target: '_parent' } }, '/actions/0/action/target'],
      [{ id: 'a', label: 'A', action: { type: 'send_query' } }, '/actions/0/action/query'],
      [{ id: 'a', label: 'A', action: { type: 'send_query', query: '' } }, '/actions/0/action/query'],
      [{ id: 'a', label: 'A', action: { type: 'send_event' } }, '/actions/0/action/event'],
      [{ id: 'a', label: 'A', action: { type: 'trigger_handover', agentType: '' } }, '/actions/0/action/agentType'],
      [{ id: 'a', label: 'A', action: { type: 'explode' } }, '/actions/0/action/type'],
      [{ id: 'a', label: 'A', action: {} }, '/actions/0/action/type'],
      [{ id: 'a', label: 'A' }, '/actions/0/action'],
      [{ id: 'a', action: { type: 'trigger_handover' } }, '/actions/0/label'],
      [{ label: 'A', action: { type: 'trigger_handover' } }, '/actions/0/id'],
      [{ id: 'a', label: 'A', icon: { type: 'gif', content: 'x' }, action: { type: 'trigger_handover' } }, '/actions/0/icon/type'],
      [{ id: 'a', label: 'A', icon: { type: 'emoji' }, action: { type: 'trigger_handover' } }, '/actions/0/icon/content'],
      [{ id: 'a', label: 'A', onClick: 'x', action: { type: 'trigger_handover' } }, '/actions/0/onClick'],
      [{ id: 'a', label: 'A', style: 'bold', action: { type: 'trigger_handover' } }, '/actions/0/style'],
    ];
    for (const [action, pointer] of cases) {
      const answer = await call(tenantA.token, 'POST', '/api/v2/experiences', { name: 'bad action', actions: [action] });
      assertError(answer, 400, '/v2/experiences', [pointer]);
      const shifted = await call(tenantA.token, 'POST', '/api/v2/experiences', { name: 'bad action', actions: [valid, action] });
      assertError(shifted, 400, '/v2/experiences', [pointer.replace('/actions/0', '/actions/1')]);
    }
  });

  test('POST with duplicate action ids is a 400 at the repeated one', async () => {
    const actions = [everyAction[0], { ...everyAction[3], id: 'x' }, { ...everyAction[1], id: 'x' }];
    const answer = await call(tenantA.token, 'POST', '/api/v2/experiences', { name: 'dup', actions });
    assertError(answer, 400, '/v2/experiences', ['/actions/2/id']);
    assert.equal(answer.body.errors.length, 1);
  });

  test('POST with knowledge bases that are not the workspace\'s own is a 400 at each such index', async () => {
    const foreign = await call(tenantA.token, 'POST', '/api/v2/experiences', { name: 'x', knowledgeBaseIds: [knowledgeBaseOfB] });
    assertError(foreign, 400, '/v2/experiences', ['/knowledgeBaseIds/0']);
    const mixed = await call(tenantA.token, 'POST', '/api/v2/experiences', {
      name: 'x',
      knowledgeBaseIds: [knowledgeBaseOfA, knowledgeBaseOfB, UNKNOWN_ID],
    });
    assertError(mixed, 400, '/v2/experiences', ['/knowledgeBaseIds/1', '/knowledgeBaseIds/2']);
    assert.equal(mixed.body.errors.length, 2);
    assertError(
      await call(tenantA.token, 'POST', '/api/v2/experiences', { name: 'x', knowledgeBaseIds: [knowledgeBaseOfA, knowledgeBaseOfA] }),
      400,
      '/v2/experiences',
      ['/knowledgeBaseIds'],
    );
  });

  test('POST with malformed origin patterns is a 400 at each bad one', async () => {
    const allowedOrigins = ['https://ok.example.com', 'example.com', 'https://exa*mple.com', 'https://example.com/path', 'ftp://x.com', 'https://*.example.com'];
    const answer = await call(tenantA.token, 'POST', '/api/v2/experiences', { name: 'origins', allowedOrigins });
    assertError(answer, 400, '/v2/experiences', ['/allowedOrigins/1', '/allowedOrigins/2', '/allowedOrigins/3', '/allowedOrigins/4']);
    assert.equal(answer.body.errors.length, 4);
    assert.match(answer.body.errors.find((error: { path: string }) => error.path === '/allowedOrigins/4').message, /scheme must be http or https/);
  });

  test('POST with bad settings or unknown fields is a 400 and nothing is created', async () => {
    const before = (await call(tenantA.token, 'GET', '/api/v2/experiences')).body.total;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: '' }, '/name'],
      [{ name: 'x', requireAuth: 'yes' }, '/requireAuth'],
      [{ name: 'x', fallbackMessage: '' }, '/fallbackMessage'],
      [{ name: 'x', settings: { topK: 0 } }, '/settings/topK'],
      [{ name: 'x', settings: { minScore: 1.5 } }, '/settings/minScore'],
      [{ name: 'x', settings: { llmProvider: 'magic' } }, '/settings/llmProvider'],
      [{ name: 'x', settings: { temperature: 2 } }, '/settings/temperature'],
      [{ name: 'x', settings: { widget: { starterQuestions: ['a', 'b', 'c', 'd', 'e'] } } }, '/settings/widget/starterQuestions'],
      [{ name: 'x', settings: { widget: { avatarUrl: 'http://example.com/a.png' } } }, '/settings/widget/avatarUrl'],
      [{ name: 'x', settings: { widget: { imageHosts: ['https://images.example.com'] } } }, '/settings/widget/imageHosts/0'],
      [{ name: 'x', settings: { widget: { greeting: '' } } }, '/settings/widget/greeting'],
      [{ name: 'x', settings: { widget: { color: 'red' } } }, '/settings/widget/color'],
      [{ name: 'x', deleted: true }, '/deleted'],
    ];
    for (const [body, pointer] of cases) {
      assertError(await call(tenantA.token, 'POST', '/api/v2/experiences', body), 400, '/v2/experiences', [pointer]);
    }
    assert.equal((await call(tenantA.token, 'GET', '/api/v2/experiences')).body.total, before);
  });

  test('PATCH changes only the fields it is given', async () => {
    const created = await createIn(tenantA.token, {
      name: 'Before',
      knowledgeBaseIds: [knowledgeBaseOfA],
      allowedOrigins: ['https://a.example.com'],
      instructions: 'Be brief.',
      actions: [everyAction[0]],
      settings: { topK: 3, widget: { assistantName: 'Ada', greeting: 'Hello!', starterQuestions: ['How do I start?'], imageHosts: ['*.example.com'] } },
    });
    assert.deepEqual(created.settings.widget, { assistantName: 'Ada', greeting: 'Hello!', starterQuestions: ['How do I start?'], imageHosts: ['*.example.com'] });
    const path = `/api/v2/experiences/${created.id}`;
    const renamed = await call(tenantA.token, 'PATCH', path, { name: 'After', requireAuth: true });
    assert.equal(renamed.status, 200);
    assert.deepEqual({ ...renamed.body, updatedAt: created.updatedAt }, { ...created, name: 'After', requireAuth: true });
    assert.ok(Date.parse(renamed.body.updatedAt) > Date.parse(created.updatedAt));

    const changes = {
      knowledgeBaseIds: [secondKnowledgeBaseOfA],
      allowedOrigins: [],
      actions: everyAction,
      settings: { minScore: 0.5 },
      fallbackMessage: 'Nothing found.',
    };
    const replaced = await call(tenantA.token, 'PATCH', path, changes);
    assert.equal(replaced.status, 200);
    assert.deepEqual({ ...replaced.body, updatedAt: renamed.body.updatedAt }, { ...renamed.body, ...changes });
    assert.deepEqual((await call(tenantA.token, 'GET', path)).body, replaced.body);
  });

  test('PATCH with invalid fields is a 400 and changes nothing', async () => {
    const created = await createIn(tenantA.token, { name: 'Stable', actions: [everyAction[3]] });
    const path = `/api/v2/experiences/${created.id}`;
    const cases: Array<[Record<string, unknown>, string | undefined]> = [
      [{}, undefined],
      [{ name: 'x', allowedOrigins: ['*.example.com'] }, '/allowedOrigins/0'],
      [{ name: 'x', knowledgeBaseIds: [knowledgeBaseOfB] }, '/knowledgeBaseIds/0'],
      [{ name: 'x', actions: [everyAction[0], everyAction[0]] }, '/actions/1/id'],
      [{ name: 'x', actions: [{ id: 'a', label: 'A', action: { type: 'send_event' } }] }, '/actions/0/action/event'],
      [{ name: 'x', workspaceId: tenantB.workspaceId }, '/workspaceId'],
    ];
    for (const [body, pointer] of cases) {
      assertError(await call(tenantA.token, 'PATCH', path, body), 400, path.slice(4), pointer ? [pointer] : []);
    }
    assert.deepEqual((await call(tenantA.token, 'GET', path)).body, created);
  });

  test('DELETE answers 204, then the experience is gone from GET, PATCH, DELETE and the list', async () => {
    const created = await createIn(tenantA.token, { name: 'Doomed' });
    const path = `/api/v2/experiences/${created.id}`;
    const deleted = await call(tenantA.token, 'DELETE', path);
    assert.equal(deleted.status, 204);
    assert.equal(deleted.text, '');
    assertError(await call(tenantA.token, 'GET', path), 404, path.slice(4));
    assertError(await call(tenantA.token, 'PATCH', path, { name: 'revived' }), 404, path.slice(4));
    assertError(await call(tenantA.token, 'DELETE', path), 404, path.slice(4));
    const listed = (await call(tenantA.token, 'GET', '/api/v2/experiences?limit=100')).body;
    assert.ok(!listed.experiences.some((experience: { id: string }) => experience.id === created.id));
    assert.equal(listed.total, listed.experiences.length);
  });

  test('an unknown id is a 404 and a non-UUID id a 400 on GET, PATCH and DELETE', async () => {
    for (const [method, body] of [['GET', undefined], ['PATCH', { name: 'x' }], ['DELETE', undefined]] as const) {
      assertError(await call(tenantA.token, method, `/api/v2/experiences/${UNKNOWN_ID}`, body), 404, `/v2/experiences/${UNKNOWN_ID}`);
      assertError(await call(tenantA.token, method, '/api/v2/experiences/widget', body), 400, '/v2/experiences/widget', ['params:/id']);
    }
  });

  test('another workspace\'s experience is a 404 on GET, PATCH and DELETE and stays unchanged', async () => {
    const ofB = await createIn(tenantB.token, { name: 'B widget', knowledgeBaseIds: [knowledgeBaseOfB], requireAuth: true });
    const path = `/api/v2/experiences/${ofB.id}`;
    assertError(await call(tenantA.token, 'GET', path), 404, path.slice(4));
    assertError(await call(tenantA.token, 'PATCH', path, { requireAuth: false, allowedOrigins: ['https://evil.example'] }), 404, path.slice(4));
    assertError(await call(tenantA.token, 'DELETE', path), 404, path.slice(4));
    const read = await call(tenantB.token, 'GET', path);
    assert.equal(read.status, 200);
    assert.deepEqual(read.body, ofB);
  });

  test('GET lists experiences newest first with total, limit and offset', async () => {
    const tenant = await server.tenant(['experiences:read', 'experiences:write']);
    const ids: string[] = [];
    for (const name of ['one', 'two', 'three']) ids.push((await createIn(tenant.token, { name })).id);
    const all = await call(tenant.token, 'GET', '/api/v2/experiences');
    assert.equal(all.status, 200);
    assert.deepEqual(Object.keys(all.body).sort(), ['experiences', 'total']);
    assert.equal(all.body.total, 3);
    assert.deepEqual(all.body.experiences.map((experience: { id: string }) => experience.id), [ids[2], ids[1], ids[0]]);
    const page = await call(tenant.token, 'GET', '/api/v2/experiences?limit=2&offset=1');
    assert.deepEqual(page.body, { total: 3, experiences: all.body.experiences.slice(1, 3) });
    for (const [query, pointer] of [['limit=0', 'querystring:/limit'], ['limit=101', 'querystring:/limit'], ['offset=-1', 'querystring:/offset']] as const) {
      assertError(await call(tenant.token, 'GET', `/api/v2/experiences?${query}`), 400, '/v2/experiences', [pointer]);
    }
  });

  test('lists never show another workspace\'s experiences: the isolation matrix', async () => {
    const ofA = await createIn(tenantA.token, { name: 'a listed' });
    const ofB = await createIn(tenantB.token, { name: 'b listed' });
    for (const [tenant, own, foreign] of [[tenantA, ofA, ofB], [tenantB, ofB, ofA]] as const) {
      const listed = await call(tenant.token, 'GET', '/api/v2/experiences?limit=100');
      const ids = listed.body.experiences.map((experience: { id: string }) => experience.id);
      assert.equal(listed.body.total, ids.length);
      assert.ok(ids.includes(own.id) && !ids.includes(foreign.id));
      assert.ok(listed.body.experiences.every((experience: { workspaceId: string }) => experience.workspaceId === tenant.workspaceId));
    }
  });

  test('a token restricted to some knowledge bases may link an experience only to those (403 otherwise)', async () => {
    const restricted = await server.token(tenantA.workspaceId, ['experiences:write', 'experiences:read'], { knowledgeBaseIds: [knowledgeBaseOfA] });
    const refused = await call(restricted, 'POST', '/api/v2/experiences', { name: 'too wide', knowledgeBaseIds: [knowledgeBaseOfA, secondKnowledgeBaseOfA] });
    assertError(refused, 403, '/v2/experiences');
    const allowed = await call(restricted, 'POST', '/api/v2/experiences', { name: 'narrow', knowledgeBaseIds: [knowledgeBaseOfA] });
    assert.equal(allowed.status, 201);
    const widened = await call(restricted, 'PATCH', `/api/v2/experiences/${allowed.body.id}`, { knowledgeBaseIds: [secondKnowledgeBaseOfA] });
    assertError(widened, 403, `/v2/experiences/${allowed.body.id}`);
    assert.deepEqual((await call(restricted, 'GET', `/api/v2/experiences/${allowed.body.id}`)).body.knowledgeBaseIds, [knowledgeBaseOfA]);
  });
});
