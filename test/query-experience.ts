/** A workspace with a small ingested knowledge base and an experience over it, for query tests. */
import type { Answer, TestServer } from './test-server.ts';
import { createKnowledgeBase, ingest } from './ingestion.ts';

/** Help articles of a made-up shop, shared by the query tests that need a few answers. */
export const shopArticles = [
  {
    id: 'refunds',
    title: 'Refund policy',
    url: 'https://shop.example/help/refunds',
    content: 'Refunds are paid back to the original payment method within 5 business days after the returned item arrives.',
  },
  {
    id: 'shipping',
    title: 'Shipping times',
    url: 'https://shop.example/help/shipping',
    content: 'Orders ship from our warehouse within 24 hours. Delivery takes 2 to 4 days in Europe.',
  },
];

export type QueryExperience = { workspaceId: string; token: string; knowledgeBaseId: string; experienceId: string };

const records = [
  {
    id: 'returns',
    title: 'Returning an item',
    url: 'https://shop.example/help/returns',
    content: 'Items can be returned within 30 days of delivery. Print the return label from your order page.',
  },
];

/**
 * A new workspace (token with every scope), a knowledge base holding one help article, and an
 * experience over it with `fields` (allowedOrigins, requireAuth, settings...).
 */
export async function createQueryExperience(server: TestServer, fields: Record<string, unknown> = {}): Promise<QueryExperience> {
  const { workspaceId, token } = await server.tenant();
  const knowledgeBaseId = await createKnowledgeBase(server, token);
  const job = await ingest(server, token, knowledgeBaseId, records);
  if (job.status !== 'completed') throw new Error(`ingestion: ${JSON.stringify(job)}`);
  const experience = await server.request('POST', '/api/v2/experiences', {
    token,
    body: { name: 'help', knowledgeBaseIds: [knowledgeBaseId], ...fields },
  });
  if (experience.status !== 201) throw new Error(`experience: ${experience.status} ${experience.text}`);
  return { workspaceId, token, knowledgeBaseId, experienceId: experience.body.id };
}

/** How a query is sent: a browser's Origin, a bearer token, a session to continue. */
export type Caller = { origin?: string; token?: string; sessionId?: string };

/** POST /api/v2/query asking about returns, as `caller`, to a TestServer or another server that speaks like one. */
export function askAboutReturns(server: Pick<TestServer, 'request'>, experienceId: string, caller: Caller = {}): Promise<Answer> {
  const body: Record<string, unknown> = { text: 'How long do I have to return an item?', experienceId };
  if (caller.sessionId) body.sessionId = caller.sessionId;
  return server.request('POST', '/api/v2/query', {
    body,
    token: caller.token,
    headers: caller.origin === undefined ? {} : { origin: caller.origin },
  });
}
