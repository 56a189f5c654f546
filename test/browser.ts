/**
 * Drives Debian's Chromium (scripts/install-chromium.sh installs it) through playwright-core, so
 * the web pages are tested in a real browser without downloading one at install time.
 */
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Flags for a headless browser in a container: no sandbox (it needs user namespaces the CI
 * container lacks), no GPU, and none of the background traffic (updates, sync, first-run pages)
 * that would make a test depend on the network.
 */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
];

/** A launched browser with one page; `close()` ends the browser process. */
export type TestBrowser = {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** Messages the page logged at level `error` and uncaught page errors, for assertions. */
  pageErrors: string[];
  close(): Promise<void>;
};

/** Launches Chromium with one context (its own storage) and one page. Close it in `after`. */
export async function launchBrowser(contextOptions: BrowserContextOptions = {}): Promise<TestBrowser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
  try {
    const context = await browser.newContext(contextOptions);
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text());
    });
    return {
      browser,
      context,
      page,
      pageErrors,
      async close() {
        await context.close();
        await browser.close();
      },
    };
  } catch (error) {
    await browser.close();
    throw error;
  }
}
