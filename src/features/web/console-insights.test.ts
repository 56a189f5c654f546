/**
 * The console's Insights page and session list in headless Chromium against the real server, at a
 * desktop (1280×800) and a phone (390×844) width, over queries seeded in the last days: the tiles
 * show the period's totals, uPlot (loaded only when the page is first opened) draws each chart,
 * the content gaps group a question with its paraphrase and link to their sessions; the session
 * list names each session by its first question and experience, and its feedback and unanswered
 * filters narrow it. Nothing scrolls sideways on the phone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { launchBrowser, type TestBrowser } from '../../../test/browser.ts';
import { assertFits, openSection, signInConsole, viewports, waitForText } from '../../../test/console-page.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { seedSession, type SeededQuery } from '../../../test/seed-queries.ts';

const DAY_MS = 86_400_000;

/** Pixels of a canvas within 40 of an RGB colour on each channel: the chart drew that series. */
async function pixelsOf(page: Page, canvasIndex: number, [red, green, blue]: [number, number, number]): Promise<number> {
  return page.locator('.chart canvas').nth(canvasIndex).evaluate(
    (element, colour) => {
      const canvas = element as HTMLCanvasElement;
      const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
      let count = 0;
      for (let index = 0; index < data.length; index += 4) {
        if (colour.every((channel, offset) => Math.abs(data[index + offset]! - channel) < 40)) count++;
      }
      return count;
    },
    [red, green, blue] as const,
  );
}

