/**
 * Issue 34, items 2 and 5, in the console: a job whose records all failed showed as a green
 * "completed" with a full bar, and the status pill wrapped mid-word at 1280 px ("complete / d")
 * beside counts ✓ ✗ ↷ without a label. Now a job with failed records is shown in a warning colour
 * with their count, one with nothing but failures as an error; its status stays the API's. In
 * Chromium at a desktop (1280×800) and a phone (390×844) size, in the job list and on the job's
 * page. The page is the subject, not the database: the service runs on the embedded engine, and
 * the file runs once (scripts/test-files.js).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Locator } from 'playwright-core';
import { assertFits, startConsoleSession, viewports, waitForText, type ConsoleSession } from '../../../test/console-steps.ts';
import { hubItem, waitForJob } from '../../../test/ingestion.ts';
import { startEmbeddedTestServer } from '../../../test/test-server.ts';

/**
 * What a job shows within `scope` (its row, or its page's facts): its pill's words, whether they
 * are on one line in a box one line high (a wrapped pill is a line taller, or more), the pill's
 * outcome class and colour, the bar's colour, and the counts' words and titles.
 */
async function shown(scope: Locator) {
  const pill = await scope
    .locator('.badge')
    .first()
    .evaluate((element) => {
      const style = getComputedStyle(element);
      const range = document.createRange();
      range.selectNodeContents(element);
      const oneLine = parseFloat(style.lineHeight) + parseFloat(style.paddingTop) + parseFloat(style.paddingBottom) + parseFloat(style.borderTopWidth) + parseFloat(style.borderBottomWidth);
      return {
        text: (element as HTMLElement).innerText,
        oneLine: new Set(Array.from(range.getClientRects(), (rect) => Math.round(rect.top))).size === 1 && Math.abs(element.getBoundingClientRect().height - oneLine) < 1,
        outcome: Array.from(element.classList).filter((name) => name.startsWith('outcome-')),
        background: style.backgroundColor,
      };
    });
  const bar = await scope.locator('.progress-fill').evaluate((element) => getComputedStyle(element).backgroundColor);
  const counts = await scope.locator('.counts .count').evaluateAll((elements) => elements.map((element) => [(element as HTMLElement).innerText, element.getAttribute('title')]));
  return { ...pill, bar, counts };
}

const SUCCEEDED_TITLE = 'Records written: created, updated or deleted';
const FAILED_TITLE = 'Records that failed: see each one\'s error on the job\'s page';
const SKIPPED_TITLE = 'Records skipped: unchanged, a duplicate, not found or superseded';

type Shown = Awaited<ReturnType<typeof shown>>;

describe('the console shows jobs with failed records in a warning or error colour, with labelled counts, on one line', () => {
  let session: ConsoleSession;
  const jobs: { name: string; id: string; expected: Shown }[] = [];

  before(async () => {
    session = await startConsoleSession('job-outcome', startEmbeddedTestServer);
    const { server, token, knowledgeBaseId } = session;
    const hubJob = async (items: ReturnType<typeof hubItem>[]) => {
      const submitted = await server.request('POST', '/api/v2/data-ingestion/jobs', { token, body: { adapterType: 'content-hub', knowledgeBaseId, data: [items, {}] } });
      assert.equal(submitted.status, 202, submitted.text);
      return waitForJob(server, token, submitted.body.jobId);
    };
    // Manual pages as a new user uploads them: their long names, shown in the row, take the width
    // that the other columns lose (the pill wrapped in every row beside such a job).
    const form = new FormData();
    form.set('adapterType', 'files');
    form.set('knowledgeBaseId', knowledgeBaseId);
    for (const command of ['credential-cache--daemon', 'cvsexportcommit', 'difftool', 'http-backend']) {
      form.append('files', new Blob([`# git ${command}\n\nWhat git ${command} does, with its <options>.`], { type: 'text/markdown' }), `git-${command}-documentation.md`);
    }
    const submitted = await server.request('POST', '/api/v2/data-ingestion/jobs', { token, raw: form });
    assert.equal(submitted.status, 202, submitted.text);
    const clean = await waitForJob(server, token, submitted.body.jobId);
    // 120 keywords make a content-hub record fail.
    const partial = await hubJob([hubItem('partial-a', 'Billing'), hubItem('partial-bad', 'Refunds', 120), hubItem('partial-b', 'Exports')]);
    const allFailed = await hubJob([hubItem('bad-1', 'Billing', 120), hubItem('bad-2', 'Refunds', 120), hubItem('bad-3', 'Exports', 120)]);
    // The statuses stay as the spec defines them: every one of these jobs completed.
    assert.deepEqual([clean, partial, allFailed].map((job) => [job.status, job.data.progress.successful, job.data.progress.failed]), [
      ['completed', 4, 0],
      ['completed', 2, 1],
      ['completed', 0, 3],
    ]);
    const labelled = (succeeded: number, failed: number, skipped: number): [string, string][] => [
      [`${succeeded} succeeded`, SUCCEEDED_TITLE],
      [`${failed} failed`, FAILED_TITLE],
      [`${skipped} skipped`, SKIPPED_TITLE],
    ];
    jobs.push(
      // Green pill, the accent's bar.
      { name: 'no failures', id: clean.id, expected: { text: 'completed', oneLine: true, outcome: [], background: 'rgb(214, 242, 224)', bar: 'rgb(49, 86, 211)', counts: labelled(4, 0, 0) } },
      // Orange pill, --warn bar.
      { name: 'a failed record', id: partial.id, expected: { text: 'completed · 1 record failed', oneLine: true, outcome: ['outcome-warning'], background: 'rgb(255, 224, 194)', bar: 'rgb(166, 106, 0)', counts: labelled(2, 1, 0) } },
      // Red pill (a failed job's), --bad bar.
      { name: 'only failures', id: allFailed.id, expected: { text: 'completed · 3 records failed', oneLine: true, outcome: ['outcome-error'], background: 'rgb(251, 220, 217)', bar: 'rgb(194, 54, 43)', counts: labelled(0, 3, 0) } },
    );
  });
  after(() => session?.close());

  for (const viewport of viewports) {
    const size = `${viewport.width}×${viewport.height}`;

    test(`in the job list (${size})`, async () => {
      const { server, page } = session;
      await page.setViewportSize(viewport);
      await page.goto(`${server.url}/console#/jobs`);
      const listed: Record<string, Shown> = {};
      for (const job of jobs) {
        const row = page.locator(`tr[data-job-id="${job.id}"]`);
        await waitForText(row, 'completed');
        listed[job.name] = await shown(row);
      }
      assert.deepEqual(listed, Object.fromEntries(jobs.map((job) => [job.name, job.expected])));
      await assertFits(page, 'the job list with failed records');
    });

    test(`on each job's page (${size})`, async () => {
      const { server, page } = session;
      await page.setViewportSize(viewport);
      const onPage: Record<string, Shown> = {};
      for (const job of jobs) {
        await page.goto(`${server.url}/console#/jobs/${job.id}`);
        const facts = page.locator('.facts');
        await waitForText(facts, 'completed');
        onPage[job.name] = await shown(facts);
        await assertFits(page, `the page of a job with ${job.name}`);
      }
      assert.deepEqual(onPage, Object.fromEntries(jobs.map((job) => [job.name, job.expected])));
      assert.deepEqual(session.browser.pageErrors, []);
    });
  }
});
