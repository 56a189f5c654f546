import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError } from '../../../test/assert-error.ts';
import { docxDocument, encryptedPdf, pdfDocument, pngBytes, scannedPdf, xhtmlPage } from '../../../test/document-fixtures.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { createKnowledgeBase, waitForJob } from '../../../test/ingestion.ts';

const JOBS = '/api/v2/data-ingestion/jobs';
// A small request limit lets the 413 tests send small bodies; every document below fits.
const LIMIT_KB = 256;

type Upload = { name: string; bytes: Buffer | string; type?: string };

function filesForm(knowledgeBaseId: string, files: Upload[], manifest?: unknown): FormData {
  const form = new FormData();
  form.set('adapterType', 'files');
  form.set('knowledgeBaseId', knowledgeBaseId);
  if (manifest !== undefined) form.set('manifest', JSON.stringify(manifest));
  for (const file of files) {
    const bytes = typeof file.bytes === 'string' ? file.bytes : new Uint8Array(file.bytes);
    form.append('files', new Blob([bytes], { type: file.type ?? 'application/octet-stream' }), file.name);
  }
  return form;
}

const glacierPdf = () =>
  pdfDocument(
    [
      {
        heading: 'Glacier Handbook',
        sections: [{ subheading: 'Introduction', paragraphs: ['Glaciers are rivers of ice that move slowly down a valley under their own weight, carving the rock beneath them.'] }],
      },
      {
        sections: [
          {
            subheading: 'Crevasse safety',
            paragraphs: [
              'Rope teams keep at least twelve metres of rope between climbers when they cross a crevasse field, and every climber carries a prusik loop.',
              'Snow bridges are weakest in the afternoon sun, so crevasse fields are crossed early in the morning.',
            ],
          },
        ],
      },
      { sections: [{ subheading: 'Ice axes', paragraphs: ['An ice axe is held in the uphill hand, its pick pointing backwards, ready for a self-arrest.'] }] },
    ],
    'Glacier Handbook',
  );

const shippingDocx = () =>
  docxDocument({
    heading: 'Shipping policy',
    paragraphs: ['Parcels to the Lofoten islands leave the warehouse every Tuesday by ferry.'],
    subheading: 'Rates',
    table: [
      ['Zone', 'Price'],
      ['Lofoten', '14 EUR'],
    ],
    items: ['Tracking numbers arrive by e-mail', 'Insurance is included above 200 EUR'],
  });

const htmlPage = `<!DOCTYPE html><html><head><title>Sauna etiquette</title></head><body>
<nav><a href="/">Home</a> <a href="/menu">Menu that repeats on every page</a></nav>
<main><h1>Sauna etiquette</h1><p>Guests shower before entering the sauna &amp; sit on a towel.</p>
<h2>L&ouml;yly</h2><p>Water thrown on the stones makes the steam called l&ouml;yly.</p></main>
<footer>Copyright footer text</footer></body></html>`;

const markdownNotes = '# Reindeer husbandry\n\nReindeer herders move their herds to the coast in spring.\n\n## Calving\n\nCalves are born in May on the summer pastures.\n';

