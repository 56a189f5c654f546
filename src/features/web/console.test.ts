/**
 * The operator console in headless Chromium against the real server: sign-in, upload, live
 * progress, failed records, cancel, payload download, entry browser, experiences, playground,
 * sessions, and the missing-scope notice. The server runs without ingestion workers
 * (INGESTION_WORKERS=0) so a job stays pending until the test starts a worker itself: the
 * progress bar is seen at 0 % and then at 100 %, and a pending job can be cancelled for sure.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { Logger } from 'pino';
import type { Locator, Page } from 'playwright-core';
import { launchBrowser, type TestBrowser } from '../../../test/browser.ts';
import { docsScreenshot, openSection, retakeScreenshots, signInConsole, WAIT_MS, waitForText } from '../../../test/console-page.ts';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../test/fake-openai.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { createKnowledgeBase, submit, waitForJob } from '../../../test/ingestion.ts';
import { startWorkers } from '../../server.ts';
import type { IngestionWorker } from '../ingestion/worker.ts';

const contentHubExport = fileURLToPath(new URL('../ingestion/adapters/fixtures/content-hub-export.json', import.meta.url));

/** Waits until the job table lists exactly these jobs (a filter change first clears the old list). */
async function waitForJobRows(page: Page, jobIds: string[]): Promise<void> {
  const expected = [...jobIds].sort();
  const deadline = Date.now() + WAIT_MS;
  let shown: string[] = [];
  while (Date.now() < deadline) {
    shown = (await page.locator('tr[data-job-id]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-job-id') ?? ''))).sort();
    if (JSON.stringify(shown) === JSON.stringify(expected)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`expected the jobs ${expected.join(', ')}; shown: ${shown.join(', ')}`);
}

async function progressOf(row: Locator): Promise<number> {
  return Number(await row.getByRole('progressbar').getAttribute('aria-valuenow'));
}

