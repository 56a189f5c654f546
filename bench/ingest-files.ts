/**
 * `BENCH_MODE=files npm run bench:ingest`: the files adapter on a folder of generated documents,
 * BENCH_PDFS PDFs of BENCH_PDF_PAGES pages and BENCH_DOCX Word documents of about BENCH_DOCX_PAGES
 * pages (3,000 characters a page), uploaded like `lore ingest` does (jobs under 30 MB). Prints one
 * JSON line: files/s, MB/s, and the time spent extracting text (the `parse` stage) against
 * embedding (the `embed` stage) and the rest.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { openAsBlob } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { findUploadPaths, packDocuments } from '../src/client/document-files.ts';
import { LoreClient, terminalJobStatuses, type Job } from '../src/client/lore-client.ts';
import { BuiltinEmbeddingProvider } from '../src/core/providers/embeddings/builtin.ts';
import type { ExtractionBounds } from '../src/features/ingestion/adapters/files/bounds.ts';
import { extractDocument } from '../src/features/ingestion/adapters/files/extract.ts';
import { docxDocument, pdfDocument } from '../test/document-fixtures.ts';
import { round, texts } from './corpus.ts';
import { benchDatabase, benchEnv, benchTenant, call, startBenchServer } from './lore-server.ts';

const pdfs = Number(process.env.BENCH_PDFS ?? 20);
const pdfPages = Number(process.env.BENCH_PDF_PAGES ?? 20);
const docxFiles = Number(process.env.BENCH_DOCX ?? 20);
const docxPages = Number(process.env.BENCH_DOCX_PAGES ?? 10);
// A page of a report: a section heading and five paragraphs of about 550 characters.
const PARAGRAPHS_PER_PAGE = 5;
const PARAGRAPH_CHARS = 550;

/** Writes the documents into a new folder. */
async function writeDocuments(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'lore-bench-files-'));
  for (let index = 0; index < pdfs; index += 1) {
    const pages = Array.from({ length: pdfPages }, (_, page) => ({
      heading: page % 5 === 0 ? `Chapter ${page / 5 + 1}` : undefined,
      sections: [{ subheading: `Section ${page + 1}`, paragraphs: texts(PARAGRAPHS_PER_PAGE, PARAGRAPH_CHARS, index * 1000 + page) }],
    }));
    await writeFile(join(folder, `report-${index}.pdf`), await pdfDocument(pages, `Report ${index}`));
  }
  for (let index = 0; index < docxFiles; index += 1) {
    const sections = Array.from({ length: docxPages }, (_, page) => ({ heading: `Part ${page + 1}`, paragraphs: texts(PARAGRAPHS_PER_PAGE, PARAGRAPH_CHARS, 500_000 + index * 1000 + page) }));
    await writeFile(
      join(folder, `guide-${index}.docx`),
      await docxDocument({ heading: `Guide ${index}`, paragraphs: [], subheading: 'Prices', table: [['Plan', 'Price'], ['Team', '20 EUR']], items: ['First step', 'Second step'], sections }),
    );
  }
  return folder;
}

/**
 * Text extraction alone, on this thread, once warm: the jobs' `parse` stage also counts the
 * reads of the files from the database, which wait behind the previous batch's writes.
 */
async function extractionAlone(paths: string[], bounds: ExtractionBounds): Promise<number> {
  const extract = async (path: string) => extractDocument(path.endsWith('.pdf') ? 'pdf' : 'docx', await readFile(path), bounds);
  for (const path of paths.slice(0, 2)) await extract(path);
  const started = performance.now();
  for (const path of paths) await extract(path);
  return (performance.now() - started) / 1000;
}

/** Polls a job every 250 ms until it ends. */
async function finished(client: LoreClient, jobId: string): Promise<Job> {
  for (;;) {
    const job = await client.getJob(jobId);
    if (terminalJobStatuses.includes(job.status)) return job;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Runs the files benchmark and prints its JSON line. */
export async function benchFiles(): Promise<void> {
  const folder = await writeDocuments();
  const database = await benchDatabase(process.env.DATABASE_URL);
  const { config, server } = await startBenchServer(benchEnv(database, { INGESTION_WORKERS: process.env.INGESTION_WORKERS ?? '1' }));
  try {
    const base = server.url;
    const { token } = await benchTenant(base, 'bench-files');
    const knowledgeBase = await call(base, 'POST', '/api/v2/knowledge-bases', token, { name: 'bench-files' });
    const { embedder } = server.context;
    await (embedder instanceof BuiltinEmbeddingProvider ? embedder.warmUp() : embedder.embed(['warm up']));
    const { documents } = await findUploadPaths([folder]);
    const bytes = documents.reduce((sum, document) => sum + document.size, 0);
    const client = new LoreClient({ baseUrl: base, token });
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    const started = performance.now();
    const jobIds: string[] = [];
    for (const job of packDocuments(documents)) {
      const files = await Promise.all(job.map(async (document) => ({ name: document.name, content: await openAsBlob(document.path) })));
      jobIds.push((await client.submitFiles({ knowledgeBaseId: knowledgeBase.id, files })).jobId);
    }
    const jobs = await Promise.all(jobIds.map((id) => finished(client, id)));
    const seconds = (performance.now() - started) / 1000;
    loopDelay.disable();
    const stages: Record<string, number> = {};
    for (const job of jobs) for (const [stage, ms] of Object.entries(job.data.timings)) stages[stage] = (stages[stage] ?? 0) + ms / 1000;
    const failed = jobs.flatMap((job) => job.data.results.filter((result) => result.status !== 'success'));
    const extractionSeconds = await extractionAlone(documents.map((document) => document.path), config.extraction);
    console.log(
      JSON.stringify({
        mode: 'files',
        engine: server.context.db.engine,
        embedder: `${embedder.name}/${embedder.model}`,
        embeddingThreads: config.embeddingsThreads,
        files: documents.length,
        pdfs: { count: pdfs, pages: pdfPages },
        docx: { count: docxFiles, pages: docxPages },
        megabytes: round(bytes / 1024 / 1024, 2),
        jobs: jobs.length,
        failedFiles: failed.length,
        chunks: jobs.reduce((sum, job) => sum + job.result.embeddingsGenerated, 0),
        seconds: round(seconds),
        filesPerSecond: round(documents.length / seconds, 2),
        megabytesPerSecond: round(bytes / 1024 / 1024 / seconds, 2),
        stageSeconds: Object.fromEntries(Object.entries(stages).map(([stage, value]) => [stage, round(value, 2)])),
        // The parse stage is extraction plus reading the files from the database.
        extractionAlone: { seconds: round(extractionSeconds, 2), filesPerSecond: round(documents.length / extractionSeconds, 1), megabytesPerSecond: round(bytes / 1024 / 1024 / extractionSeconds, 2) },
        extractionAloneOverEmbedStage: round(extractionSeconds / Math.max(stages.embed ?? 0, 0.001), 2),
        apiEventLoopDelayMs: { p99: round(loopDelay.percentile(99) / 1e6), max: round(loopDelay.max / 1e6) },
      }),
    );
  } finally {
    await server.close();
    await database.drop();
    await rm(folder, { recursive: true, force: true });
  }
}
