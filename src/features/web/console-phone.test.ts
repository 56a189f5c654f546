/**
 * Every page of the operator console fits a phone (issue 11): at 1280×800 and at 390×844 each
 * view (jobs, a job's details, knowledge bases, entries, an entry, experiences, sessions, a
 * transcript, upload, webhooks) is no wider than the screen and has no control past its edges,
 * with long names, ids and tags that used to push tables to 529–816 px. And Cancel asks first:
 * a pending job stays pending until the operator confirms in the inline dialog.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Logger } from 'pino';
import type { Page } from 'playwright-core';
import { launchBrowser, type TestBrowser } from '../../../test/browser.ts';
import { assertFits, openSection, signInConsole, viewports, waitForText } from '../../../test/console-page.ts';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../test/fake-openai.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { createKnowledgeBase, submit, waitForJob } from '../../../test/ingestion.ts';
import { startWorkers } from '../../server.ts';

// Long words are what made the tables wide: a record id, tags and a user id without a break.
const records = [
  {
    id: 'handbook/engineering/onboarding-checklist-for-new-backend-engineers',
    title: 'Onboarding checklist for new backend engineers joining the platform team',
    url: 'https://intranet.example/handbook/engineering/onboarding-checklist-for-new-backend-engineers',
    tags: ['onboarding-and-first-week', 'platform-engineering'],
    content: '# Onboarding\n\nRequest access to the deployment pipeline on your first day. Pair with your buddy on a small change in the first week.',
  },
];

describe(`console pages at desktop and phone widths in Chromium (${engine})`, () => {
  let server: TestServer;
  let fake: FakeOpenAi;
  let browser: TestBrowser;
  let page: Page;
  let token: string;
  let knowledgeBaseId: string;
  let jobId: string;
  let entryId: string;
  let sessionId: string;

  before(async () => {
    fake = await startFakeOpenAi();
    // No workers in the server: a job submitted stays pending until the test cancels it.
    server = await startTestServer({ ...fakeEmbeddingsEnv(fake), INGESTION_WORKERS: '0' });
    const bundle = await server.request('GET', '/console.js');
    assert.equal(bundle.status, 200, 'dist/web/console.js is missing: run `npm run build` first');
    const workspaceId = await server.createWorkspace('console-phone');
    const credentials = await server.createClient(workspaceId, ['*']);
    token = await server.token(workspaceId, ['*']);
    knowledgeBaseId = await createKnowledgeBase(server, token, {
      name: 'Engineering handbook and onboarding material',
      description: 'Everything a new engineer reads in the first month: https://intranet.example/handbook/engineering/onboarding',
    });
    const { config, db, embedder, log } = server.context;
    const workers = startWorkers(1, config, { db, embedder, log: log as Logger });
    try {
      jobId = await submit(server, token, knowledgeBaseId, records);
      assert.equal((await waitForJob(server, token, jobId)).status, 'completed');
    } finally {
      await Promise.all(workers.map((worker) => worker.stop()));
    }
    const entries = await server.request('GET', `/api/v2/knowledge-bases/${knowledgeBaseId}/entries`, { token });
    entryId = entries.body.entries[0].id;
    const experience = await server.request('POST', '/api/v2/experiences', {
      token,
      body: { name: 'Engineering onboarding assistant', knowledgeBaseIds: [knowledgeBaseId], allowedOrigins: ['https://intranet.example', 'https://handbook.intranet.example'] },
    });
    assert.equal(experience.status, 201);
    const asked = await server.request('POST', '/api/v2/query', {
      headers: { origin: 'https://intranet.example' },
      body: { experienceId: experience.body.id, userId: 'grace.hopper.onboarding@engineering.intranet.example', text: 'What do I request on my first day?' },
    });
    assert.equal(asked.status, 200);
    sessionId = asked.body.sessionId;

    browser = await launchBrowser({ viewport: viewports[0] });
    page = browser.page;
    await signInConsole(page, server.url, credentials);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await fake?.close();
  });

  for (const viewport of viewports) {
    test(`every page fits ${viewport.width} px (${viewport.name})`, async () => {
      await page.setViewportSize({ width: viewport.width, height: viewport.height });
      const where = (view: string) => `${view} at ${viewport.name} width`;

      await openSection(page, 'Jobs');
      await waitForText(page.locator(`tr[data-job-id="${jobId}"]`), 'completed');
      await assertFits(page, where('Jobs'));
      await page.goto(`${server.url}/console#/jobs/${jobId}`);
      await waitForText(page.locator('table.results'), records[0]!.id);
      await assertFits(page, where('Job details'));

      await openSection(page, 'Knowledge bases');
      await waitForText(page.locator(`tr[data-knowledge-base-id="${knowledgeBaseId}"] .entry-count`), '1');
      await assertFits(page, where('Knowledge bases'));
      await page.getByRole('link', { name: 'Engineering handbook and onboarding material' }).click();
      await waitForText(page.locator('table.entries'), records[0]!.id);
      await assertFits(page, where('Entries'));
      await page.goto(`${server.url}/console#/knowledge-bases/${knowledgeBaseId}/entries/${entryId}`);
      await waitForText(page.locator('.chunks'), 'deployment pipeline');
      await assertFits(page, where('Entry'));

      await openSection(page, 'Experiences');
      await waitForText(page.locator('article.experience'), 'https://handbook.intranet.example');
      await assertFits(page, where('Experiences'));

      await openSection(page, 'Sessions');
      await waitForText(page.locator('table.sessions'), 'grace.hopper.onboarding@engineering.intranet.example');
      await assertFits(page, where('Sessions'));
      await page.goto(`${server.url}/console#/sessions/${sessionId}`);
      await waitForText(page.locator('.transcript'), 'What do I request on my first day?');
      await assertFits(page, where('Session'));

      await openSection(page, 'Upload');
      await page.getByRole('button', { name: 'Create job' }).waitFor();
      await assertFits(page, where('Upload'));

      await openSection(page, 'Webhooks');
      await page.getByRole('button', { name: 'New endpoint' }).waitFor();
      await assertFits(page, where('Webhooks'));
    });

    test(`Cancel asks first, and only the confirmation cancels the job (${viewport.name})`, async () => {
      await page.setViewportSize({ width: viewport.width, height: viewport.height });
      const pendingId = await submit(server, token, knowledgeBaseId, [{ id: `waits-${viewport.name}`, content: 'No worker runs this job.' }]);
      const status = async () => (await server.request('GET', `/api/v2/data-ingestion/jobs/${pendingId}`, { token })).body.status;

      await openSection(page, 'Jobs');
      const row = page.locator(`tr[data-job-id="${pendingId}"]`);
      await waitForText(row, 'pending');
      await row.getByRole('button', { name: 'Cancel' }).click();
      const dialog = row.getByRole('alertdialog', { name: 'Cancel' });
      await waitForText(dialog, 'Cancel this job? 1 of its 1 records will not be ingested');
      await assertFits(page, `the cancel confirmation at ${viewport.name} width`);
      assert.equal(await status(), 'pending', 'the first click only asks');

      await dialog.getByRole('button', { name: 'Keep running' }).click();
      assert.equal(await dialog.count(), 0, 'keeping it closes the question');
      assert.equal(await status(), 'pending', 'keeping it leaves the job alone');

      await row.getByRole('button', { name: 'Cancel' }).click();
      await dialog.getByRole('button', { name: 'Cancel job' }).click();
      await waitForText(row, 'cancelled');
      assert.equal(await status(), 'cancelled');
      assert.equal(await row.getByRole('button', { name: 'Cancel' }).count(), 0, 'a cancelled job has no Cancel button');
    });
  }

  test('no page logged an error', () => {
    assert.deepEqual(browser.pageErrors, []);
  });
});
