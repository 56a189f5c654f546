/**
 * The console's job and entry actions in headless Chromium against the real server, at a desktop
 * (1280×800) and a phone (390×844) width: a job's progress bar moves while it runs, with the time
 * left; a finished job's failed records are retried from its page; an uploaded JSON Lines file's
 * name stays on its job after a reload; an entry is deleted from its page after a confirmation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { formatRemaining } from '../../../web/console/jobs.tsx';
import { assertFits, startConsoleSession, viewports, waitForText, WAIT_MS, type ConsoleSession } from '../../../test/console-page.ts';
import { engine, startTestServer } from '../../../test/harness.ts';
import { hubItem, ingest, markdownDocument, submit, waitForJob } from '../../../test/ingestion.ts';

const JOBS = '/api/v2/data-ingestion/jobs';

test('the time left reads in seconds, then minutes, then hours', () => {
  assert.deepEqual([0.2, 42.4, 59, 61, 130, 3599, 3900].map(formatRemaining), [
    'about 1 s left',
    'about 42 s left',
    'about 59 s left',
    'about 1 min left',
    'about 2 min left',
    'about 1 h left',
    'about 1 h 5 min left',
  ]);
});

/** The progress bar's percentage, once it is between `above` and 100 (exclusive). */
async function percentAbove(page: Page, scope: string, above: number): Promise<number> {
  const deadline = Date.now() + WAIT_MS;
  const seen: number[] = [];
  while (Date.now() < deadline) {
    const bar = page.locator(`${scope} [role=progressbar]`).first();
    const value = (await bar.count()) > 0 ? Number(await bar.getAttribute('aria-valuenow')) : -1;
    if (value > above && value < 100) return value;
    if (seen.at(-1) !== value) seen.push(value);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no progress above ${above} % (and below 100 %) in ${scope}; seen: ${seen.join(', ')} (-1: no bar)`);
}

describe(`console jobs and entries in Chromium (${engine})`, () => {
  let session: ConsoleSession;

  before(async () => {
    session = await startConsoleSession('console-jobs', startTestServer);
  });
  after(() => session?.close());

  for (const viewport of viewports) {
    const size = `${viewport.width}×${viewport.height}`;

    test(`a running job's progress bar moves, with the time left, in the list and on its page (${size})`, async () => {
      const { server, fake, page, token, knowledgeBaseId } = session;
      await page.setViewportSize(viewport);
      // A second per embedding request: the job's batches come about a second apart.
      fake.delayMs = 1000;
      try {
        // Content of its own per viewport: a record whose content is stored already is skipped, not embedded.
        // 300 records: the batch sizer learns the second's fixed cost and grows batches to 100 records
        // (10, 5, 10, 20, 40, 80, 100, 35), so several values below 100 % remain once the job's page
        // opens; with 60, the last 41 once went in one batch and the page saw only one (CI, 2026-11-28).
        const records = Array.from({ length: 300 }, (_, index) => ({ id: `${viewport.name}-${index}`, content: `${viewport.name}: ${markdownDocument(index, 500)}` }));
        const jobId = await submit(server, token, knowledgeBaseId, records);
        await page.goto(`${server.url}/console#/jobs`);
        const row = `tr[data-job-id="${jobId}"]`;
        const inList = await percentAbove(page, row, 0);
        await waitForText(page.locator(`${row} .eta`), /^about \d+ (s|min) left$/);
        await assertFits(page, 'the job list with a running job');

        await page.locator(row).getByRole('link', { name: 'Details' }).click();
        const first = await percentAbove(page, '.facts', inList - 1);
        await waitForText(page.locator('.facts .eta'), /^about \d+ (s|min) left$/);
        const later = await percentAbove(page, '.facts', first);
        assert.ok(later > first, `the bar moved from ${first} % to ${later} %`);
        assert.match(await page.locator('.facts .progress-text').innerText(), /^\d+ \/ 300 · \d+ %$/);
        await assertFits(page, 'a running job');

        await waitForText(page.locator('.facts .badge').first(), 'completed', 60_000);
        assert.equal(await page.locator('.facts .eta').count(), 0, 'no time left once the job is done');
        assert.equal(await page.locator('.facts [role=progressbar]').getAttribute('aria-valuenow'), '100');
      } finally {
        fake.delayMs = 0;
      }
    });

    test(`"Retry failed records" on a finished job opens a new job of just those records; a JSON file's name shows on both (${size})`, async () => {
      const { server, browser, page, token, knowledgeBaseId } = session;
      await page.setViewportSize(viewport);
      const items = [hubItem(`${viewport.name}-a`, 'Billing'), hubItem(`${viewport.name}-bad`, 'Refunds', 120), hubItem(`${viewport.name}-b`, 'Exports')];
      const form = new FormData();
      form.set('adapterType', 'content-hub');
      form.set('knowledgeBaseId', knowledgeBaseId);
      form.set('data', new Blob([JSON.stringify([items, {}])], { type: 'application/json' }), `${viewport.name}-export.json`);
      const submitted = await server.request('POST', JOBS, { token, raw: form });
      assert.equal(submitted.status, 202, submitted.text);
      const original = await waitForJob(server, token, submitted.body.jobId);
      assert.equal(original.data.progress.failed, 1);

      await page.goto(`${server.url}/console#/jobs`);
      const row = page.locator(`tr[data-job-id="${original.id}"]`);
      await waitForText(row.locator('.file-names'), `${viewport.name}-export.json`);
      await row.getByRole('link', { name: 'Details' }).click();
      // The list (with a Retry button on every job that has failures) stays until the job page renders.
      await page.waitForURL((url) => url.hash === `#/jobs/${original.id}`);
      await page.locator('.facts').waitFor();
      const retry = page.getByRole('button', { name: 'Retry failed records (1)' });
      await retry.waitFor();
      await assertFits(page, 'a finished job with a failed record');
      const [request] = await Promise.all([
        page.waitForRequest((sent) => sent.method() === 'POST' && new URL(sent.url()).pathname === `${JOBS}/${original.id}/retry`),
        retry.click(),
      ]);
      assert.ok(request);
      await page.waitForURL((url) => /^#\/jobs\/[0-9a-f-]{36}$/.test(url.hash) && !url.hash.includes(original.id));
      const newId = /#\/jobs\/([0-9a-f-]{36})$/.exec(page.url())![1]!;
      assert.notEqual(newId, original.id);
      await waitForText(page.locator('.facts'), `Retry of`);
      assert.match(await page.locator('.facts').innerText(), new RegExp(original.id));
      assert.match(await page.locator('.facts').innerText(), new RegExp(`${viewport.name}-export\\.json`));
      const retried = await waitForJob(server, token, newId);
      assert.equal(retried.data.retryOf, original.id);
      assert.deepEqual(retried.data.results.map((result: { sourceId: string }) => result.sourceId), [`${viewport.name}-bad`]);
      await waitForText(page.getByRole('button', { name: /^Retry failed records/ }), 'Retry failed records (1)');
      await assertFits(page, 'the retry job');
      // A job without failures offers no retry.
      await page.goto(`${server.url}/console#/jobs/${(await ingest(server, token, knowledgeBaseId, [{ id: `${viewport.name}-clean`, content: 'Clean.' }])).id}`);
      await waitForText(page.locator('table'), `${viewport.name}-clean`);
      assert.equal(await page.getByRole('button', { name: /^Retry failed records/ }).count(), 0);
      assert.deepEqual(browser.pageErrors, []);
    });

    test(`a JSON Lines file uploaded from the console keeps its name on the job after a reload (${size})`, async () => {
      const { server, page, token } = session;
      await page.setViewportSize(viewport);
      await page.goto(`${server.url}/console#/upload`);
      const name = `${viewport.name}-records.jsonl`;
      const lines = [`{"id":"${viewport.name}-l1","content":"First line record."}`, `{"id":"${viewport.name}-l2","content":"Second line record."}`].join('\n');
      await page.locator('input[type=file][name=files]').setInputFiles({ name, mimeType: 'application/x-ndjson', buffer: Buffer.from(lines) });
      await page.getByRole('button', { name: 'Create job' }).click();
      const notice = page.getByRole('status').filter({ hasText: 'was created' });
      await waitForText(notice, /Job [0-9a-f-]{36} was created\./);
      const jobId = /Job ([0-9a-f-]{36})/.exec(await notice.innerText())![1]!;
      const job = await waitForJob(server, token, jobId);
      assert.equal(job.data.fileName, name);
      // A reload forgets what this tab uploaded: the name now comes from the service.
      await page.reload();
      await waitForText(page.locator(`tr[data-job-id="${jobId}"] .file-names`), name);
      await page.goto(`${server.url}/console#/jobs/${jobId}`);
      await waitForText(page.locator('.facts .file-names'), name);
      await assertFits(page, 'a job with its file name');
    });

    test(`an entry is deleted from its page after a confirmation: 404 from the API, gone from the list (${size})`, async () => {
      const { server, browser, page, token, knowledgeBaseId } = session;
      await page.setViewportSize(viewport);
      const title = `${viewport.name} entry to delete`;
      const kept = `${viewport.name} entry that stays`;
      const job = await ingest(server, token, knowledgeBaseId, [
        { id: `${viewport.name}-doomed`, title, content: markdownDocument(7, 900) },
        { id: `${viewport.name}-kept`, title: kept, content: markdownDocument(8, 900) },
      ]);
      const entryId = job.data.results[0].entryId as string;
      await page.goto(`${server.url}/console#/knowledge-bases/${knowledgeBaseId}/entries/${entryId}`);
      await waitForText(page.locator('#entry-title'), title);
      await page.getByRole('button', { name: 'Delete entry' }).click();
      const dialog = page.getByRole('alertdialog', { name: 'Delete entry' });
      await waitForText(dialog, `Delete "${title}"`);
      await assertFits(page, 'the delete confirmation');
      // "Keep it" changes nothing.
      await dialog.getByRole('button', { name: 'Keep it' }).click();
      assert.equal((await server.request('GET', `/api/v2/knowledge-bases/${knowledgeBaseId}/entries/${entryId}`, { token })).status, 200);

      await page.getByRole('button', { name: 'Delete entry' }).click();
      const [request] = await Promise.all([
        page.waitForRequest((sent) => sent.method() === 'DELETE' && new URL(sent.url()).pathname === `/api/v2/knowledge-bases/${knowledgeBaseId}/entries/${entryId}`),
        page.getByRole('alertdialog', { name: 'Delete entry' }).getByRole('button', { name: 'Delete', exact: true }).click(),
      ]);
      assert.ok(request);
      await page.waitForURL(new RegExp(`#/knowledge-bases/${knowledgeBaseId}$`));
      await waitForText(page.locator('table'), kept);
      assert.doesNotMatch(await page.locator('body').innerText(), new RegExp(title));
      assert.equal((await server.request('GET', `/api/v2/knowledge-bases/${knowledgeBaseId}/entries/${entryId}`, { token })).status, 404);
      await assertFits(page, 'the entries after a deletion');
      assert.deepEqual(browser.pageErrors, []);
    });
  }
});
