/** Steps the operator console's browser tests share: signing in, opening a section, waiting for text. */
import assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';

export const WAIT_MS = 20_000;

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

/** Fails when the page is wider than its viewport (it would scroll sideways); `where` names the view. */
export async function assertFits(page: Page, where: string): Promise<void> {
  const width = page.viewportSize()?.width ?? 0;
  const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(scrollWidth <= width, `${where} fits ${width} px; it is ${scrollWidth} px wide`);
}