describe(`operator console in Chromium (${engine})`, () => {
  let server: TestServer;
  let fake: FakeOpenAi;
  let browser: TestBrowser;
  let page: Page;
  let workspaceId: string;
  let token: string;
  let knowledgeBaseId: string;
  let credentials: { clientId: string; clientSecret: string };
  let workers: IngestionWorker[] = [];
  let uploadedJobId: string;

  function startWorker(): void {
    const { config, db, embedder, log } = server.context;
    workers = startWorkers(1, config, { db, embedder, log: log as Logger });
  }

  async function stopWorkers(): Promise<void> {
    await Promise.all(workers.map((worker) => worker.stop()));
    workers = [];
  }

  before(async () => {
    fake = await startFakeOpenAi();
    server = await startTestServer({ ...fakeEmbeddingsEnv(fake), INGESTION_WORKERS: '0' });
    const bundle = await server.request('GET', '/console.js');
    assert.equal(bundle.status, 200, 'dist/web/console.js is missing: run `npm run build` first');
    workspaceId = await server.createWorkspace('console');
    credentials = await server.createClient(workspaceId, ['*']);
    token = await server.token(workspaceId, ['*']);
    knowledgeBaseId = await createKnowledgeBase(server, token, { name: 'Help center' });
    browser = await launchBrowser({ viewport: { width: 1280, height: 720 }, acceptDownloads: true });
    page = browser.page;
  });

  after(async () => {
    await stopWorkers();
    await browser?.close();
    await server?.close();
    await fake?.close();
  });

  test('GET /console is the HTML shell of the console bundle', async () => {
    const answer = await server.request('GET', '/console');
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.match(answer.text, /<div id="app"><\/div>\n<script src="\/console.js"><\/script>/);
  });

  test('signs in with a client id and secret, keeps the token out of the URL, and stays signed in on reload', async () => {
    await page.goto(`${server.url}/console`);
    await page.getByLabel('Client id').fill(credentials.clientId);
    await page.getByLabel('Client secret').fill('not-the-secret');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await waitForText(page.getByRole('alert'), '401 Unauthorized. The client credentials are invalid.');

    await signInConsole(page, server.url, credentials);
    const stored = await page.evaluate(() => JSON.parse(sessionStorage.getItem('lore.console.session') ?? 'null'));
    assert.equal(stored.clientId, credentials.clientId);
    assert.deepEqual(stored.scopes, ['*']);
    const jobs = await server.request('GET', '/api/v2/data-ingestion/jobs', { token: stored.token });
    assert.equal(jobs.status, 200, 'the stored token is a working access token');
    assert.ok(!page.url().includes(stored.token), 'the token is not in the URL');

    await page.reload();
    await page.getByRole('heading', { name: 'Ingestion jobs' }).waitFor();
    assert.ok(!page.url().includes(stored.token));
  });

  test('uploads a JSON file that becomes a job; its progress bar goes from 0 % to 100 %; failed records come first', async () => {
    await openSection(page, 'Upload');
    // A file dropped on the form is taken like a chosen one.
    await page.locator('.dropzone').evaluate((zone) => {
      const transfer = new DataTransfer();
      transfer.items.add(new File(['{"records": []}'], 'dropped.json', { type: 'application/json' }));
      zone.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
    });
    await waitForText(page.locator('.dropzone'), 'dropped.json (15 B)');
    await page.getByRole('button', { name: 'Remove dropped.json' }).click();
    await page.locator('input[type=file][name=files]').setInputFiles(contentHubExport);
    await waitForText(page.locator('.dropzone'), 'content-hub-export.json');
    assert.equal(await page.getByRole('list', { name: 'Chosen files' }).getByRole('listitem').count(), 1);
    await page.getByLabel('Adapter').selectOption('content-hub');
    assert.equal(await page.getByLabel('Knowledge base').inputValue(), knowledgeBaseId);
    await page.getByRole('button', { name: 'Create job' }).click();

    const notice = page.getByRole('status').filter({ hasText: 'was created' });
    await waitForText(notice, /Job [0-9a-f-]{36} was created\./);
    const jobId = /Job ([0-9a-f-]{36})/.exec(await notice.innerText())![1]!;
    uploadedJobId = jobId;
    const row = page.locator(`tr[data-job-id="${jobId}"]`);
    await waitForText(row, 'pending');
    assert.equal(await progressOf(row), 0);
    await waitForText(row.getByRole('progressbar'), '0 / 6 · 0 %');

    startWorker();
    await waitForText(row, 'completed');
    await waitForText(row.getByRole('progressbar'), '6 / 6 · 100 %');
    assert.equal(await progressOf(row), 100);
    const job = await waitForJob(server, token, jobId);
    assert.equal(job.status, 'completed');
    assert.equal(job.data.adapterType, 'content-hub');
    assert.equal(job.data.progress.failed, 1);
    // Where the upload lands, the job says that a record failed.
    await waitForText(row.locator('.badge.outcome-warning'), 'completed · 1 record failed');
    await waitForText(row.locator('.counts'), `${job.data.progress.successful} succeeded · 1 failed · ${job.data.progress.skipped} skipped`);

    await row.getByRole('link', { name: 'Details' }).click();
    await waitForText(page.getByRole('heading', { level: 3 }), 'Records (6, 1 failed)');
    const firstResult = page.locator('table.results tbody tr').first();
    await waitForText(firstResult, 'empty-5005');
    assert.match(await firstResult.innerText(), /empty-5005\s+failed\s+content is empty after converting the HTML to Markdown/);
    assert.equal(await page.locator('table.results tbody tr').count(), 6);
    await page.getByLabel('Only failed').check();
    assert.equal(await page.locator('table.results tbody tr').count(), 1);
  });

  test('cancels a pending job, filters by status and downloads a job\'s payload', async () => {
    await stopWorkers();
    const records = [{ id: 'cancel-me', content: 'This job waits for a worker that never comes.' }];
    const jobId = await submit(server, token, knowledgeBaseId, records);

    await openSection(page, 'Jobs');
    const row = page.locator(`tr[data-job-id="${jobId}"]`);
    await waitForText(row, 'pending');

    const [download] = await Promise.all([page.waitForEvent('download'), row.getByRole('button', { name: 'Payload' }).click()]);
    assert.equal(download.suggestedFilename(), `job-${jobId}-payload.json`);
    assert.deepEqual(JSON.parse(await readFile((await download.path())!, 'utf8')), { records });

    await row.getByRole('button', { name: 'Cancel' }).click();
    await row.getByRole('alertdialog').getByRole('button', { name: 'Cancel job' }).click();
    await waitForText(row, 'cancelled');
    assert.equal(await row.getByRole('button', { name: 'Cancel' }).count(), 0, 'a finished job has no Cancel button');
    const cancelled = await server.request('GET', `/api/v2/data-ingestion/jobs/${jobId}`, { token });
    assert.equal(cancelled.body.status, 'cancelled');

    await page.getByLabel('Status').selectOption('completed');
    await waitForJobRows(page, [uploadedJobId]);
    await page.getByLabel('Status').selectOption('cancelled');
    await waitForJobRows(page, [jobId]);
    await page.getByLabel('Status').selectOption('pending');
    await waitForText(page.locator('main'), 'No jobs with status pending.');
    await page.getByLabel('Status').selectOption('');
    await waitForJobRows(page, [uploadedJobId, jobId]);
  });

  test('the progress bar of a running job moves live through the batches to 100 %', async () => {
    // Three batches of 100 records, each held 1.5 s by the embeddings server: the console polls
    // every second while the job changes, so it shows at least one value between 0 and 100.
    fake.delayMs = 1500;
    const records = Array.from({ length: 300 }, (_, index) => ({ id: `bulk-${index}`, content: `Bulk article ${index} about exports and limits.` }));
    const jobId = await submit(server, token, knowledgeBaseId, records);
    const row = page.locator(`tr[data-job-id="${jobId}"]`);
    await waitForText(row, 'pending');
    startWorker();
    const seen = new Set<number>();
    const deadline = Date.now() + 60_000;
    let screenshotTaken = false;
    while (!seen.has(100) && Date.now() < deadline) {
      const percent = await progressOf(row);
      seen.add(percent);
      if (percent > 0 && percent < 100 && !screenshotTaken && retakeScreenshots) {
        // The README's picture of the console, after the bar's 0.4 s width transition.
        await new Promise((resolve) => setTimeout(resolve, 500));
        await docsScreenshot(page, 'console.png');
        screenshotTaken = true;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    fake.delayMs = 0;
    assert.ok(seen.has(100), `the bar reached 100 %; seen: ${[...seen].join(', ')}`);
    assert.ok([...seen].some((percent) => percent > 0 && percent < 100), `an intermediate value was shown; seen: ${[...seen].join(', ')}`);
    await waitForText(row, 'completed');
    await waitForText(row.getByRole('progressbar'), '300 / 300 · 100 %');
  });

  test('lists knowledge bases with their entry counts and browses an entry with its chunks', async () => {
    const entries = await server.request('GET', `/api/v2/knowledge-bases/${knowledgeBaseId}/entries?limit=1`, { token });
    assert.equal(entries.status, 200);
    const uploaded = await server.request('GET', `/api/v2/data-ingestion/jobs/${uploadedJobId}`, { token });
    const article = uploaded.body.data.results.find((result: any) => result.sourceId === 'kb-article-1001');
    const entry = await server.request('GET', `/api/v2/knowledge-bases/${knowledgeBaseId}/entries/${article.entryId}`, { token });
    assert.equal(entry.status, 200);
    assert.ok(entry.body.chunks.length > 0);

    await openSection(page, 'Knowledge bases');
    const row = page.locator(`tr[data-knowledge-base-id="${knowledgeBaseId}"]`);
    await waitForText(row.locator('.entry-count'), String(entries.body.total));
    await row.getByRole('link', { name: 'Help center' }).click();
    await waitForText(page.getByRole('heading', { level: 2 }), 'Entries of Help center');

    await page.getByPlaceholder('Title contains').fill(entry.body.title);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: entry.body.title, exact: true }).click();
    await waitForText(page.getByRole('heading', { level: 2 }), entry.body.title);
    await waitForText(page.getByRole('heading', { level: 3 }), `Chunks (${entry.body.chunks.length})`);
    const chunks = page.locator('ol.chunks > li');
    assert.equal(await chunks.count(), entry.body.chunks.length);
    assert.equal(await chunks.first().locator('pre').innerText(), entry.body.chunks[0].text);
    await waitForText(page.locator('dl.facts'), 'kb-article-1001');

    await page.getByRole('link', { name: '← Entries' }).click();
    await page.getByPlaceholder('Title contains').fill('no such title anywhere');
    await page.getByRole('button', { name: 'Search' }).click();
    await waitForText(page.locator('main'), 'No entries.');
  });

  test('shows experiences with their settings, embeds the widget for one, and shows its sessions', async () => {
    const experience = await server.request('POST', '/api/v2/experiences', {
      token,
      body: { name: 'Support bot', knowledgeBaseIds: [knowledgeBaseId], settings: { topK: 7, minScore: 0.25 } },
    });
    assert.equal(experience.status, 201);
    const experienceId: string = experience.body.id;
    const asked = await server.request('POST', '/api/v2/query', { body: { experienceId, userId: 'ada@example.com', text: 'How do exports and limits work?' } });
    assert.equal(asked.status, 200);
    assert.ok(asked.body.sources.length > 0, 'the bulk articles answer the question');
    const rated = await server.request('POST', `/api/v2/queries/${asked.body.queryId}/feedback`, { body: { rating: 'down', comment: 'Too vague' } });
    assert.equal(rated.status, 204);

    await openSection(page, 'Experiences');
    const card = page.locator(`article[data-experience-id="${experienceId}"]`);
    await waitForText(card, 'Support bot');
    assert.match(await card.innerText(), /"topK": 7,\s+"minScore": 0.25/);
    // Knowledge-base names arrive in a request of their own; until then the card shows the id's start.
    await waitForText(card, /Knowledge bases\s+Help center/);

    await card.getByRole('link', { name: 'Try in playground' }).click();
    const frame = page.frameLocator('iframe.playground');
    const script = frame.locator(`script[data-experience-id="${experienceId}"]`);
    await script.waitFor({ state: 'attached' });
    assert.equal(await script.getAttribute('src'), `${server.url}/widget.js`);
    assert.equal(await script.getAttribute('data-token'), null, 'a public experience gets no token');
    // The widget itself, opened by data-open, answers in the playground.
    await frame.getByLabel('Your question').fill('What are the export limits?');
    await frame.getByRole('button', { name: 'Send' }).click();
    await waitForText(frame.getByRole('article', { name: 'Answer' }), 'Bulk article');

    // An experience that requires a token gets the console's own (it holds query:execute through `*`).
    const guarded = await server.request('POST', '/api/v2/experiences', { token, body: { name: 'Internal bot', requireAuth: true } });
    assert.equal(guarded.status, 201);
    await page.goto(`${server.url}/console#/playground/${guarded.body.id}`);
    const guardedScript = page.frameLocator('iframe.playground').locator(`script[data-experience-id="${guarded.body.id}"]`);
    await guardedScript.waitFor({ state: 'attached' });
    const consoleToken = await page.evaluate(() => JSON.parse(sessionStorage.getItem('lore.console.session')!).token);
    assert.equal(await guardedScript.getAttribute('data-token'), consoleToken);

    await openSection(page, 'Experiences');
    await card.getByRole('link', { name: 'Sessions' }).click();
    const sessionRows = page.locator('table.sessions tbody tr');
    await waitForText(sessionRows.filter({ hasText: 'anonymous' }), 'Support bot');
    assert.equal(await sessionRows.count(), 2, 'the question asked in the playground started a session too');
    const sessionRow = sessionRows.filter({ hasText: 'ada@example.com' });
    assert.match(await sessionRow.innerText(), /ada@example\.com\s+active\s+1/);
    await sessionRow.getByRole('link').click();
    await waitForText(page.getByRole('heading', { level: 2 }), asked.body.sessionId);
    await waitForText(page.getByRole('heading', { level: 3 }), 'Transcript (1)');
    const message = page.locator('ol.transcript > li');
    assert.equal(await message.locator('.question').innerText(), 'Q: How do exports and limits work?');
    assert.equal(await message.locator('.answer').innerText(), asked.body.answer);
    assert.equal(await message.locator('ol.sources > li').count(), asked.body.sources.length);
    assert.match(await message.locator('ol.sources > li').first().innerText(), new RegExp(`^${asked.body.sources[0].title}`));
    assert.equal(await message.locator('.feedback').innerText(), 'Feedback: 👎 “Too vague”');
  });

  test('an idle job list polls at growing intervals', async () => {
    await stopWorkers();
    await openSection(page, 'Upload');
    const listed: number[] = [];
    const onRequest = (request: { url(): string }) => {
      if (new URL(request.url()).pathname === '/api/v2/data-ingestion/jobs') listed.push(Date.now());
    };
    page.on('request', onRequest);
    try {
      await openSection(page, 'Jobs');
      // Nothing changes without a worker: the waits should be about 1, 1.6, 2.6 and 4.1 s.
      await new Promise((resolve) => setTimeout(resolve, 10_500));
    } finally {
      page.off('request', onRequest);
    }
    // Loose bounds: on a busy machine each request adds its own latency to the wait.
    const gaps = listed.slice(1).map((time, index) => time - listed[index]!);
    assert.ok(gaps.length >= 3 && gaps.length <= 5, `about 4 polls expected in 10.5 s; gaps: ${gaps.join(', ')}`);
    for (let index = 1; index < gaps.length; index += 1) {
      assert.ok(gaps[index]! > gaps[index - 1]!, `each wait is longer than the last; gaps: ${gaps.join(', ')}`);
    }
    assert.ok(gaps.at(-1)! >= 2 * gaps[0]!, `the waits grow well beyond the first; gaps: ${gaps.join(', ')}`);
  });

  test('a token lacking a scope shows which scope is missing, and cannot cancel a job', async () => {
    await stopWorkers();
    const jobId = await submit(server, token, knowledgeBaseId, [{ id: 'stays', content: 'A read-only operator cannot cancel this job.' }]);
    const readOnly = await server.createClient(workspaceId, ['data-ingestion:read']);
    const second = await browser.context.newPage();
    try {
      await signInConsole(second, server.url, readOnly);
      const row = second.locator(`tr[data-job-id="${jobId}"]`);
      await waitForText(row, 'pending');
      await row.getByRole('button', { name: 'Cancel' }).click();
      await row.getByRole('alertdialog').getByRole('button', { name: 'Cancel job' }).click();
      await waitForText(row.locator('.scope-missing'), 'Your access token lacks the scope data-ingestion:write');
      const job = await server.request('GET', `/api/v2/data-ingestion/jobs/${jobId}`, { token });
      assert.equal(job.body.status, 'pending');

      await openSection(second, 'Knowledge bases');
      await waitForText(second.locator('.scope-missing'), 'Missing scope. Your access token lacks the scope knowledge-bases:read, which this needs.');
      await openSection(second, 'Upload');
      await waitForText(second.locator('.scope-missing'), 'lacks the scope data-ingestion:write');
      assert.equal(await second.getByRole('button', { name: 'Create job' }).count(), 0);
      await openSection(second, 'Sessions');
      await waitForText(second.locator('.scope-missing'), 'lacks the scope sessions:read');
      await openSection(second, 'Webhooks');
      await waitForText(second.locator('.scope-missing'), 'lacks the scope webhooks:read');
      assert.equal(await second.getByRole('button', { name: 'New endpoint' }).count(), 0);
    } finally {
      await second.close();
    }
    assert.deepEqual(browser.pageErrors.filter((message) => !message.includes('the server responded with a status of')), []);
  });
});
