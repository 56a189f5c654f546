/**
 * The resources the fuzz aims at, created through the API before it starts: two workspaces (the
 * caller's and a foreign one), their clients, knowledge bases, experiences and sessions, and in
 * the caller's an ingested job with its entry, an answered query and a webhook endpoint (another
 * in the foreign one). `snapshot` reads them all
 * back, with every list, so that a run can prove it changed nothing.
 */
import { fakeEmbeddingsEnv, type FakeOpenAi } from '../fake-openai.ts';
import { ADMIN_KEY, type TestServer } from '../harness.ts';
import { createKnowledgeBase, ingest } from '../ingestion.ts';
import type { BodyLimits } from './requests.ts';
import type { FuzzFixture } from './wire.ts';

const MB = 1024 * 1024;

/** Body limits the fuzz server runs with: low, so that bodies over them stay cheap to send. */
export const fuzzLimits: BodyLimits = { defaultJson: 1 * MB, ingestionJson: 2 * MB, multipart: 2 * MB };

/**
 * Environment of the server under fuzz: instant fake embeddings, and rate limits out of reach
 * (the query route answers 429 after 60 anonymous requests a minute otherwise, and a 429 stops
 * the input before the handler).
 */
export function fuzzServerEnv(fake: FakeOpenAi): Record<string, string> {
  return {
    ...fakeEmbeddingsEnv(fake),
    RATE_LIMIT_IP_PER_MINUTE: '1000000',
    RATE_LIMIT_SESSION_PER_MINUTE: '1000000',
    RATE_LIMIT_WORKSPACE_PER_MINUTE: '1000000',
    JSON_BODY_LIMIT_MB: String(fuzzLimits.ingestionJson / MB),
    MULTIPART_LIMIT_MB: String(fuzzLimits.multipart / MB),
  };
}

async function expectStatus(server: TestServer, status: number, method: string, path: string, options: Parameters<TestServer['request']>[2]): Promise<any> {
  const answer = await server.request(method, path, options);
  if (answer.status !== status) throw new Error(`fixture: ${method} ${path} answered ${answer.status} ${answer.text.slice(0, 500)}`);
  return answer.body;
}

/** A workspace with an all-scope client; the token comes through the real grant. */
async function workspaceWithClient(server: TestServer, name: string, scopes: string[] = ['*']) {
  const workspaceId = await server.createWorkspace(name);
  const client = await server.createClient(workspaceId, scopes);
  const token = await grant(server, client);
  return { workspaceId, clientRowId: client.id, token };
}

async function grant(server: TestServer, client: { clientId: string; clientSecret: string }): Promise<string> {
  const body = await expectStatus(server, 200, 'POST', '/v2/auth/access-tokens', { body: { clientId: client.clientId, clientSecret: client.clientSecret } });
  return body.access_token;
}

async function experienceAndSession(server: TestServer, token: string, knowledgeBaseId: string) {
  const experience = await expectStatus(server, 201, 'POST', '/api/v2/experiences', { token, body: { name: 'fuzz', knowledgeBaseIds: [knowledgeBaseId] } });
  const session = await expectStatus(server, 201, 'POST', '/api/v2/sessions', {
    token,
    body: { experienceId: experience.id, userId: 'fuzz-user', metadata: { source: 'fuzz', nested: { list: [1, 'two'] } } },
  });
  return { experienceId: experience.id as string, sessionId: session.id as string };
}

