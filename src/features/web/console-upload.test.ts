/**
 * The console's Upload with documents, in headless Chromium against the real server, at a desktop
 * (1280×800) and a phone (390×844) width: a PDF and a Markdown file, one dropped and one chosen,
 * go as one multipart `files` job with a `files` part each, which completes; the job list names
 * the files. The packing of documents into jobs under the multipart limit is tested as a function.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { fileKind, jsonLinesPayload, maxFilesPerJob, multipartLimitBytes, packDocuments } from '../../../web/console/upload-plan.ts';
import { launchBrowser, type TestBrowser } from '../../../test/browser.ts';
import { assertFits, openSection, signInConsole, viewports, waitForText } from '../../../test/console-page.ts';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../test/fake-openai.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { createKnowledgeBase, waitForJob } from '../../../test/ingestion.ts';

const MB = 1024 * 1024;

/** A PDF of two pages with a heading and a paragraph each, as a user's manual would be. */
async function manualPdf(topic: string): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  pdf.setTitle(`The ${topic} manual`);
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const [heading, text] of [
    ['Exports', `Exports of the ${topic} workspace run nightly and keep thirty days of history.`],
    ['Limits', `A ${topic} export holds at most ten thousand rows; larger tables are split.`],
  ] as const) {
    const page = pdf.addPage([595, 842]);
    page.drawText(heading, { x: 50, y: 780, size: 20, font });
    page.drawText(text, { x: 50, y: 740, size: 11, font });
  }
  return Buffer.from(await pdf.save());
}

test('documents are packed in order into jobs under the multipart limit; JSON and JSON Lines keep their adapter', () => {
  const file = (name: string, megabytes: number) => ({ name, size: megabytes * MB });
  const cases: [files: { name: string; size: number }[], jobs: string[][]][] = [
    [[file('a.pdf', 1), file('b.md', 1)], [['a.pdf', 'b.md']]],
    [[file('a.pdf', 20), file('b.pdf', 9), file('c.pdf', 2)], [['a.pdf', 'b.pdf'], ['c.pdf']]],
    [[file('a.pdf', 10), file('big.pdf', 40), file('c.md', 1)], [['a.pdf'], ['big.pdf'], ['c.md']]],
    [[file('exactly.pdf', 30)], [['exactly.pdf']]],
    [[], []],
  ];
  for (const [files, jobs] of cases) {
    assert.deepEqual(packDocuments(files).map((job) => job.map((item) => item.name)), jobs, files.map((item) => item.name).join(', '));
  }
  // The service's limit of file parts per request holds too.
  const notes = Array.from({ length: maxFilesPerJob + 1 }, (_, index) => file(`note-${index}.md`, 0.001));
  assert.deepEqual(packDocuments(notes).map((job) => job.length), [maxFilesPerJob, 1]);
  assert.equal(multipartLimitBytes, 30 * MB);

  assert.deepEqual(['a.json', 'b.JSONL', 'c.ndjson', 'd.pdf', 'e.docx', 'f.htm', 'g.md', 'h.txt', 'README'].map(fileKind), [
    'json', 'json-lines', 'json-lines', 'document', 'document', 'document', 'document', 'document', 'document',
  ]);
  assert.equal(jsonLinesPayload('{"id":"a","content":"x"}\n\n{"id":"b","content":"y"}\r\n', 'generic-json', 'r.jsonl'), '{"records":[{"id":"a","content":"x"},{"id":"b","content":"y"}]}');
  assert.equal(jsonLinesPayload('{"id":"a"}', 'content-hub', 'r.jsonl'), '[[{"id":"a"}],{}]');
  assert.throws(() => jsonLinesPayload('{"id":"a"}\n[1]', 'generic-json', 'r.jsonl'), /r\.jsonl:2: a record must be a JSON object/);
  assert.throws(() => jsonLinesPayload('{"id":', 'generic-json', 'r.jsonl'), /r\.jsonl:1: not valid JSON/);
});

