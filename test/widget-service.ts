/** The service and browser behind the widget's browser tests, set up once per test file. */
import type { TestBrowser } from './browser.ts';
import { launchBrowser } from './browser.ts';
import { fakeChatEnv, fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from './fake-openai.ts';
import { createKnowledgeBase, ingest, type GenericRecord } from './ingestion.ts';
import type { TestServer } from './test-server.ts';

export type WidgetService = {
  /** Answers the questions: a test scripts them in `fake.chat.replies`. */
  fake: FakeOpenAi;
  server: TestServer;
  /** A token of the experience's workspace, with every scope. */
  token: string;
  experienceId: string;
  browser: TestBrowser;
  close(): Promise<void>;
};

/**
 * A lore service whose answers come from the fake OpenAI-compatible server, a knowledge base
 * holding `records`, an experience over it with the fields of `experience` (name, actions,
 * settings…), and Chromium, on a server of `startServer` (harness.ts's on the run's engine, or
 * test-server.ts's embedded one). Whatever started is closed again if a later step fails.
 */
export async function startWidgetService(
  records: GenericRecord[],
  experience: Record<string, unknown>,
  startServer: (overrides: Record<string, string>) => Promise<TestServer>,
): Promise<WidgetService> {
  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const closer of closers.reverse()) await closer();
  };
  try {
    const fake = await startFakeOpenAi();
    closers.push(() => fake.close());
    const server = await startServer({ ...fakeEmbeddingsEnv(fake), ...fakeChatEnv(fake, 10_000) });
    closers.push(() => server.close());
    const { token } = await server.tenant();
    const knowledgeBaseId = await createKnowledgeBase(server, token);
    const job = await ingest(server, token, knowledgeBaseId, records);
    if (job.status !== 'completed') throw new Error(`ingestion: ${JSON.stringify(job)}`);
    const created = await server.request('POST', '/api/v2/experiences', { token, body: { name: 'widget', knowledgeBaseIds: [knowledgeBaseId], ...experience } });
    if (created.status !== 201) throw new Error(`experience: ${created.status} ${created.text}`);
    const browser = await launchBrowser();
    closers.push(() => browser.close());
    return { fake, server, token, experienceId: created.body.id, browser, close };
  } catch (error) {
    await close();
    throw error;
  }
}
