/**
 * The pictures of docs/console.md that show the console at work (docs/images/console-*.png),
 * retaken in headless Chromium with LORE_SCREENSHOTS=1 on the embedded engine. They need a
 * workspace that looks lived in (three weeks of questions a help centre gets, paraphrased
 * content gaps, feedback), which the behaviour tests do not seed; so this file runs only when the
 * pictures are retaken, and checks that each view shows what its caption says before it is taken.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { TestBrowser } from '../../../test/browser.ts';
import { docsScreenshot, retakeScreenshots, signedInBrowser, viewports, waitForText } from '../../../test/console-page.ts';
import { startTestServer, type TestServer } from '../../../test/harness.ts';
import { seedSession, type SeededQuery } from '../../../test/seed-queries.ts';

const DAY_MS = 86_400_000;
const PERIOD_DAYS = 21;

// Questions a help centre answers, and the ones its articles do not cover yet (answered by the
// fallback message, or answered and rated 👎), in paraphrases the content gaps group together.
const answered = [
  'How do I reset my password?',
  'Where can I download my invoices?',
  'How do I add a team member to my workspace?',
  'Which payment methods do you accept?',
  'Can I change my plan later?',
  'How do I change my billing address?',
  'What are your support hours?',
  'How do I connect the Slack integration?',
];
const gaps = [
  ['How do I export my data to CSV?', 'export data to csv', 'Can I export my data as a CSV file?'],
  ['Do you support single sign-on with Okta?', 'Okta single sign-on setup', 'single sign-on with Okta'],
  ['Is there an on-premise version?', 'on-premise version available?'],
  ['How do I delete my account?', 'delete my account'],
];
const thumbsDown = ['Why was I charged twice this month?', 'Why was I charged twice?'];
const users = ['maria.lopez@example.com', 'j.chen@example.org', null, 'sam@northwind.example', null, 'priya.k@example.com', null];

/** The same pseudo-random sequence on every run, so the pictures change only when the console does. */
function sequence(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

describe('docs/console.md pictures of the console, retaken in Chromium', { skip: retakeScreenshots ? false : 'set LORE_SCREENSHOTS=1 (embedded engine) to retake them' }, () => {
  let server: TestServer;
  let browser: TestBrowser;
  let helpCentre: string;

  before(async () => {
    server = await startTestServer({ INGESTION_WORKERS: '0' });
    const workspaceId = await server.createWorkspace('acme-support');
    const [credentials, token] = await Promise.all([server.createClient(workspaceId, ['*']), server.token(workspaceId, ['*'])]);
    const post = async (path: string, body: unknown) => (await server.request('POST', path, { token, body })).body.id as string;
    const articles = await post('/api/v2/knowledge-bases', { name: 'Help articles', description: 'The public help centre' });
    await post('/api/v2/knowledge-bases', { name: 'Release notes' });
    const billing = await post('/api/v2/knowledge-bases', { name: 'Billing FAQ' });
    helpCentre = await post('/api/v2/experiences', {
      name: 'Help centre',
      knowledgeBaseIds: [articles, billing],
      instructions: 'Answer in two or three sentences, in a friendly tone, and cite the article you used.',
      fallbackMessage: 'I could not find that in our help centre. Our team answers within a day at support@acme.example.',
      allowedOrigins: ['https://www.acme.example', 'https://*.acme.example'],
      actions: [
        { id: 'handover', label: 'Talk to a person', action: { type: 'trigger_handover', agentType: 'support' } },
        { id: 'status', label: 'Service status', action: { type: 'open_url', url: 'https://status.acme.example', target: '_blank' } },
      ],
      settings: {
        topK: 6,
        minScore: 0.3,
        llmProvider: 'extractive',
        rateLimit: { ipPerMinute: 30 },
        widget: {
          assistantName: 'Ada',
          greeting: 'Hi, I am Ada. Ask me anything about your Acme account.',
          starterQuestions: ['How do I reset my password?', 'Where can I download my invoices?', 'Can I change my plan later?'],
        },
      },
    });
    const pricing = await post('/api/v2/experiences', { name: 'Pricing page', knowledgeBaseIds: [billing] });

    // Three weeks of sessions, busier on weekdays, each of one to three questions.
    const random = sequence(11);
    const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
    const today = Date.parse(new Date().toISOString().slice(0, 10));
    for (let daysAgo = PERIOD_DAYS - 1; daysAgo >= 0; daysAgo -= 1) {
      const weekday = ![0, 6].includes(new Date(today - daysAgo * DAY_MS).getUTCDay());
      const sessionCount = Math.round((weekday ? 5 : 2) + random() * 4);
      for (let index = 0; index < sessionCount; index += 1) {
        const start = today - daysAgo * DAY_MS + (7 + random() * 12) * 3_600_000;
        const queries: SeededQuery[] = [];
        for (let number = 0; number < 1 + Math.floor(random() * 3); number += 1) {
          const roll = random();
          const at = new Date(start + number * 90_000).toISOString();
          const latencyMs = Math.round(180 + random() * 420);
          if (roll < 0.18) queries.push({ text: pick(pick(gaps)), grounded: false, at, latencyMs });
          else if (roll < 0.23) queries.push({ text: pick(thumbsDown), grounded: true, at, latencyMs, rating: 'down' });
          else queries.push({ text: pick(answered), grounded: true, at, latencyMs, ...(random() < 0.25 ? { rating: 'up' as const } : {}) });
        }
        await seedSession(server.context.db, workspaceId, random() < 0.8 ? helpCentre : pricing, queries, pick(users));
      }
    }
    browser = await signedInBrowser(server.url, credentials, { viewport: viewports[0] });
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  /** The box of `selector` on the page, for a clip around it. */
  const boxOf = async (page: Page, selector: string) => (await page.locator(selector).first().boundingBox({ timeout: 5000 }))!;

  test('an experience: its embed code and its form', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/console#/experiences/${helpCentre}`);
    const embed = page.getByRole('region', { name: 'Embed code for Help centre' });
    await waitForText(embed, `data-experience-id="${helpCentre}"`);
    await waitForText(embed, 'Answers only on pages of https://www.acme.example');
    const form = page.locator('form.experience-form');
    assert.equal(await form.getByLabel('Greeting').inputValue(), 'Hi, I am Ada. Ask me anything about your Acme account.');
    const heading = await boxOf(page, 'h3:text-is("Embed code")');
    const region = (await embed.boundingBox())!;
    await docsScreenshot(page, 'console-embed-code.png', { x: 0, y: heading.y - 16, width: 1280, height: region.y + region.height - heading.y + 32 });
    // The form's groups from Basics to Widget (the actions below are a list of their own).
    const top = (await form.boundingBox())!;
    const actions = await boxOf(page, 'section[aria-label="Actions"]');
    await docsScreenshot(page, 'console-experience-form.png', { x: 0, y: top.y - 8, width: Math.ceil(top.x + top.width + 20), height: actions.y - top.y });
  });

  for (const viewport of viewports) {
    test(`Insights of the help centre over three weeks (${viewport.width}×${viewport.height})`, async () => {
      const { page } = browser;
      await page.setViewportSize(viewport);
      const from = new Date(Date.now() - (PERIOD_DAYS - 1) * DAY_MS).toISOString().slice(0, 10);
      await page.goto(`${server.url}/console#/insights?experienceId=${helpCentre}&from=${from}`);
      await waitForText(page.locator('#gaps-title'), /Content gaps \([1-9]/);
      await page.locator('.chart canvas').nth(2).waitFor();
      await waitForText(page.getByLabel('Experience').locator('option:checked'), 'Help centre');
      assert.match(await page.locator('li.gap').first().innerText(), /\d+×/);
      // From the top down to the second content gap (the first on a phone, already 1,700 px down).
      const gapList = await boxOf(page, 'ol.gaps');
      const next = page.locator('li.gap').nth(viewport.name === 'desktop' ? 2 : 1);
      const bottom = (await next.count()) > 0 ? (await next.boundingBox())!.y : gapList.y + gapList.height;
      await docsScreenshot(page, `console-insights-${viewport.name}.png`, { x: 0, y: 0, width: viewport.width, height: bottom - 2 });
    });
  }

  test('the session list filtered to unanswered sessions of the help centre (1280×800)', async () => {
    const { page } = browser;
    await page.setViewportSize(viewports[0]!);
    await page.goto(`${server.url}/console#/sessions?experienceId=${helpCentre}&unanswered=true`);
    const rows = page.locator('table.sessions tbody tr');
    await waitForText(rows.first(), /\?/);
    assert.equal(await page.getByLabel('Unanswered').isChecked(), true);
    await waitForText(page.getByLabel('Experience').locator('option:checked'), 'Help centre');
    assert.deepEqual([...new Set(await rows.locator('td[data-label="Experience"]').allInnerTexts())], ['Help centre']);
    await docsScreenshot(page, 'console-sessions.png', { x: 0, y: 0, width: 1280, height: 640 });
  });
});
