// Runs on one engine: the subject is the lore ingest client (its files, jobs, progress and exit
// codes); what the server does with the jobs is the ingestion tests' subject, on both engines.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../test/fake-openai.ts';
import { engine, startTestServer, type TestServer } from '../../test/harness.ts';
import { docxDocument, pdfDocument, pngBytes, xhtmlPage } from '../../test/document-fixtures.ts';
import { markdownDocument } from '../../test/ingestion.ts';
import { freePort } from '../../test/lore-process.ts';
import { LoreClient } from '../client/lore-client.ts';

const loreBin = fileURLToPath(new URL('../../bin/lore.js', import.meta.url));
const contentHubExport = fileURLToPath(new URL('../features/ingestion/adapters/fixtures/content-hub-export.json', import.meta.url));

type Finished = { code: number | null; stdout: string; stderr: string };

/** A running `lore ingest`: its output so far, and how it ends. */
type Ingest = { child: ChildProcess; output: { stdout: string; stderr: string }; finished: Promise<Finished> };

function describeRun(finished: Finished): string {
  return `exit ${finished.code}\nstdout:\n${finished.stdout}\nstderr:\n${finished.stderr}`;
}

describe(`lore ingest (${engine})`, () => {
  let server: TestServer;
  let fake: FakeOpenAi;
  let dir: string;

  before(async () => {
    fake = await startFakeOpenAi();
    // JSON bodies of 1 MB and more are refused (413), so a job that gets through above that size came as multipart.
    server = await startTestServer({ ...fakeEmbeddingsEnv(fake), JSON_BODY_LIMIT_MB: '1' });
    dir = await mkdtemp(join(tmpdir(), 'lore-ingest-'));
  });
  after(async () => {
    await server?.close();
    await fake?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * Starts `lore ingest ...args` with only PATH and `env` in its environment, in a temp directory
   * (or `where.cwd`), with `--url` of the test server (none when `where.url` is null).
   */
  function startIngest(args: string[], env: Record<string, string> = {}, where: { url?: string | null; cwd?: string } = {}): Ingest {
    const url = where.url === undefined ? server.url : where.url;
    const child = spawn(process.execPath, [loreBin, 'ingest', ...(url === null ? [] : ['--url', url]), ...args], {
      cwd: where.cwd ?? dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    });
    const output = { stdout: '', stderr: '' };
    child.stdout.setEncoding('utf8').on('data', (text: string) => (output.stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (output.stderr += text));
    const finished = new Promise<Finished>((resolve) => child.once('close', (code) => resolve({ code, ...output })));
    return { child, output, finished };
  }

  function runIngest(args: string[], env: Record<string, string> = {}, where: { url?: string | null; cwd?: string } = {}): Promise<Finished> {
    return startIngest(args, env, where).finished;
  }

  /** A workspace with a knowledge base, a token for it, and a client of the API with that token. */
  async function tenantWithKnowledgeBase() {
    const { token } = await server.tenant(['data-ingestion:read', 'data-ingestion:write', 'knowledge-bases:read', 'knowledge-bases:write']);
    const client = new LoreClient({ baseUrl: server.url, token });
    const knowledgeBase = await client.createKnowledgeBase({ name: 'uploads' });
    return { token, client, kb: knowledgeBase.id };
  }

  async function writeJsonLines(name: string, count: number, size: number): Promise<string> {
    const path = join(dir, name);
    const lines = Array.from({ length: count }, (_, index) =>
      JSON.stringify({ id: `doc-${index}`, content: markdownDocument(index, size), contentType: 'markdown', tags: ['upload'] }),
    );
    await writeFile(path, `${lines.join('\n')}\n`);
    return path;
  }

  test('a JSON Lines file of 1,200 records becomes 3 jobs of at most 500; all complete, 1,200 entries; a second run skips all 1,200', async () => {
    const { token, client, kb } = await tenantWithKnowledgeBase();
    const file = await writeJsonLines('records.jsonl', 1200, 300);

    const first = await runIngest([file, '--kb', kb, '--adapter', 'generic-json', '--records-per-job', '500'], { LORE_TOKEN: token });
    assert.equal(first.code, 0, describeRun(first));
    const { total, jobs } = await client.listJobs({ limit: 100 });
    assert.equal(total, 3);
    assert.deepEqual(jobs.map((job) => [job.status, job.data.recordCount]).sort(), [['completed', 200], ['completed', 500], ['completed', 500]]);
    assert.equal(jobs.reduce((sum, job) => sum + job.result.entriesCreated, 0), 1200);
    assert.equal((await client.listEntries(kb, { limit: 1 })).total, 1200);
    assert.match(first.stdout, /^ {2}created +1200$/m);
    assert.match(first.stdout, /^ {2}skipped +0$/m);
    assert.match(first.stdout, /^ {2}failed +0$/m);
    assert.match(first.stdout, /^ {2}total +1200$/m);
    assert.match(first.stdout, /^ {2}jobs +3 {2}\(3 completed\)$/m);
    assert.match(first.stdout, /^ {2}records\/s +\d+\.\d$/m);
    assert.doesNotMatch(first.stdout, /Failed records|did not complete/);
    // Without a terminal, progress goes to stderr as lines: one per job submitted and ended, and a last progress line.
    assert.match(first.stderr, /^Uploading 1200 records from 1 file$/m);
    assert.match(first.stderr, /^job 1 \(.*records\.jsonl:1-500\) completed in [\d.]+ s: 500 created, 0 updated, 0 skipped, 0 deleted, 0 failed$/m);
    assert.match(first.stderr, /^job 3 submitted: [0-9a-f-]{36} \(.*records\.jsonl:1001-1200, 200 records\)$/m);
    assert.match(first.stderr, /^progress: 1200\/1200 records \(100%\), [\d.]+ records\/s, ETA .*, jobs 3\/3$/m);

    const second = await runIngest([file, '--kb', kb, '--adapter', 'generic-json', '--records-per-job', '500'], { LORE_TOKEN: token });
    assert.equal(second.code, 0, describeRun(second));
    assert.match(second.stdout, /^ {2}created +0$/m);
    assert.match(second.stdout, /^ {2}skipped +1200 {2}\(unchanged 1200\)$/m);
    assert.equal((await client.listJobs()).total, 6);
    assert.equal((await client.listEntries(kb, { limit: 1 })).total, 1200);
  });

  test('a job the service refuses (400, one invalid record) is reported with the record\'s file location; the other jobs complete; exit 1', async () => {
    const { token, client, kb } = await tenantWithKnowledgeBase();
    const records = [
      { id: 'ok-1', content: 'First valid record.' },
      { id: 'ok-2', content: 'Second valid record.' },
      { id: 'ok-3', content: 'Third valid record.' },
      { id: 'no-content', title: 'A record without content' },
    ];
    const file = join(dir, 'one-invalid.json');
    await writeFile(file, JSON.stringify({ records }));

    const finished = await runIngest([file, '--kb', kb, '--adapter', 'generic-json', '--records-per-job', '2'], { LORE_TOKEN: token });
    assert.equal(finished.code, 1, describeRun(finished));
    const { jobs } = await client.listJobs();
    assert.deepEqual(jobs.map((job) => [job.status, job.data.recordCount]), [['completed', 2]], 'only the valid job was created');
    assert.equal((await client.listEntries(kb)).total, 2);
    assert.match(finished.stdout, /^ {2}created +2$/m);
    assert.match(finished.stdout, /^The service refused 2 of 4 records of \S*one-invalid\.json \(1 job\); the other jobs ran\.$/m);
    assert.match(finished.stdout, /^ {2}refused +2 {2}\(the service did not accept their jobs; nothing of them was written\)$/m);
    assert.doesNotMatch(finished.stdout, /not processed/);
    assert.match(finished.stderr, /^progress: 2\/2 records \(100%\)/m, 'the bar counts only the records of the job that was created');
    assert.match(finished.stdout, /^ {2}jobs +2 {2}\(1 completed, 1 refused\)$/m);
    assert.match(finished.stdout, /^Jobs that did not complete \(1\):$/m);
    assert.match(
      finished.stdout,
      /^ {2}job 2 \(.*one-invalid\.json#\/records\/2-3, 2 records\) refused: 400 Bad Request: The payload does not match the generic-json schema: \/records\/1\/content is required \(unless deleted is true\)$/m,
    );
    assert.match(finished.stdout, /^ {6}.*one-invalid\.json#\/records\/3 \(\/records\/1\/content\): is required \(unless deleted is true\)$/m);
  });

  test('a file whose only job is refused: the refusal says what and why, no progress is shown for a job never created, exit 1', async () => {
    const { token, client, kb } = await tenantWithKnowledgeBase();
    const records = [
      { id: 'fine', content: 'A valid record.' },
      { id: 'bad', title: 'A record without content' },
    ];
    const file = join(dir, 'refused-whole.json');
    await writeFile(file, JSON.stringify({ records }));

    const finished = await runIngest([file, '--kb', kb, '--adapter', 'generic-json'], { LORE_TOKEN: token });
    assert.equal(finished.code, 1, describeRun(finished));
    assert.equal((await client.listJobs()).total, 0, 'no job was created');
    assert.doesNotMatch(finished.stderr, /progress:/, `no progress for a job that was never created\n${describeRun(finished)}`);
    const output = finished.stdout + finished.stderr;
    assert.match(output, /^The service refused all 2 records of \S*refused-whole\.json: nothing was ingested\.$/m, describeRun(finished));
    assert.match(output, /400 Bad Request: The payload does not match the generic-json schema: \/records\/1\/content is required \(unless deleted is true\)/);
    assert.match(output, /^ {6}.*refused-whole\.json#\/records\/1 \(\/records\/1\/content\): is required \(unless deleted is true\)$/m);
    assert.match(finished.stdout, /^ {2}refused +2 {2}\(the service did not accept their jobs; nothing of them was written\)$/m);
    assert.match(finished.stdout, /^ {2}jobs +1 {2}\(1 refused\)$/m);
  });

  test('JSON files (a {records} payload, a bare array) and a record over 1 MB sent alone as multipart, with client credentials from the environment', async () => {
    const { client, kb } = await tenantWithKnowledgeBase();
    const workspaceId = (await client.getKnowledgeBase(kb)).workspaceId;
    const credentials = await server.createClient(workspaceId, ['data-ingestion:read', 'data-ingestion:write']);
    const payload = join(dir, 'payload.json');
    const array = join(dir, 'array.json');
    const big = join(dir, 'big.jsonl');
    const html = `<p>${'The original page, kept beside its text. '.repeat(30_000)}</p>`;
    await writeFile(payload, JSON.stringify({ records: [{ id: 'a', content: '# Alpha\n\nThe first.', contentType: 'markdown' }, { id: 'b', content: 'Beta.' }] }, null, 2));
    await writeFile(array, JSON.stringify([{ id: 'c', title: 'Gamma', content: 'The third.', tags: ['x'] }]));
    await writeFile(big, [{ id: 'd', content: 'Delta.' }, { id: 'huge', content: 'A page with its HTML.', metadata: { html } }, { id: 'e', content: 'Epsilon.' }].map((record) => JSON.stringify(record)).join('\n'));
    assert.ok(html.length > 1024 * 1024);

    const finished = await runIngest([payload, array, big, '--kb', kb, '--adapter', 'generic-json'], {
      LORE_CLIENT_ID: credentials.clientId,
      LORE_CLIENT_SECRET: credentials.clientSecret,
    });
    assert.equal(finished.code, 0, describeRun(finished));
    assert.match(finished.stdout, /^ {2}created +6$/m);
    assert.match(finished.stdout, /^ {2}jobs +5 {2}\(5 completed\)$/m);
    assert.match(finished.stderr, /^job 4 submitted: [0-9a-f-]{36} \(.*big\.jsonl:2, 1 record\)$/m);
    assert.match(finished.stderr, /^job 1 submitted: [0-9a-f-]{36} \(.*payload\.json#\/records\/0-1, 2 records\)$/m);
    // Jobs are submitted concurrently, so their creation order is not the files' order: sort by size.
    const { jobs } = await client.listJobs();
    assert.deepEqual(jobs.map((job) => job.data.recordCount).sort(), [1, 1, 1, 1, 2]);
    const { entries } = await client.listEntries(kb);
    assert.deepEqual(entries.map((entry) => [entry.recordId, entry.title, entry.tags]).sort(), [
      ['a', 'Alpha', []],
      ['b', 'Beta', []],
      ['c', 'Gamma', ['x']],
      ['d', 'Delta', []],
      ['e', 'Epsilon', []],
      ['huge', 'A page with its HTML', []],
    ]);
    assert.equal(entries.find((entry) => entry.recordId === 'huge')!.metadata.html, html);
  });

  test('a content-hub export is split into [items, {timeTaken}] payloads; a failed record is counted, its reason given first, and the exit code is 1', async () => {
    const { token, client, kb } = await tenantWithKnowledgeBase();
    const file = join(dir, 'export.json');
    await copyFile(contentHubExport, file);

    const finished = await runIngest([file, '--kb', kb, '--adapter', 'content-hub', '--records-per-job', '4'], { LORE_TOKEN: token });
    assert.equal(finished.code, 1, describeRun(finished));
    assert.match(finished.stdout, /^1 of 6 records failed\. The first reasons:\n {2}content is empty after converting the HTML to Markdown \(1 record\)\n\nUploaded to knowledge base /m);
    assert.match(finished.stdout, /^ {2}jobs +2 {2}\(2 completed\)$/m, 'the jobs themselves completed, as the spec defines it');
    const { jobs } = await client.listJobs({ includePayload: true });
    // Jobs are submitted concurrently, so their creation order is not the file's order: sort by size.
    const payloads = jobs.map((job) => job.payload as [{ content: { documentIdentifier: string } }[], object]).sort((a, b) => b[0].length - a[0].length);
    assert.deepEqual(
      payloads.map(([items, summary]) => [items.map((item) => item.content.documentIdentifier), summary]),
      [
        [['kb-article-1001', 'faq-2002', 'snippet-3003', 'note-4004'], { timeTaken: '0.412s' }],
        [['kb-article-0999', 'empty-5005'], { timeTaken: '0.412s' }],
      ],
    );
    assert.match(finished.stdout, /^ {2}created +4$/m);
    assert.match(finished.stdout, /^ {2}skipped +1 {2}\(not_found 1\)$/m);
    assert.match(finished.stdout, /^ {2}failed +1$/m);
    assert.match(finished.stdout, /^Failed records \(1\):\n {2}empty-5005 \(job 2\): content is empty after converting the HTML to Markdown$/m);
    assert.equal((await client.listEntries(kb)).total, 4);
  });

  test('a directory: its documents (by detected type, recursively, named by their path in it) go to the files adapter, its JSON Lines to --adapter; each file of another type is named with its type; hidden files are skipped; exit 0', async () => {
    const { token, kb } = await tenantWithKnowledgeBase();
    const docs = join(dir, 'docs');
    await mkdir(join(docs, 'guides'), { recursive: true });
    await mkdir(join(docs, 'notes'), { recursive: true });
    await mkdir(join(docs, '.cache'), { recursive: true });
    await writeFile(join(docs, 'handbook.pdf'), await pdfDocument([{ heading: 'Handbook', sections: [{ paragraphs: ['The handbook explains the night shift.'] }] }]));
    await writeFile(join(docs, 'policy.docx'), await docxDocument({ heading: 'Policy', paragraphs: ['Holidays are booked a month ahead.'], subheading: 'Rules', table: [['Day', 'Shift']], items: ['One item'] }));
    await writeFile(join(docs, 'guides', 'setup.md'), '# Setup\n\nInstall the package first.\n');
    await writeFile(join(docs, 'guides', 'README'), 'Plain text without an extension is a document too.\n');
    await writeFile(join(docs, 'guides', 'git-tag.html'), xhtmlPage({ title: 'git-tag(1)', paragraphs: ['Add a tag reference in refs/tags/.'] }));
    await writeFile(join(docs, 'guides', 'logo.png'), pngBytes);
    await writeFile(join(docs, 'feed.xml'), '<?xml version="1.0"?>\n<rss version="2.0"><channel><title>News</title></channel></rss>\n');
    await writeFile(join(docs, 'notes', 'empty.txt'), '');
    await writeFile(join(docs, '.cache', 'stale.md'), '# Stale\n');
    await writeFile(join(docs, 'records.jsonl'), `${JSON.stringify({ id: 'rec-1', content: 'A record from JSON Lines.' })}\n`);

    const finished = await runIngest([docs, '--kb', kb, '--adapter', 'generic-json'], { LORE_TOKEN: token });
    assert.equal(finished.code, 0, describeRun(finished));
    assert.match(finished.stderr, /^Left out 3 files of types lore does not read: application\/xml 1, image\/png 1, an empty file 1 \(each is named in the summary\)$/m);
    assert.match(finished.stdout, /\(generic-json and files\)/);
    assert.match(finished.stdout, /^ {2}created +6$/m);
    assert.match(finished.stdout, /^ {2}left out +3 {2}\(application\/xml 1, image\/png 1, an empty file 1; not uploaded\)$/m);
    assert.ok(
      finished.stdout.endsWith(
        [
          'Files left out (3): lore reads PDF, DOCX, HTML, Markdown and plain text',
          `  ${join(docs, 'feed.xml')}: application/xml`,
          `  ${join(docs, 'guides', 'logo.png')}: image/png`,
          `  ${join(docs, 'notes', 'empty.txt')}: an empty file`,
          '',
        ].join('\n'),
      ),
      describeRun(finished),
    );
    const entries = await server.request('GET', `/api/v2/knowledge-bases/${kb}/entries?limit=100`, { token });
    assert.deepEqual(entries.body.entries.map((entry: any) => entry.recordId).sort(), ['guides/README', 'guides/git-tag.html', 'guides/setup.md', 'handbook.pdf', 'policy.docx', 'rec-1']);
  });

  test('files named on the command line: an XHTML page goes in; one of a type lore does not read is left out, named with its type, and the exit code is 1', async () => {
    const { token, client, kb } = await tenantWithKnowledgeBase();
    const named = join(dir, 'named');
    await mkdir(named, { recursive: true });
    const page = join(named, 'git-add.html');
    const feed = join(named, 'feed.xml');
    const logo = join(named, 'logo.png');
    await writeFile(page, xhtmlPage({ title: 'git-add(1)', paragraphs: ['This command updates the index using the current content found in the working tree.'] }));
    await writeFile(feed, '<?xml version="1.0"?>\n<rss version="2.0"><channel><title>News</title></channel></rss>\n');
    await writeFile(logo, pngBytes);

    const finished = await runIngest([page, feed, logo, '--kb', kb], { LORE_TOKEN: token });
    assert.equal(finished.code, 1, describeRun(finished));
    assert.match(finished.stdout, /^Left out 2 files named on the command line: lore does not read their types \(application\/xml, image\/png\)\.$/m);
    assert.match(finished.stdout, /^ {2}created +1$/m);
    assert.match(finished.stdout, /^ {2}failed +0$/m);
    assert.match(finished.stdout, new RegExp(`^ {2}${feed}: application/xml \\(named on the command line\\)$`, 'm'));
    assert.match(finished.stdout, new RegExp(`^ {2}${logo}: image/png \\(named on the command line\\)$`, 'm'));
    const { jobs } = await client.listJobs({ includePayload: true });
    assert.deepEqual(
      jobs.map((job) => (job.payload as { files: { name: string; format: string }[] }).files.map((file) => [file.name, file.format])),
      [[['git-add.html', 'html']]],
      'only the XHTML page was uploaded',
    );
    assert.equal((await client.listEntries(kb)).entries[0]!.title, 'git-add(1)');

    const nothing = await runIngest([feed, '--kb', kb], { LORE_TOKEN: token });
    assert.equal(nothing.code, 1, describeRun(nothing));
    assert.match(nothing.stdout, /^Left out 1 file named on the command line: lore does not read its type \(application\/xml\)\.$/m);
    assert.match(nothing.stdout, /^No records to upload\.$/m);
    assert.equal((await client.listJobs()).total, 1, 'no job for a run that left out everything');
  });

  test('every record failed: the jobs completed, but the exit code is 1 and the summary says all failed, with the reasons', async () => {
    const { token, client, kb } = await tenantWithKnowledgeBase();
    const emptyItem = (id: string) => ({ content: { documentIdentifier: id, deleted: false, inlineContent: { textContent: { data: '&lt;script&gt;x()&lt;/script&gt;' }, type: 'TEXT' } } });
    const file = join(dir, 'all-empty.json');
    await writeFile(file, JSON.stringify([[emptyItem('empty-1'), emptyItem('empty-2')], { timeTaken: '0.1s' }]));

    const finished = await runIngest([file, '--kb', kb, '--adapter', 'content-hub'], { LORE_TOKEN: token });
    assert.equal(finished.code, 1, describeRun(finished));
    assert.match(finished.stdout, /^All 2 records failed: nothing was ingested\. The first reasons:\n {2}content is empty after converting the HTML to Markdown \(2 records\)$/m);
    assert.match(finished.stdout, /^ {2}failed +2$/m);
    assert.match(finished.stdout, /^Failed records \(2\):\n {2}empty-1 \(job 1\): content is empty after converting the HTML to Markdown\n {2}empty-2 \(job 1\): /m);
    const { jobs } = await client.listJobs();
    assert.deepEqual(jobs.map((job) => [job.status, job.result.entriesFailed]), [['completed', 2]], 'the job\'s status stays as the spec defines it');
  });

  test('a bad token: exit 1 with the API\'s message, before any file is read', async () => {
    const { kb } = await tenantWithKnowledgeBase();
    const finished = await runIngest([join(dir, 'does-not-exist.jsonl'), '--kb', kb, '--adapter', 'generic-json', '--token', 'not-a-token']);
    assert.equal(finished.code, 1, describeRun(finished));
    assert.equal(finished.stdout, '');
    assert.equal(finished.stderr, 'lore: 401 Unauthorized: The access token is malformed, expired or has an invalid signature.\n');
  });

  test('without --url, lore ingest calls the server of HOST and PORT (the environment, else .env; 0.0.0.0 is 127.0.0.1); LORE_URL wins over them, --url over LORE_URL', async () => {
    const { token, kb } = await tenantWithKnowledgeBase();
    const file = await writeJsonLines('where.jsonl', 1, 200);
    const port = new URL(server.url).port;
    const closed = `http://127.0.0.1:${await freePort()}`;
    const args = [file, '--kb', kb, '--adapter', 'generic-json'];
    const uploaded = (finished: Finished) => {
      assert.equal(finished.code, 0, describeRun(finished));
      assert.match(finished.stdout, new RegExp(`^Uploaded to knowledge base ${kb} `, 'm'));
    };

    uploaded(await runIngest(args, { LORE_TOKEN: token, HOST: '0.0.0.0', PORT: port }, { url: null }));
    const withDotEnv = join(dir, 'with-dot-env');
    await mkdir(withDotEnv, { recursive: true });
    await writeFile(join(withDotEnv, '.env'), `HOST=0.0.0.0\nPORT=${port}\nLOG_LEVEL=debug\n`);
    uploaded(await runIngest(args, { LORE_TOKEN: token }, { url: null, cwd: withDotEnv }));
    uploaded(await runIngest(args, { LORE_TOKEN: token, LORE_URL: server.url, PORT: new URL(closed).port }, { url: null }));
    uploaded(await runIngest(args, { LORE_TOKEN: token, LORE_URL: closed }, { url: server.url }));
  });

  test('a service that cannot be reached: exit 1, naming the URL, where it came from, and --url and LORE_URL', async () => {
    const { token, kb } = await tenantWithKnowledgeBase();
    const port = await freePort();
    const args = [join(dir, 'never-read.jsonl'), '--kb', kb, '--adapter', 'generic-json'];
    const fromPort = await runIngest(args, { LORE_TOKEN: token, PORT: String(port) }, { url: null });
    assert.equal(fromPort.code, 1, describeRun(fromPort));
    assert.equal(fromPort.stdout, '');
    assert.equal(
      fromPort.stderr,
      `lore: cannot reach the service at http://127.0.0.1:${port} (from HOST and PORT): ECONNREFUSED. ` +
        'Give its address with --url or LORE_URL (e.g. --url https://lore.example.com), or set the server\'s HOST and PORT here (in the environment or .env).\n',
    );
    const fromLoreUrl = await runIngest(args, { LORE_TOKEN: token, LORE_URL: `http://127.0.0.1:${port}/` }, { url: null });
    assert.equal(fromLoreUrl.code, 1, describeRun(fromLoreUrl));
    assert.match(fromLoreUrl.stderr, new RegExp(`^lore: cannot reach the service at http://127\\.0\\.0\\.1:${port} \\(from LORE_URL\\): ECONNREFUSED\\. Give its address with --url or LORE_URL`));
  });

  test('a knowledge base of another workspace: the first job is refused with 404 and nothing more is submitted', async () => {
    const { token } = await tenantWithKnowledgeBase();
    const other = await tenantWithKnowledgeBase();
    const file = await writeJsonLines('elsewhere.jsonl', 30, 200);
    const finished = await runIngest([file, '--kb', other.kb, '--adapter', 'generic-json', '--records-per-job', '10', '--concurrency', '1'], { LORE_TOKEN: token });
    assert.equal(finished.code, 1, describeRun(finished));
    assert.match(finished.stdout, /^ {2}jobs +1 {2}\(1 refused\)$/m);
    assert.match(finished.stdout, new RegExp(`^Stopped submitting: 404 Not Found: Knowledge base ${other.kb} does not exist\\.$`, 'm'));
    assert.equal((await other.client.listJobs()).total, 0);
  });

  test('Ctrl-C cancels the submitted jobs that have not finished and exits 130', async () => {
    const { token, client, kb } = await tenantWithKnowledgeBase();
    const file = await writeJsonLines('slow.jsonl', 400, 300);
    fake.delayMs = 400;
    try {
      const run = startIngest([file, '--kb', kb, '--adapter', 'generic-json', '--records-per-job', '100', '--concurrency', '2'], { LORE_TOKEN: token });
      const deadline = Date.now() + 30_000;
      while (!/^job 2 submitted/m.test(run.output.stderr) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      run.child.kill('SIGINT');
      const finished = await run.finished;
      assert.equal(finished.code, 130, describeRun(finished));
      assert.match(finished.stderr, /^Interrupted: cancelling the unfinished jobs/m);
      const { jobs } = await client.listJobs();
      assert.equal(jobs.length, 2, 'no job was submitted after Ctrl-C');
      assert.deepEqual(jobs.map((job) => job.status), ['cancelled', 'cancelled']);
      assert.match(finished.stdout, /^ {2}jobs +2 {2}\(2 cancelled\)$/m);
    } finally {
      fake.delayMs = 0;
    }
  });
});
