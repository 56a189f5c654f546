/** Steps the operator console's browser tests share (console-steps.ts), and the pictures of docs/images/. */
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { engine } from './harness.ts';

export * from './console-steps.ts';

/**
 * Whether this run retakes the pictures in docs/images/: only with LORE_SCREENSHOTS=1, so that a
 * plain test run leaves the checkout clean, and only on the embedded engine (one set of pictures).
 */
export const retakeScreenshots = process.env.LORE_SCREENSHOTS === '1' && engine === 'pglite';

/**
 * Saves the page as docs/images/<name> when retakeScreenshots holds: the viewport, or with
 * `clip` that part of the whole page (page coordinates, below the fold too).
 */
export async function docsScreenshot(page: Page, name: string, clip?: { x: number; y: number; width: number; height: number }): Promise<void> {
  if (!retakeScreenshots) return;
  await page.screenshot({ path: fileURLToPath(new URL(`../docs/images/${name}`, import.meta.url)), ...(clip ? { clip, fullPage: true } : {}) });
}