/** The fixture: resources in the caller's workspace and a foreign one, and the tokens to reach them. */
export async function createFuzzFixture(server: TestServer): Promise<{ fixture: FuzzFixture; reads: Read[] }> {
  const own = await workspaceWithClient(server, 'fuzz');
  const foreign = await workspaceWithClient(server, 'fuzz-foreign');
  const lowScopeClient = await server.createClient(own.workspaceId, ['query:execute']);
  const lowScope = await grant(server, lowScopeClient);

  const knowledgeBaseId = await createKnowledgeBase(server, own.token);
  const job = await ingest(server, own.token, knowledgeBaseId, [
    { id: 'returns', title: 'Returning an item', content: 'Items can be returned within 30 days of delivery.', tags: ['help'], metadata: { lang: 'en' } },
  ]);
  if (job.status !== 'completed') throw new Error(`fixture: ingestion ${JSON.stringify(job).slice(0, 500)}`);
  const entryId: string = job.data.results[0].entryId;
  const { experienceId, sessionId } = await experienceAndSession(server, own.token, knowledgeBaseId);
  const query = await expectStatus(server, 200, 'POST', '/api/v2/query', { body: { text: 'How long do I have to return an item?', experienceId } });

  const foreignKnowledgeBaseId = await createKnowledgeBase(server, foreign.token);
  const foreignSide = await experienceAndSession(server, foreign.token, foreignKnowledgeBaseId);
  // Created after the job, so no delivery is due: the fuzz changes nothing that would make one.
  const webhook = { url: 'https://hooks.example.com/lore', events: ['job.completed'], description: 'fuzz' };
  const ownWebhook = await expectStatus(server, 201, 'POST', '/api/v2/webhooks', { token: own.token, body: webhook });
  const foreignWebhook = await expectStatus(server, 201, 'POST', '/api/v2/webhooks', { token: foreign.token, body: webhook });

  const fixture: FuzzFixture = {
    ids: {
      workspace: { own: own.workspaceId, foreign: foreign.workspaceId },
      client: { own: own.clientRowId, foreign: foreign.clientRowId },
      knowledgeBase: { own: knowledgeBaseId, foreign: foreignKnowledgeBaseId },
      experience: { own: experienceId, foreign: foreignSide.experienceId },
      job: { own: job.id },
      entry: { own: entryId },
      session: { own: sessionId, foreign: foreignSide.sessionId },
      query: { own: query.queryId },
      webhook: { own: ownWebhook.id, foreign: foreignWebhook.id },
    },
    tokens: { own: own.token, lowScope, foreign: foreign.token },
    adminKey: ADMIN_KEY,
    tokenSecret: server.context.secrets.tokenSecret,
  };
  const reads: Read[] = [
    ...workspaceReads(own.token, { knowledgeBaseId, experienceId, sessionId }),
    ...workspaceReads(foreign.token, { knowledgeBaseId: foreignKnowledgeBaseId, ...foreignSide }),
    { path: `/api/v2/sessions/${query.sessionId}`, token: own.token },
    { path: `/api/v2/data-ingestion/jobs/${job.id}?includePayload=true`, token: own.token },
    { path: `/api/v2/knowledge-bases/${knowledgeBaseId}/entries/${entryId}`, token: own.token },
    { path: `/api/v2/knowledge-bases/${knowledgeBaseId}/entries?limit=100`, token: own.token },
    { path: `/api/v2/webhooks/${ownWebhook.id}`, token: own.token },
    { path: `/api/v2/webhooks/${foreignWebhook.id}`, token: foreign.token },
    { path: '/api/v2/webhooks?limit=100', token: own.token },
    { path: `/api/v2/webhooks/${ownWebhook.id}/deliveries`, token: own.token },
    { path: `/api/v2/admin/workspaces/${own.workspaceId}`, token: ADMIN_KEY },
    { path: `/api/v2/admin/workspaces/${foreign.workspaceId}`, token: ADMIN_KEY },
    { path: '/api/v2/admin/workspaces?limit=100', token: ADMIN_KEY },
  ];
  return { fixture, reads };
}

/** One GET whose answer must not change, with the token that reads it. */
export type Read = { path: string; token: string };

function workspaceReads(token: string, ids: { knowledgeBaseId: string; experienceId: string; sessionId: string }): Read[] {
  return [
    `/api/v2/knowledge-bases/${ids.knowledgeBaseId}`,
    `/api/v2/experiences/${ids.experienceId}`,
    `/api/v2/sessions/${ids.sessionId}`,
    '/api/v2/knowledge-bases?limit=100',
    '/api/v2/experiences?limit=100',
    '/api/v2/data-ingestion/jobs?limit=100',
    '/api/v2/sessions?limit=100',
    '/api/v2/access-token-clients',
  ].map((path) => ({ path, token }));
}

/** Every read's answer, keyed by its path and the workspace it was read as. */
export async function snapshot(server: TestServer, reads: Read[]): Promise<Record<string, unknown>> {
  const result: Record<string, unknown> = {};
  for (const [index, read] of reads.entries()) {
    result[`${index} ${read.path}`] = await expectStatus(server, 200, 'GET', read.path, { token: read.token });
  }
  return result;
}