describe(`files adapter (${engine})`, () => {
  let server: TestServer;
  let token: string;
  let knowledgeBaseId: string;

  before(async () => {
    server = await startTestServer({ MULTIPART_LIMIT_MB: String(LIMIT_KB / 1024) });
    ({ token } = await server.tenant());
    knowledgeBaseId = await createKnowledgeBase(server, token);
  });
  after(() => server.close());

  async function submitFiles(files: Upload[], manifest?: unknown, kb = knowledgeBaseId) {
    return server.request('POST', JOBS, { token, raw: filesForm(kb, files, manifest) });
  }

  async function ingestFiles(files: Upload[], manifest?: unknown) {
    const answer = await submitFiles(files, manifest);
    assert.equal(answer.status, 202, answer.text);
    const job = await waitForJob(server, token, answer.body.jobId);
    assert.equal(job.status, 'completed', JSON.stringify(job.result));
    return job;
  }

  async function entry(entryId: string) {
    const answer = await server.request('GET', `/api/v2/knowledge-bases/${knowledgeBaseId}/entries/${entryId}`, { token });
    assert.equal(answer.status, 200, answer.text);
    return answer.body;
  }

  test('a PDF, a DOCX, an HTML page and a Markdown file become entries chunked under their headings; the PDF keeps its pages', async () => {
    const pdf = await glacierPdf();
    const docx = await shippingDocx();
    const job = await ingestFiles(
      [
        { name: 'handbook.pdf', bytes: pdf },
        { name: 'shipping.docx', bytes: docx },
        { name: 'sauna.html', bytes: htmlPage },
        { name: 'notes/reindeer.md', bytes: markdownNotes },
      ],
      { 'handbook.pdf': { url: 'https://docs.example/glacier.pdf', tags: ['outdoor'], metadata: { edition: 3 } } },
    );
    assert.deepEqual(
      job.data.results.map((result: any) => [result.sourceId, result.status, result.action]),
      [
        ['handbook.pdf', 'success', 'created'],
        ['shipping.docx', 'success', 'created'],
        ['sauna.html', 'success', 'created'],
        ['notes/reindeer.md', 'success', 'created'],
      ],
    );
    assert.equal(job.data.adapterId, 'files@1.0.0');
    assert.equal(job.data.recordCount, 4);

    const handbook = await entry(job.data.results[0].entryId);
    assert.equal(handbook.title, 'Glacier Handbook');
    assert.equal(handbook.url, 'https://docs.example/glacier.pdf');
    assert.deepEqual(handbook.tags, ['outdoor']);
    assert.deepEqual(handbook.metadata, { format: 'pdf', pageCount: 3, edition: 3 });
    assert.match(handbook.content, /^# Glacier Handbook\n\n## Introduction\n\nGlaciers are rivers/);
    const crevasse = handbook.chunks.find((chunk: any) => chunk.text.includes('twelve metres'));
    assert.deepEqual(crevasse.headingPath, ['Glacier Handbook', 'Crevasse safety']);
    assert.equal(crevasse.page, 2);
    assert.equal(handbook.chunks.find((chunk: any) => chunk.text.includes('self-arrest')).page, 3);
    assert.equal(handbook.chunks[0].page, 1);

    const shipping = await entry(job.data.results[1].entryId);
    assert.equal(shipping.title, 'Shipping policy');
    assert.match(shipping.content, /\| Lofoten \| 14 EUR \|/);
    assert.match(shipping.content, /^- {1,3}Tracking numbers arrive by e-mail$/m);
    assert.ok(shipping.chunks.some((chunk: any) => chunk.text.includes('14 EUR') && chunk.headingPath.join('/') === 'Shipping policy/Rates'));
    assert.equal(shipping.chunks[0].page, null);

    const sauna = await entry(job.data.results[2].entryId);
    assert.equal(sauna.title, 'Sauna etiquette');
    assert.match(sauna.content, /shower before entering the sauna & sit on a towel/);
    assert.doesNotMatch(sauna.content, /Menu that repeats|Copyright footer/);
    assert.ok(sauna.chunks.some((chunk: any) => chunk.text.includes('löyly') && chunk.headingPath.join('/') === 'Sauna etiquette/Löyly'));

    const reindeer = await entry(job.data.results[3].entryId);
    assert.equal(reindeer.title, 'Reindeer husbandry');
    assert.equal(reindeer.content, markdownNotes);
    assert.deepEqual(reindeer.chunks.at(-1).headingPath, ['Reindeer husbandry', 'Calving']);

    const withPayload = await server.request('GET', `${JOBS}/${job.id}?includePayload=true`, { token });
    assert.deepEqual(
      withPayload.body.payload.files.map((file: any) => [file.name, file.format, file.mediaType, file.size]),
      [
        ['handbook.pdf', 'pdf', 'application/pdf', pdf.length],
        ['shipping.docx', 'docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', docx.length],
        ['sauna.html', 'html', 'text/html', Buffer.byteLength(htmlPage)],
        ['notes/reindeer.md', 'markdown', 'text/markdown', Buffer.byteLength(markdownNotes)],
      ],
    );
    assert.match(withPayload.body.payload.files[0].sha256, /^[0-9a-f]{64}$/);
    assert.equal(withPayload.body.payload.files[0].url, 'https://docs.example/glacier.pdf');

    // Retrievable, with the page of the chunk; and an answer cites the PDF with its page.
    const retrieved = await server.request('POST', `/api/v2/knowledge-bases/${knowledgeBaseId}/retrieve`, {
      token,
      body: { query: 'rope between climbers crossing a crevasse field', topK: 3 },
    });
    assert.equal(retrieved.status, 200, retrieved.text);
    assert.equal(retrieved.body.results[0].recordId, 'handbook.pdf');
    assert.equal(retrieved.body.results[0].page, 2);
    const experience = await server.request('POST', '/api/v2/experiences', { token, body: { name: 'glaciers', knowledgeBaseIds: [knowledgeBaseId] } });
    assert.equal(experience.status, 201, experience.text);
    const answer = await server.request('POST', '/api/v2/query', {
      body: { experienceId: experience.body.id, text: 'How much rope do rope teams keep between climbers in a crevasse field?' },
    });
    assert.equal(answer.status, 200, answer.text);
    const source = answer.body.sources.find((candidate: any) => candidate.title === 'Glacier Handbook');
    assert.ok(source, JSON.stringify(answer.body.sources));
    assert.equal(source.url, 'https://docs.example/glacier.pdf#page=2');
    assert.deepEqual(source.metadata, { page: 2 });
    assert.equal(answer.body.sources.find((candidate: any) => candidate.title !== 'Glacier Handbook')?.metadata, undefined);
  });

  test('an XHTML page (an XML prolog, the XHTML doctype and namespace, as AsciiDoc writes git\'s manual pages) becomes an entry with its text; other XML fails', async () => {
    const page = xhtmlPage({
      title: 'git-tag(1)',
      paragraphs: ['Add a tag reference in <code>refs/tags/</code>, unless <code>-d/-l/-v</code> is given to delete, list or verify tags.', 'Unless <code>-f</code> is given, the named tag must not yet exist.'],
    });
    const feed = '<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel><title>Release notes</title></channel></rss>\n';
    const job = await ingestFiles([
      { name: 'git-tag.html', bytes: page },
      { name: 'feed.xml', bytes: feed },
    ]);
    assert.deepEqual(
      job.data.results.map((result: any) => [result.sourceId, result.status, result.action ?? result.error]),
      [
        ['git-tag.html', 'success', 'created'],
        ['feed.xml', 'failed', 'Unsupported file type (application/xml): lore reads PDF, DOCX, HTML, Markdown and plain text.'],
      ],
    );
    const gitTag = await entry(job.data.results[0].entryId);
    assert.equal(gitTag.title, 'git-tag(1)');
    assert.deepEqual(gitTag.metadata, { format: 'html' });
    assert.match(gitTag.content, /^# git-tag\(1\) Manual Page$/m);
    assert.match(gitTag.content, /^Add a tag reference in `refs\/tags\/`, unless `-d\/-l\/-v` is given to delete, list or verify tags\.$/m);
    assert.match(gitTag.content, /^Unless `-f` is given, the named tag must not yet exist\.$/m);
    assert.doesNotMatch(gitTag.content, /<\?xml|DOCTYPE|xhtml11\.dtd/);

    const withPayload = await server.request('GET', `${JOBS}/${job.id}?includePayload=true`, { token });
    assert.deepEqual(
      withPayload.body.payload.files.map((file: any) => [file.name, file.format, file.mediaType]),
      [
        ['git-tag.html', 'html', 'application/xhtml+xml'],
        ['feed.xml', null, 'application/xml'],
      ],
    );
    const retrieved = await server.request('POST', `/api/v2/knowledge-bases/${knowledgeBaseId}/retrieve`, { token, body: { query: 'delete, list or verify tags', topK: 1 } });
    assert.equal(retrieved.status, 200, retrieved.text);
    assert.equal(retrieved.body.results[0].recordId, 'git-tag.html');
  });

  test('a scan, an encrypted PDF, a damaged DOCX, a PNG, a ZIP and an empty file each fail with their reason; the job completes', async () => {
    const docx = await shippingDocx();
    const zip = Buffer.concat([Buffer.from('PK\u0003\u0004'), Buffer.alloc(64, 1)]);
    const job = await ingestFiles([
      { name: 'scan.pdf', bytes: await scannedPdf() },
      { name: 'locked.pdf', bytes: encryptedPdf() },
      { name: 'broken.docx', bytes: docx.subarray(0, docx.length - 300) },
      { name: 'photo.png', bytes: pngBytes },
      { name: 'archive.zip', bytes: zip },
      { name: 'empty.txt', bytes: '' },
      { name: 'fine.txt', bytes: 'Plain text survives next to broken files.' },
    ]);
    assert.deepEqual(
      job.data.results.map((result: any) => [result.sourceId, result.status, result.error]),
      [
        ['scan.pdf', 'failed', 'The PDF has no extractable text: it may be a scan or consist of images only (lore has no OCR).'],
        ['locked.pdf', 'failed', 'The PDF is encrypted (password-protected): lore cannot read it. Upload a copy without a password.'],
        ['broken.docx', 'failed', 'The DOCX document is damaged and cannot be read: Corrupted zip: can\'t find end of central directory'],
        ['photo.png', 'failed', 'Unsupported file type (image/png): lore reads PDF, DOCX, HTML, Markdown and plain text.'],
        ['archive.zip', 'failed', 'Unsupported file type (application/zip): lore reads PDF, DOCX, HTML, Markdown and plain text.'],
        ['empty.txt', 'failed', 'The file is empty.'],
        ['fine.txt', 'success', undefined],
      ],
    );
    assert.deepEqual(job.data.progress, { processed: 7, total: 7, successful: 1, failed: 6, skipped: 0 });
    assert.equal(job.result.entriesFailed, 6);
  });

  test('the same file again is skipped as unchanged; under another name as a duplicate', async () => {
    const kb = await createKnowledgeBase(server, token);
    const file = { name: 'faq.md', bytes: '# Opening hours\n\nThe shop opens at nine on weekdays.\n' };
    const first = await waitForJob(server, token, (await submitFiles([file], undefined, kb)).body.jobId);
    assert.equal(first.data.results[0].status, 'success');
    const again = await waitForJob(server, token, (await submitFiles([file, { ...file, name: 'copy-of-faq.md' }], undefined, kb)).body.jobId);
    assert.deepEqual(
      again.data.results.map((result: any) => [result.sourceId, result.status, result.reason, result.entryId]),
      [
        ['faq.md', 'skipped', 'unchanged', first.data.results[0].entryId],
        ['copy-of-faq.md', 'skipped', 'duplicate', first.data.results[0].entryId],
      ],
    );
    assert.equal(again.result.embeddingsGenerated, 0);
  });

  test('a job that ends keeps none of its uploaded bytes: completed, and cancelled while pending', async () => {
    const storedFiles = async (db: TestServer['context']['db'], jobId: string) =>
      (await db.query<{ files: number }>('SELECT count(*)::int AS files FROM ingestion_job_files WHERE job_id = $1', [jobId])).rows[0]!.files;
    const upload = [{ name: 'a.md', bytes: '# A\n\nFirst file.\n' }, { name: 'b.txt', bytes: 'Second file.' }];
    const completed = await ingestFiles(upload);
    assert.equal(await storedFiles(server.context.db, completed.id), 0);

    // Without workers the job stays pending, so the cancel (not the worker) is what ends it.
    const idle = await startTestServer({ INGESTION_WORKERS: '0' });
    try {
      const tenant = await idle.tenant();
      const kb = await createKnowledgeBase(idle, tenant.token);
      const submitted = await idle.request('POST', JOBS, { token: tenant.token, raw: filesForm(kb, upload) });
      assert.equal(submitted.status, 202, submitted.text);
      assert.equal(await storedFiles(idle.context.db, submitted.body.jobId), 2);
      assert.equal((await idle.request('DELETE', `${JOBS}/${submitted.body.jobId}`, { token: tenant.token })).status, 204);
      assert.equal(await storedFiles(idle.context.db, submitted.body.jobId), 0);
    } finally {
      await idle.close();
    }
  });

  test('400: a JSON body, no file, a data part, an unknown manifest name, a bad manifest field, repeated names, a NUL in a name; files on another adapter', async () => {
    const json = await server.request('POST', JOBS, { token, body: { adapterType: 'files', knowledgeBaseId, data: {} } });
    assertError(json, 400, '/v2/data-ingestion/jobs');
    assert.equal(json.body.message, 'The files adapter takes multipart/form-data with file parts named files (and an optional manifest part), not a JSON body.');

    const none = await submitFiles([]);
    assertError(none, 400, '/v2/data-ingestion/jobs');
    assert.deepEqual(none.body.errors, [{ path: '/files', message: 'needs at least one file part named files' }]);

    const withData = filesForm(knowledgeBaseId, [{ name: 'a.md', bytes: '# A' }]);
    withData.set('data', '{"records": []}');
    const dataPart = await server.request('POST', JOBS, { token, raw: withData });
    assertError(dataPart, 400, '/v2/data-ingestion/jobs');
    assert.equal(dataPart.body.message, 'The files adapter takes file parts named files, not a data part.');

    const manifest = await submitFiles([{ name: 'a.md', bytes: '# A' }, { name: 'b.md', bytes: '# B' }], {
      'c.md': { title: 'C' },
      'a.md': { url: 'ftp://example.com/a', colour: 'red' },
      'b.md': { id: 'a.md' },
    });
    assertError(manifest, 400, '/v2/data-ingestion/jobs');
    assert.deepEqual(manifest.body.errors, [
      { path: '/manifest/a.md/colour', message: 'is not a known field (known fields: id, title, url, tags, metadata)' },
      { path: '/manifest/a.md/url', message: 'must be an http or https URL' },
      { path: '/manifest/b.md/id', message: 'gives the record id a.md, which a.md has too; ids must be unique' },
      { path: '/manifest/c.md', message: 'names no uploaded file (the files are: a.md, b.md)' },
    ]);

    const notJson = filesForm(knowledgeBaseId, [{ name: 'a.md', bytes: '# A' }]);
    notJson.set('manifest', '{"a.md": ');
    const badManifest = await server.request('POST', JOBS, { token, raw: notJson });
    assertError(badManifest, 400, '/v2/data-ingestion/jobs');
    assert.equal(badManifest.body.message, 'The multipart manifest part is not valid JSON: the text ends before the JSON value is complete.');

    const repeated = await submitFiles([{ name: 'a.md', bytes: '# A' }, { name: 'a.md', bytes: '# B' }]);
    assert.deepEqual(repeated.body.errors, [{ path: '/files/1', message: 'repeats the file name a.md of /files/0; file names must be unique' }]);

    // The name becomes the record id: a NUL in it is refused, not stored or stripped.
    const nul = await submitFiles([{ name: 'a\u0000b.md', bytes: '# A' }]);
    assertError(nul, 400, '/v2/data-ingestion/jobs');
    assert.deepEqual(nul.body.errors, [{ path: '/files/0', message: 'has a file name with NUL characters or unpaired surrogates' }]);

    const other = filesForm(knowledgeBaseId, [{ name: 'a.md', bytes: '# A' }]);
    other.set('adapterType', 'generic-json');
    other.set('data', JSON.stringify({ records: [{ id: 'x', content: 'y' }] }));
    const onGeneric = await server.request('POST', JOBS, { token, raw: other });
    assertError(onGeneric, 400, '/v2/data-ingestion/jobs');
    assert.equal(onGeneric.body.message, 'File parts named files are for adapterType=files; generic-json takes its payload as one data part.');
  });

  test('413: each multipart limit says which one it is', async () => {
    const part = await submitFiles([{ name: 'big.txt', bytes: 'x'.repeat((LIMIT_KB + 10) * 1024) }]);
    assertError(part, 413, '/v2/data-ingestion/jobs');
    assert.equal(part.body.message, `The request body is too large. One file part is limited to 0.3 MB: split the document, or the payload into several jobs of 100 to 500 records.`);

    const third = Math.round((LIMIT_KB / 3 + 10) * 1024);
    const whole = await submitFiles(['a', 'b', 'c'].map((name) => ({ name: `${name}.txt`, bytes: name.repeat(third) })));
    assertError(whole, 413, '/v2/data-ingestion/jobs');
    assert.equal(whole.body.message, 'The request body is too large. A multipart request is limited to 0.3 MB in all (files and fields together): split the files into several jobs (lore ingest does).');

    const many = await submitFiles(Array.from({ length: 1001 }, (_, index) => ({ name: `${index}.txt`, bytes: 'x' })));
    assertError(many, 413, '/v2/data-ingestion/jobs');
    assert.equal(many.body.message, 'The request body is too large. A multipart request carries at most 1000 files: split them into several jobs (lore ingest does).');

    const fields = filesForm(knowledgeBaseId, [{ name: 'a.md', bytes: '# A' }]);
    for (let index = 0; index < 10; index += 1) fields.set(`extra${index}`, 'x');
    const tooManyFields = await server.request('POST', JOBS, { token, raw: fields });
    assertError(tooManyFields, 413, '/v2/data-ingestion/jobs');
    assert.equal(
      tooManyFields.body.message,
      'The request body is too large. A multipart request carries at most 10 text fields (adapterType, knowledgeBaseId, data or manifest); per-file record fields go in the manifest part.',
    );

    const field = new FormData();
    field.set('adapterType', 'generic-json');
    field.set('knowledgeBaseId', knowledgeBaseId);
    field.set('data', JSON.stringify({ records: [{ id: 'big', content: 'x'.repeat((LIMIT_KB + 10) * 1024) }] }));
    const bigField = await server.request('POST', JOBS, { token, raw: field });
    assertError(bigField, 413, '/v2/data-ingestion/jobs');
    assert.equal(bigField.body.message, 'The request body is too large. One text field is limited to 0.3 MB: send a large payload as a file part named data.');
  });
});
