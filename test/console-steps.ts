/**
 * Steps the operator console's browser tests share: signing in, opening a section, waiting for
 * text, checking that a view fits. Nothing here depends on the engine of the run (console-page.ts
 * adds what does).
 */
import assert from 'node:assert/strict';
import type { BrowserContextOptions, Locator, Page } from 'playwright-core';
import { launchBrowser, type TestBrowser } from './browser.ts';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from './fake-openai.ts';
import { createKnowledgeBase } from './ingestion.ts';
import type { TestServer } from './test-server.ts';

export const WAIT_MS = 20_000;

/** The sizes every console test runs at: a desktop and a phone (issue 11: every page fits 390 px). */
export const viewports = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];

/** Waits until the locator's text contains `text` (polling, as the console updates live). */
export async function waitForText(locator: Locator, text: string | RegExp, timeoutMs = WAIT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = (await locator.count()) > 0 ? await locator.first().innerText() : '';
    if (typeof text === 'string' ? last.includes(text) : text.test(last)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`expected ${String(text)} in ${String(locator)}; last text: ${JSON.stringify(last)}`);
}

/** Opens a section of the console from its navigation bar. */
export async function openSection(page: Page, name: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true }).click();
}

/** Signs in to the console at `serverUrl` with a client's id and secret. */
export async function signInConsole(page: Page, serverUrl: string, client: { clientId: string; clientSecret: string }): Promise<void> {
  await page.goto(`${serverUrl}/console`);
  await page.getByLabel('Client id').fill(client.clientId);
  await page.getByLabel('Client secret').fill(client.clientSecret);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Sections' }).waitFor();
}

/** A browser signed in to the console at `serverUrl`; close it in `after`. */
export async function signedInBrowser(serverUrl: string, client: { clientId: string; clientSecret: string }, options: BrowserContextOptions = {}): Promise<TestBrowser> {
  const browser = await launchBrowser(options);
  await signInConsole(browser.page, serverUrl, client);
  return browser;
}

/**
 * Fails when the page is wider than its viewport (it would scroll sideways) or a control (link,
 * button, field, progress bar) reaches past either edge; `where` names the view.
 */
export async function assertFits(page: Page, where: string): Promise<void> {
  const width = page.viewportSize()?.width ?? 0;
  const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(scrollWidth <= width, `${where} fits ${width} px; it is ${scrollWidth} px wide`);
  const offScreen = await page.evaluate((viewportWidth) => {
    const controls = Array.from(document.querySelectorAll<HTMLElement>('a, button, input, select, textarea, [role="progressbar"]'));
    return controls
      .filter((control) => control.getClientRects().length > 0 && !control.closest('.visually-hidden'))
      .map((control) => ({ control, box: control.getBoundingClientRect() }))
      .filter(({ box }) => box.width > 0 && (box.left < -0.5 || box.right > viewportWidth + 0.5))
      .map(({ control, box }) => `${control.tagName.toLowerCase()} "${(control.innerText || control.getAttribute('aria-label') || '').trim().slice(0, 40)}" at ${Math.round(box.left)}–${Math.round(box.right)} px`);
  }, width);
  assert.deepEqual(offScreen, [], `${where}: no control is off-screen at ${width} px`);
}

/**
 * What a console test drives: a test server embedding with a fake, a workspace with a client and
 * a token of every scope, a knowledge base, and Chromium signed in to the console.
 */
export type ConsoleSession = {
  server: TestServer;
  fake: FakeOpenAi;
  browser: TestBrowser;
  page: Page;
  token: string;
  knowledgeBaseId: string;
  close(): Promise<void>;
};

/**
 * Starts a `ConsoleSession` for a workspace named `workspace`, on a server of `startServer`
 * (harness.ts's on the run's engine, or test-server.ts's embedded one); close it in `after`.
 */
export async function startConsoleSession(workspace: string, startServer: (overrides: Record<string, string>) => Promise<TestServer>): Promise<ConsoleSession> {
  const fake = await startFakeOpenAi();
  const server = await startServer(fakeEmbeddingsEnv(fake));
  const bundle = await server.request('GET', '/console.js');
  assert.equal(bundle.status, 200, 'dist/web/console.js is missing: run `npm run build` first');
  const workspaceId = await server.createWorkspace(workspace);
  const credentials = await server.createClient(workspaceId, ['*']);
  const token = await server.token(workspaceId, ['*']);
  const knowledgeBaseId = await createKnowledgeBase(server, token, { name: 'Help center' });
  const browser = await launchBrowser();
  await signInConsole(browser.page, server.url, credentials);
  return {
    server,
    fake,
    browser,
    page: browser.page,
    token,
    knowledgeBaseId,
    close: async () => {
      await browser.close();
      await server.close();
      await fake.close();
    },
  };
}
