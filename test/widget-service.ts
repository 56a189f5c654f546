/** The service and browser behind the widget's browser tests, set up once per test file. */
import type { BrowserContext, Page } from 'playwright-core';
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

/** A fresh visitor of `service`'s experience at one size, with the demo page open and the panel open. */
export async function openWidget(service: WidgetService, viewport: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }> {
  const context = await service.browser.browser.newContext({ viewport: { width: viewport.width, height: viewport.height } });
  const page = await context.newPage();
  await page.goto(`${service.server.url}/demo?experienceId=${service.experienceId}`);
  await page.locator('lore-chat .launcher').click();
  await page.getByRole('dialog', { name: 'Ask a question' }).waitFor();
  return { context, page };
}

/** Sends a question and waits until its answer is complete (no longer aria-busy). */
export async function askWidget(page: Page, text: string): Promise<void> {
  const count = await page.locator('lore-chat article.assistant').count();
  await page.getByRole('textbox', { name: 'Your question' }).fill(text);
  await page.getByRole('textbox', { name: 'Your question' }).press('Enter');
  await page.locator(`lore-chat article.assistant[aria-busy="false"] >> nth=${count}`).waitFor();
}
