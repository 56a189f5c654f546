/** Helpers for tests that submit ingestion jobs and wait for them. */
import type { Answer, TestServer } from './test-server.ts';

export type GenericRecord = {
  id: string;
  content?: string;
  title?: string;
  contentType?: 'text' | 'markdown' | 'code' | 'qa_pair';
  url?: string;
  tags?: string[];
  metadata?: Record<string, unknown>;
  deleted?: boolean;
};

/** Submits a generic-json job; throws unless the answer is 202. */
export async function submit(server: TestServer, token: string, knowledgeBaseId: string, records: GenericRecord[]): Promise<string> {
  const answer = await server.request('POST', '/api/v2/data-ingestion/jobs', {
    token,
    body: { adapterType: 'generic-json', knowledgeBaseId, data: { records } },
  });
  if (answer.status !== 202) throw new Error(`submit: ${answer.status} ${answer.text}`);
  return answer.body.jobId;
}

/** A content-hub item; more than 100 keywords make it a failed record. */
export function hubItem(id: string, topic: string, keywords = 1) {
  return {
    content: {
      documentIdentifier: id,
      parseImage: false,
      deleted: false,
      inlineContent: { textContent: { data: `&lt;h1&gt;${topic}&lt;/h1&gt;&lt;p&gt;How ${topic} works, step by step.&lt;/p&gt;` }, type: 'TEXT' },
    },
    metadata: {
      inlineAttributes: [{ key: 'keywords', value: { stringValue: Array.from({ length: keywords }, (_, index) => `k${index}`).join(', '), type: 'STRING' } }],
    },
  };
}

/** Polls a job until `until` holds (default: a terminal status), failing after `timeoutMs`. */
export async function waitForJob(
  server: TestServer,
  token: string,
  jobId: string,
  until: (job: any) => boolean = (job) => ['completed', 'failed', 'cancelled'].includes(job.status),
  timeoutMs = 60_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: Answer | undefined;
  while (Date.now() < deadline) {
    last = await server.request('GET', `/api/v2/data-ingestion/jobs/${jobId}`, { token });
    if (last.status !== 200) throw new Error(`job ${jobId}: ${last.status} ${last.text}`);
    if (until(last.body)) return last.body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`job ${jobId} did not reach the expected state in ${timeoutMs} ms; last: ${JSON.stringify(last?.body).slice(0, 500)}`);
}

/** Submits and waits for completion; returns the finished job. */
export async function ingest(server: TestServer, token: string, knowledgeBaseId: string, records: GenericRecord[]): Promise<any> {
  return waitForJob(server, token, await submit(server, token, knowledgeBaseId, records));
}

export async function createKnowledgeBase(server: TestServer, token: string, extra: Record<string, unknown> = {}): Promise<string> {
  const answer = await server.request('POST', '/api/v2/knowledge-bases', { token, body: { name: 'kb', ...extra } });
  if (answer.status !== 201) throw new Error(`knowledge base: ${answer.status} ${answer.text}`);
  return answer.body.id;
}

/** Realistic Markdown of about `size` characters, deterministic for a seed. */
export function markdownDocument(seed: number, size = 2000): string {
  const topics = ['billing', 'refunds', 'shipping', 'accounts', 'security', 'exports', 'webhooks', 'pricing', 'support', 'limits'];
  const topic = topics[seed % topics.length]!;
  const sentences = [
    `The ${topic} settings are found under the workspace menu.`,
    `Administrators can change ${topic} rules at any time, and changes apply to new requests only.`,
    `When a ${topic} request fails, the dashboard shows the reason and a link to retry it.`,
    `Every ${topic} change is recorded in the audit log with the user, the time and the previous value.`,
    `Document ${seed} explains how ${topic} interacts with the rest of the product.`,
    `For large teams, ${topic} can be delegated to a group instead of a single person.`,
  ];
  let text = `# ${topic[0]!.toUpperCase()}${topic.slice(1)} guide ${seed}\n\n`;
  let index = seed;
  while (text.length < size) {
    if (index % 7 === 0) text += `\n## Section ${index}\n\n`;
    text += `${sentences[index % sentences.length]} `;
    if (index % 3 === 0) text += '\n\n';
    index += 1;
  }
  return text;
}