describe(`console Insights page and session list in Chromium (${engine})`, () => {
  let server: TestServer;
  let browser: TestBrowser;
  let page: Page;
  let sessions: Record<string, string>;
  let experienceIds: Record<string, string>;
  let today: number;
  const chartRequests: string[] = [];

  before(async () => {
    // The default encoder (builtin-fast), which groups the paraphrases below.
    server = await startTestServer();
    const bundle = await server.request('GET', '/console-charts.js');
    assert.equal(bundle.status, 200, 'dist/web/console-charts.js is missing: run `npm run build` first');
    const workspaceId = await server.createWorkspace('console-insights');
    const credentials = await server.createClient(workspaceId, ['*']);
    const token = await server.token(workspaceId, ['*']);
    const experience = async (name: string) => (await server.request('POST', '/api/v2/experiences', { token, body: { name } })).body.id as string;
    const support = await experience('Support');
    const sales = await experience('Sales');
    experienceIds = { support, sales };
    // Two and one days ago (UTC), well inside the page's default period of 30 days.
    today = Date.parse(new Date().toISOString().slice(0, 10));
    const at = (daysAgo: number, hour: number) => new Date(today - daysAgo * DAY_MS + hour * 3_600_000).toISOString();
    const seed = async (experienceId: string, queries: SeededQuery[]) => (await seedSession(server.context.db, workspaceId, experienceId, queries)).sessionId;
    sessions = {
      first: await seed(support, [
        { text: 'How do I reset my password?', grounded: false, at: at(2, 8), latencyMs: 100 },
        { text: 'What are your opening hours?', grounded: true, at: at(2, 10), latencyMs: 200, rating: 'up' },
      ]),
      second: await seed(support, [{ text: 'password reset not working', grounded: false, at: at(2, 9), latencyMs: 300 }]),
      third: await seed(support, [
        { text: 'Do you ship to Canada?', grounded: false, at: at(1, 8), latencyMs: 500 },
        { text: 'How do I reset my password?', grounded: true, at: at(1, 9), latencyMs: 400, rating: 'down' },
        { text: 'Is there a student discount?', grounded: true, at: at(1, 10), latencyMs: 600, rating: 'up' },
      ]),
      sales: await seed(sales, [{ text: 'How much does the premium plan cost?', grounded: true, at: at(1, 12), latencyMs: 50 }]),
    };
    browser = await launchBrowser();
    page = browser.page;
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/console-charts.js') chartRequests.push(request.url());
    });
    await signInConsole(page, server.url, credentials);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  for (const viewport of viewports) {
    test(`Insights: totals, charts with data, and content gaps grouped and linked to their sessions (${viewport.width}×${viewport.height})`, async () => {
      await page.setViewportSize(viewport);
      await openSection(page, 'Jobs');
      // Each run starts on a freshly loaded page (the tests below reload it), without the charts.
      const loadedBefore = chartRequests.length;
      if (viewport.name === 'desktop') assert.deepEqual(chartRequests, [], 'the charts bundle waits for the Insights page');
      await openSection(page, 'Insights');
      const tiles = page.locator('.tile');
      // Every experience first, then Support alone.
      await waitForText(tiles.filter({ hasText: 'Queries' }), '7');
      assert.deepEqual(await tiles.allInnerTexts(), ['QUERIES\n7', 'ANSWERED\n57.1%', 'FALLBACK\n42.9%', 'FEEDBACK\n👍 2 · 👎 1', 'MEDIAN LATENCY\n300 ms']);
      await page.getByLabel('Experience').selectOption({ label: 'Support' });
      await waitForText(tiles.filter({ hasText: 'Queries' }), '6');
      assert.deepEqual(await tiles.allInnerTexts(), ['QUERIES\n6', 'ANSWERED\n50%', 'FALLBACK\n50%', 'FEEDBACK\n👍 2 · 👎 1', 'MEDIAN LATENCY\n350 ms']);
      assert.equal(chartRequests.length, loadedBefore + 1, 'the charts bundle is loaded once');

      const figures = page.locator('figure.chart');
      assert.deepEqual(await figures.locator('figcaption').allInnerTexts(), ['Queries per day', 'Answered and fallback share per day', 'Median latency per day']);
      await page.locator('.chart canvas').nth(2).waitFor();
      // Each series drew its line and points in its colour.
      assert.ok((await pixelsOf(page, 0, [0x31, 0x56, 0xd3])) > 20, 'queries per day are drawn');
      assert.ok((await pixelsOf(page, 1, [0x1f, 0x8a, 0x4c])) > 20, 'the answered share is drawn');
      assert.ok((await pixelsOf(page, 1, [0xc2, 0x36, 0x2b])) > 20, 'the fallback share is drawn');
      assert.ok((await pixelsOf(page, 2, [0xa6, 0x6a, 0x00])) > 20, 'the median latency is drawn');
      for (const box of await figures.evaluateAll((elements) => elements.map((element) => element.getBoundingClientRect().toJSON()))) {
        assert.ok(box.width > 200 && box.right <= viewport.width, `a chart fits the ${viewport.width} px screen: ${JSON.stringify(box)}`);
      }

      const gaps = page.locator('li.gap');
      await waitForText(page.locator('#gaps-title'), 'Content gaps (2)');
      assert.equal(await gaps.count(), 2);
      assert.match(await gaps.nth(0).locator('.gap-title').innerText(), /^How do I reset my password\? 3×$/);
      assert.match(await gaps.nth(0).innerText(), /2 unanswered · 1 👎/);
      assert.deepEqual(await gaps.nth(0).locator('.gap-examples a').allInnerTexts(), ['How do I reset my password?', 'password reset not working']);
      assert.match(await gaps.nth(1).locator('.gap-title').innerText(), /^Do you ship to Canada\? 1×$/);
      await assertFits(page, `Insights at ${viewport.name}`);

      // The experience and the period are in the link: a reload shows Support since yesterday again.
      const from = new Date(today - DAY_MS).toISOString().slice(0, 10);
      await page.getByLabel('From').fill(from);
      const yesterday = ['QUERIES\n3', 'ANSWERED\n66.7%', 'FALLBACK\n33.3%', 'FEEDBACK\n👍 1 · 👎 1', 'MEDIAN LATENCY\n500 ms'];
      await waitForText(tiles.filter({ hasText: 'Queries' }), '3');
      assert.deepEqual(await tiles.allInnerTexts(), yesterday);
      assert.match(new URL(page.url()).hash, new RegExp(`^#/insights\\?experienceId=${experienceIds.support}&from=${from}&to=\\d{4}-\\d{2}-\\d{2}$`));
      await page.reload();
      await waitForText(tiles.filter({ hasText: 'Queries' }), '3');
      assert.deepEqual(await tiles.allInnerTexts(), yesterday);
      await waitForText(page.getByLabel('Experience').locator('option:checked'), 'Support');
      assert.equal(await page.getByLabel('From').inputValue(), from);
      assert.equal(await page.getByLabel('To').inputValue(), new Date(today).toISOString().slice(0, 10));
      await page.locator('.chart canvas').nth(2).waitFor();
      assert.equal(chartRequests.length, loadedBefore + 2, 'the reloaded page loads the charts bundle again');
      await waitForText(page.locator('#gaps-title'), 'Content gaps (2)');
      await assertFits(page, `Insights after a reload at ${viewport.name}`);

      await page.getByLabel('From').fill(new Date(today - 29 * DAY_MS).toISOString().slice(0, 10));
      await waitForText(tiles.filter({ hasText: 'Queries' }), '6');
      await gaps.nth(0).getByRole('link', { name: 'password reset not working' }).click();
      await waitForText(page.getByRole('heading', { level: 2 }), sessions.second!);
      await waitForText(page.locator('ol.transcript'), 'Q: password reset not working');
    });

    test(`Sessions: first questions and experience names, narrowed by feedback and unanswered (${viewport.width}×${viewport.height})`, async () => {
      await page.setViewportSize(viewport);
      await openSection(page, 'Sessions');
      const rows = page.locator('table.sessions tbody tr');
      const firstQuestions = () => rows.locator('td[data-label="First question"]').allInnerTexts();
      const experiences = () => rows.locator('td[data-label="Experience"]').allInnerTexts();
      await waitForText(rows.first(), 'How much does the premium plan cost?');
      assert.deepEqual(await firstQuestions(), [
        'How much does the premium plan cost?',
        'Do you ship to Canada?',
        'password reset not working',
        'How do I reset my password?',
      ]);
      assert.deepEqual(await experiences(), ['Sales', 'Support', 'Support', 'Support']);
      const feedback = page.getByLabel('Feedback');
      assert.deepEqual(await feedback.locator('option').allInnerTexts(), ['any', '👎 thumbs down', '👍 thumbs up']);
      await feedback.selectOption({ label: '👎 thumbs down' });
      await waitForText(page.locator('table.sessions'), /^(?![\s\S]*premium)[\s\S]*Do you ship to Canada\?/);
      assert.deepEqual(await firstQuestions(), ['Do you ship to Canada?']);
      await assertFits(page, `Sessions filtered at ${viewport.name}`);
      // The filters are in the link: a reload shows the same list with the same choices.
      await page.reload();
      await waitForText(page.locator('table.sessions'), 'Do you ship to Canada?');
      assert.deepEqual(await firstQuestions(), ['Do you ship to Canada?']);
      assert.equal(await feedback.inputValue(), 'down');
      await feedback.selectOption({ label: 'any' });
      await page.getByLabel('Unanswered').check();
      await waitForText(page.locator('table.sessions'), /^(?![\s\S]*premium)[\s\S]*How do I reset my password\?/);
      const unanswered = ['Do you ship to Canada?', 'password reset not working', 'How do I reset my password?'];
      assert.deepEqual(await firstQuestions(), unanswered);
      assert.equal(new URL(page.url()).hash, '#/sessions?unanswered=true');
      await page.reload();
      await waitForText(page.locator('table.sessions'), 'How do I reset my password?');
      assert.deepEqual(await firstQuestions(), unanswered);
      assert.equal(await page.getByLabel('Unanswered').isChecked(), true);
      await page.getByLabel('Unanswered').uncheck();
      await page.getByLabel('Experience').selectOption({ label: 'Sales' });
      await waitForText(page.locator('table.sessions'), /^(?![\s\S]*Canada)[\s\S]*premium/);
      await page.reload();
      await waitForText(page.locator('table.sessions'), 'How much does the premium plan cost?');
      assert.deepEqual(await firstQuestions(), ['How much does the premium plan cost?']);
      await waitForText(page.getByLabel('Experience').locator('option:checked'), 'Sales');
      await assertFits(page, `Sessions after a reload at ${viewport.name}`);

      // The transcript names the experience as the list does, linking to it.
      await rows.first().getByRole('link').click();
      await waitForText(page.getByRole('heading', { level: 2 }), sessions.sales!);
      const facts = page.locator('dl.facts');
      await waitForText(facts, 'Sales');
      assert.equal(await facts.getByRole('link', { name: 'Sales' }).getAttribute('href'), `#/experiences/${experienceIds.sales}`);
      assert.ok(!(await facts.innerText()).includes(experienceIds.sales!), 'the transcript shows the name, not the id');
      await assertFits(page, `a transcript at ${viewport.name}`);
      assert.deepEqual(browser.pageErrors, []);
    });
  }
});
