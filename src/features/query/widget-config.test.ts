/**
 * GET /api/v2/experiences/{id}/widget: the widget's presentation of an experience, under the
 * query's access rules (404, 403 for a refused origin or another workspace's token, 401 where a
 * token is required), CORS and rate limits (counted apart from the questions).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertExactError } from '../../../test/assert-error.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const SHOP = 'https://shop.example';

const widget = {
  assistantName: 'Aria',
  avatarUrl: 'https://cdn.shop.example/aria.png',
  greeting: 'Hi! I answer questions about orders and returns.',
  starterQuestions: ['How do I return an item?', 'How long does delivery take?'],
  imageHosts: ['images.shop.example', '*.cdn.example'],
};
const actions = [
  { id: 'delivery', label: 'Delivery times', action: { type: 'send_query', query: 'How long does delivery take?' } },
  { id: 'human', label: 'Talk to a person', action: { type: 'trigger_handover', agentType: 'support' }, visibility: { when: 'unanswered' } },
  { id: 'billing', label: 'Billing team', action: { type: 'trigger_handover', agentType: 'billing' } },
];

describe(`GET /api/v2/experiences/{id}/widget (${engine})`, () => {
  let server: TestServer;
  let token: string;

  async function createExperience(body: Record<string, unknown>): Promise<string> {
    const answer = await server.request('POST', '/api/v2/experiences', { token, body: { name: 'shop', ...body } });
    assert.equal(answer.status, 201, answer.text);
    return answer.body.id;
  }
  const read = (id: string, options: { token?: string; headers?: Record<string, string> } = {}) => server.request('GET', `/api/v2/experiences/${id}/widget`, options);

  before(async () => {
    server = await startTestServer();
    ({ token } = await server.tenant(['*']));
  });
  after(async () => {
    await server?.close();
  });

  test('the widget settings and the first trigger_handover action (whatever its visibility), nothing else', async () => {
    const id = await createExperience({ actions, settings: { topK: 3, widget }, instructions: 'Internal: never mention the warehouse.' });
    const answer = await read(id);
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(answer.body, {
      experienceId: id,
      assistantName: 'Aria',
      avatarUrl: 'https://cdn.shop.example/aria.png',
      greeting: 'Hi! I answer questions about orders and returns.',
      starterQuestions: ['How do I return an item?', 'How long does delivery take?'],
      imageHosts: ['images.shop.example', '*.cdn.example'],
      handover: { actionId: 'human', label: 'Talk to a person', agentType: 'support' },
    });
  });

  test('an experience without widget settings or handover: nulls and empty lists', async () => {
    const id = await createExperience({ actions: [actions[0]] });
    assert.deepEqual((await read(id)).body, {
      experienceId: id,
      assistantName: null,
      avatarUrl: null,
      greeting: null,
      starterQuestions: [],
      imageHosts: [],
      handover: null,
    });
    const withoutAgent = await createExperience({ actions: [{ id: 'human', label: 'A person', action: { type: 'trigger_handover' } }], settings: { widget: { greeting: 'Hello.' } } });
    assert.deepEqual((await read(withoutAgent)).body, {
      experienceId: withoutAgent,
      assistantName: null,
      avatarUrl: null,
      greeting: 'Hello.',
      starterQuestions: [],
      imageHosts: [],
      handover: { actionId: 'human', label: 'A person', agentType: null },
    });
  });

  test('404: an unknown or a deleted experience; 400: an id that is not a UUID', async () => {
    assert.equal(assertExactError(await read(UNKNOWN_ID), 404, `/v2/experiences/${UNKNOWN_ID}/widget`), `Experience ${UNKNOWN_ID} does not exist.`);
    const id = await createExperience({});
    assert.equal((await server.request('DELETE', `/api/v2/experiences/${id}`, { token })).status, 204);
    assert.equal(assertExactError(await read(id), 404, `/v2/experiences/${id}/widget`), `Experience ${id} does not exist.`);
    assertExactError(await read('nope'), 400, '/v2/experiences/nope/widget', { errors: [{ path: 'params:/id', message: 'must be a UUID' }] });
  });

  test('allowedOrigins: an allowed origin may read it (CORS), another origin or none gets 403 without CORS headers', async () => {
    const id = await createExperience({ allowedOrigins: [SHOP], settings: { widget } });
    const allowed = await read(id, { headers: { origin: SHOP } });
    assert.equal(allowed.status, 200, allowed.text);
    assert.equal(allowed.headers.get('access-control-allow-origin'), SHOP);
    assert.equal(allowed.headers.get('vary'), 'Origin');

    const refused = await read(id, { headers: { origin: 'https://evil.example' } });
    assert.equal(assertExactError(refused, 403, `/v2/experiences/${id}/widget`), `The origin https://evil.example is not allowed for experience ${id}.`);
    assert.equal(refused.headers.get('access-control-allow-origin'), null);
    const noOrigin = await read(id);
    assert.equal(
      assertExactError(noOrigin, 403, `/v2/experiences/${id}/widget`),
      `Experience ${id} only answers the origins in its allowedOrigins, and the request has no Origin header.`,
    );
  });

  test('a preflight for a GET with a token is allowed from any origin', async () => {
    const preflight = await server.request('OPTIONS', `/api/v2/experiences/${UNKNOWN_ID}/widget`, {
      headers: { origin: SHOP, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), SHOP);
    assert.equal(preflight.headers.get('access-control-allow-methods'), 'GET, OPTIONS');
    assert.equal(preflight.headers.get('access-control-allow-headers'), 'authorization, content-type, accept, x-request-id');
  });

  test('requireAuth: 401 without a token, 403 with another workspace\'s, 200 with one holding query:execute', async () => {
    const id = await createExperience({ requireAuth: true, settings: { widget: { assistantName: 'Private' } } });
    assert.equal(
      assertExactError(await read(id), 401, `/v2/experiences/${id}/widget`),
      `Experience ${id} requires a bearer access token with the scope query:execute.`,
    );
    const other = await server.tenant(['query:execute']);
    assert.equal(
      assertExactError(await read(id, { token: other.token }), 403, `/v2/experiences/${id}/widget`),
      `The access token belongs to another workspace than experience ${id}.`,
    );
    const answer = await read(id, { token });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.assistantName, 'Private');
  });

  test('429 past the per-address budget, counted apart from the questions', async () => {
    const id = await createExperience({ fallbackMessage: 'No idea.', settings: { rateLimit: { ipPerMinute: 1 } } });
    assert.equal((await read(id)).status, 200);
    const refused = await read(id);
    assert.match(
      assertExactError(refused, 429, `/v2/experiences/${id}/widget`),
      /^Too many widget configuration requests from this address \(1 per minute\); retry in \d+ s\.$/,
    );
    assert.match(refused.headers.get('retry-after') ?? '', /^\d+$/);
    const question = await server.request('POST', '/api/v2/query', { body: { experienceId: id, text: 'Anything?' } });
    assert.equal(question.status, 200, 'reading the configuration spent none of the question budget');
  });
});