describe(`console Upload with documents in Chromium (${engine})`, () => {
  let server: TestServer;
  let fake: FakeOpenAi;
  let browser: TestBrowser;
  let page: Page;
  let token: string;
  let knowledgeBaseId: string;
  let credentials: { clientId: string; clientSecret: string };

  before(async () => {
    fake = await startFakeOpenAi();
    server = await startTestServer(fakeEmbeddingsEnv(fake));
    const bundle = await server.request('GET', '/console.js');
    assert.equal(bundle.status, 200, 'dist/web/console.js is missing: run `npm run build` first');
    const workspaceId = await server.createWorkspace('console-upload');
    credentials = await server.createClient(workspaceId, ['*']);
    token = await server.token(workspaceId, ['*']);
    knowledgeBaseId = await createKnowledgeBase(server, token, { name: 'Manuals' });
    browser = await launchBrowser();
    page = browser.page;
    await signInConsole(page, server.url, credentials);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await fake?.close();
  });

  for (const viewport of viewports) {
    test(`a dropped Markdown file and a chosen PDF become one files job that completes (${viewport.width}×${viewport.height})`, async () => {
      await page.setViewportSize(viewport);
      const adapters = await server.request('GET', '/api/v2/data-ingestion/adapters', { token });
      assert.ok(adapters.body.some((adapter: { name: string }) => adapter.name === 'files'), 'the service lists the files adapter');

      await openSection(page, 'Upload');
      const markdown = `# ${viewport.name} notes\n\n## Retention\n\nThe ${viewport.name} team keeps exports for thirty days.\n`;
      await page.locator('.dropzone').evaluate((zone, text) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([text], 'notes.md', { type: 'text/markdown' }));
        zone.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
      }, markdown);
      const pdfName = `${viewport.name}-manual.pdf`;
      await page.locator('input[type=file][name=files]').setInputFiles({ name: pdfName, mimeType: 'application/pdf', buffer: await manualPdf(viewport.name) });
      const chosen = page.getByRole('list', { name: 'Chosen files' }).getByRole('listitem');
      await waitForText(chosen.nth(1), pdfName);
      assert.match(await chosen.nth(0).innerText(), /notes\.md \(\d+ B\)\s+document/);
      assert.equal(await page.getByLabel('Knowledge base').inputValue(), knowledgeBaseId);
      await assertFits(page, 'the Upload form with two files');

      const [request] = await Promise.all([
        page.waitForRequest((sent) => sent.method() === 'POST' && new URL(sent.url()).pathname === '/api/v2/data-ingestion/jobs'),
        page.getByRole('button', { name: 'Create job' }).click(),
      ]);
      // Chromium does not expose a body of File parts to the test; the job's results below show
      // that both files arrived as `files` parts of one files job.
      assert.match(request.headers()['content-type'] ?? '', /^multipart\/form-data; boundary=/);

      const notice = page.getByRole('status').filter({ hasText: 'was created' });
      await waitForText(notice, /Job [0-9a-f-]{36} was created\./);
      const jobId = /Job ([0-9a-f-]{36})/.exec(await notice.innerText())![1]!;
      const row = page.locator(`tr[data-job-id="${jobId}"]`);
      await waitForText(row.locator('.file-names'), 'notes.md');
      assert.match(await row.locator('.file-names').innerText(), new RegExp(pdfName));
      await waitForText(row, 'completed');
      await assertFits(page, 'the job list');

      const job = await waitForJob(server, token, jobId);
      const jobs = await server.request('GET', '/api/v2/data-ingestion/jobs', { token });
      assert.equal(jobs.body.total, viewports.indexOf(viewport) + 1, 'one job for both files');
      assert.equal(job.status, 'completed');
      assert.equal(job.data.adapterType, 'files');
      assert.deepEqual(
        job.data.results.map((result: { sourceId: string; status: string }) => `${result.sourceId} ${result.status}`).sort(),
        [`${pdfName} success`, 'notes.md success'].sort(),
      );
      assert.deepEqual(browser.pageErrors, []);
    });
  }
});
