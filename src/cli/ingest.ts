/**
 * `lore ingest`: uploads files of records to a knowledge base through ingestion jobs. Files are
 * split into jobs of a few hundred records under 1 MB each (the spec's guidance), at most
 * `concurrency` jobs are in flight at once (so at most that many payloads are in memory), each
 * job is polled with growing intervals, and one progress bar covers all records. Documents (PDF,
 * DOCX, HTML, Markdown, text; named, or found in directories) go to the files adapter, packed into
 * jobs under its 30 MB limit; each document is one record.
 */
import { openAsBlob } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import cliProgress from 'cli-progress';
import { batchLimits, payloadText, recordIndexOf, splitIntoBatches, type Batch } from '../client/job-batches.ts';
import { JsonText, LoreApiError, LoreClient, LoreConnectionError, terminalJobStatuses, type Job } from '../client/lore-client.ts';
import { findUploadPaths, packDocuments, type DocumentFile, type LeftOutFile } from '../client/document-files.ts';
import type { ClientConfig } from '../core/config.ts';
import { openRecordFile, RecordFileError, uploadAdapters, type RecordFile, type UploadAdapter } from '../client/record-files.ts';

/** The options of `lore ingest` as commander parses them; the variables (LORE_URL, LORE_TOKEN, …) come in a `ClientConfig`. */
export type IngestCommandOptions = {
  kb: string;
  /** The format of the JSON files; `files` sends every file as a document. Needed only when JSON files are given. */
  adapter?: string;
  /** The service's base URL; default: LORE_URL, else the server's HOST and PORT, else http://127.0.0.1:3000. */
  url?: string;
  token?: string;
  clientId?: string;
  clientSecret?: string;
  recordsPerJob: string;
  concurrency: string;
};

type UploadSettings = {
  knowledgeBaseId: string;
  /** The adapter of the record files (none when there are only documents). */
  adapter: UploadAdapter | undefined;
  recordsPerJob: number;
  concurrency: number;
};

/** How one job of the upload ended; `refused` when the service did not accept it, `lost` when it could no longer be polled. */
type Outcome = 'completed' | 'failed' | 'cancelled' | 'refused' | 'lost';

type JobRun = {
  number: number;
  /** `file.jsonl:1-500`: where its records came from. */
  origin: string;
  records: number;
  id?: string;
  processed: number;
  outcome?: Outcome;
  /** Why a job did not complete, with the service's field errors mapped to file locations. */
  problem?: string;
  startedAt: number;
};

type FailedRecord = { sourceId: string; error: string; job: number };

/** Where the service is, and which option or variable said so (for the message when it cannot be reached). */
type Service = { url: string; from: string };

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// The spec advises polling with growing intervals: 250 ms doubling up to 5 s, or sooner when the job's ETA says it is nearly done.
const firstPollMs = 250;
const maxPollMs = 5000;
// Without a terminal, a progress line every 5 s is enough for a log and little enough for a CI console.
const logEveryMs = 5000;
const failuresShown = 50;
const fieldErrorsShown = 5;
// The distinct reasons a headline gives before the list of failed records.
const reasonsShown = 3;
const readable = 'lore reads PDF, DOCX, HTML, Markdown and plain text';
const interruptedExitCode = 130;

function positiveInteger(option: string, value: string, max: number): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1 || number > max) throw new Error(`${option} must be an integer from 1 to ${max}, got "${value}"`);
  return number;
}

function settingsOf(options: IngestCommandOptions): UploadSettings {
  if (!uuid.test(options.kb)) throw new Error(`--kb must be a knowledge-base UUID, got "${options.kb}"`);
  const adapters = [...uploadAdapters, 'files'];
  if (options.adapter !== undefined && !adapters.includes(options.adapter)) {
    throw new Error(`--adapter must be one of ${adapters.join(', ')}, got "${options.adapter}"`);
  }
  return {
    knowledgeBaseId: options.kb,
    adapter: options.adapter === 'files' ? undefined : (options.adapter as UploadAdapter | undefined),
    // 50,000 is the service's record limit per payload.
    recordsPerJob: positiveInteger('--records-per-job', options.recordsPerJob, 50_000),
    concurrency: positiveInteger('--concurrency', options.concurrency, 32),
  };
}

/** The service to call: --url, else LORE_URL, else the server's HOST and PORT, else the default. */
function serviceOf(options: IngestCommandOptions, config: ClientConfig): Service {
  if (options.url !== undefined) {
    if (!/^https?:\/\/[^/]/.test(options.url) || !URL.canParse(options.url)) throw new Error(`--url must be an http or https URL, got "${options.url}"`);
    return { url: options.url.replace(/\/+$/, ''), from: '--url' };
  }
  if (config.serviceUrl === undefined) throw new Error('PORT=0 lets the server take any free port, which only it knows: give lore ingest its address with --url or LORE_URL');
  return { url: config.serviceUrl, from: config.serviceUrlFrom };
}

/** A client with the credentials of the command line, else of the variables; a client id on the command line wins over LORE_TOKEN. */
function clientOf(options: IngestCommandOptions, config: ClientConfig, service: Service): LoreClient {
  const token = options.token ?? (options.clientId || options.clientSecret ? undefined : config.token);
  const clientId = options.clientId ?? config.clientId;
  const clientSecret = options.clientSecret ?? config.clientSecret;
  if (token) return new LoreClient({ baseUrl: service.url, token });
  if (clientId && clientSecret) return new LoreClient({ baseUrl: service.url, clientId, clientSecret });
  throw new Error('lore ingest needs --token (or LORE_TOKEN), or --client-id and --client-secret (or LORE_CLIENT_ID and LORE_CLIENT_SECRET)');
}

function recordCount(count: number): string {
  return `${count} record${count === 1 ? '' : 's'}`;
}

function fileCount(count: number): string {
  return `${count} file${count === 1 ? '' : 's'}`;
}

/** Left-out files counted by type, in the order first met: `application/xml 50, image/png 1`. */
function typeCounts(files: LeftOutFile[]): string {
  const counts = new Map<string, number>();
  for (const file of files) counts.set(file.type, (counts.get(file.type) ?? 0) + 1);
  return [...counts].map(([type, count]) => `${type} ${count}`).join(', ');
}

/** The sentence that opens the summary when files named on the command line were left out: the reason the exit code is 1. */
function namedLeftOutHeadline(leftOut: LeftOutFile[]): string[] {
  const named = leftOut.filter((file) => file.named);
  if (named.length === 0) return [];
  const types = [...new Set(named.map((file) => file.type))];
  return [`Left out ${fileCount(named.length)} named on the command line: lore does not read ${types.length === 1 ? 'its type' : 'their types'} (${types.join(', ')}).`, ''];
}

/** Each left-out file with its type, closing the summary: none is left out without a word. */
function leftOutList(leftOut: LeftOutFile[]): string[] {
  if (leftOut.length === 0) return [];
  return ['', `Files left out (${leftOut.length}): ${readable}`, ...leftOut.map((file) => `  ${file.path}: ${file.type}${file.named ? ' (named on the command line)' : ''}`)];
}

function seconds(milliseconds: number): string {
  const total = milliseconds / 1000;
  if (total < 60) return `${total.toFixed(1)} s`;
  const minutes = Math.floor(total / 60);
  return `${minutes} min ${Math.round(total - minutes * 60)} s`;
}

/** The upload's live progress: a bar on a terminal, periodic lines otherwise; both on stderr. */
interface ProgressView {
  update(done: number, jobs: string): void;
  /** The records the bar counts to: fewer once a job is refused, since its records will never be processed. */
  setTotal(total: number): void;
  /** A line every run shows (a job that ended). */
  event(line: string): void;
  /** A line only logs show (a job submitted): on a terminal the bar says enough. */
  detail(line: string): void;
  stop(): void;
}

class BarView implements ProgressView {
  private readonly bars: cliProgress.MultiBar;
  private readonly bar: cliProgress.SingleBar;
  private readonly startedAt = Date.now();

  constructor(total: number) {
    this.bars = new cliProgress.MultiBar(
      {
        stream: process.stderr,
        format: '{bar} {percentage}% | {value}/{total} records | {speed} records/s | ETA {remaining} | jobs {jobs}',
        hideCursor: true,
        fps: 5,
      },
      cliProgress.Presets.shades_classic,
    );
    this.bar = this.bars.create(total, 0, { speed: '0', remaining: '-', jobs: '0' });
  }

  update(done: number, jobs: string): void {
    const { speed, remaining } = rates(done, this.bar.getTotal(), Date.now() - this.startedAt);
    this.bar.update(done, { speed, remaining, jobs });
  }

  setTotal(total: number): void {
    this.bar.setTotal(total);
  }

  event(line: string): void {
    this.bars.log(`${line}\n`);
  }

  detail(): void {}

  stop(): void {
    this.bars.stop();
  }
}

class LogView implements ProgressView {
  private readonly startedAt = Date.now();
  private readonly timer: NodeJS.Timeout;
  private done = 0;
  private jobs = '0';

  constructor(private total: number) {
    this.timer = setInterval(() => this.print(), logEveryMs).unref();
  }

  update(done: number, jobs: string): void {
    this.done = done;
    this.jobs = jobs;
  }

  setTotal(total: number): void {
    this.total = total;
  }

  event(line: string): void {
    process.stderr.write(`${line}\n`);
  }

  detail(line: string): void {
    process.stderr.write(`${line}\n`);
  }

  stop(): void {
    clearInterval(this.timer);
    this.print();
  }

  private print(): void {
    const { speed, remaining } = rates(this.done, this.total, Date.now() - this.startedAt);
    const percent = this.total > 0 ? Math.floor((this.done / this.total) * 100) : 100;
    process.stderr.write(`progress: ${this.done}/${this.total} records (${percent}%), ${speed} records/s, ETA ${remaining}, jobs ${this.jobs}\n`);
  }
}

function rates(done: number, total: number, elapsedMs: number): { speed: string; remaining: string } {
  const perSecond = done / Math.max(elapsedMs / 1000, 0.001);
  return { speed: perSecond.toFixed(perSecond < 10 ? 1 : 0), remaining: perSecond > 0 ? seconds(((total - done) / perSecond) * 1000) : '-' };
}

/** The service's refusal of a job, with each field error's pointer turned into the file location of its record (for record files). */
function refusalOf(error: unknown, records?: { batch: Batch; file: RecordFile }): string {
  if (!(error instanceof LoreApiError)) return (error as Error).message;
  const fieldErrors = error.body.errors ?? [];
  const lines = fieldErrors.slice(0, fieldErrorsShown).map((fieldError) => {
    const index = records && recordIndexOf(fieldError.path, records.file.envelope);
    const location = index === undefined ? undefined : records!.batch.locations[index];
    return `      ${location === undefined ? '' : `${records!.file.describe(location)} `}(${fieldError.path}): ${fieldError.message}`;
  });
  if (fieldErrors.length > fieldErrorsShown) lines.push(`      and ${fieldErrors.length - fieldErrorsShown} more`);
  return [error.message, ...lines].join('\n');
}

/** One upload: its jobs, their counts, and the live view; `run()` answers the exit code. */
class Upload {
  private readonly jobs: JobRun[] = [];
  private readonly failures: FailedRecord[] = [];
  private readonly skippedReasons = new Map<string, number>();
  private readonly counts = { created: 0, updated: 0, skipped: 0, deleted: 0, failed: 0 };
  private readonly interrupt = new AbortController();
  /** Shown once the service accepted a job: a refused upload never created a job to show progress of. */
  private view: ProgressView | undefined;
  private readonly startedAt = Date.now();
  private done = 0;
  /** Records of jobs the service refused: never processed, so out of the bar's total. */
  private refused = 0;
  /** An error that makes every further job pointless (authentication, a missing knowledge base, the service gone). */
  private fatal: string | undefined;

  constructor(
    private readonly client: LoreClient,
    private readonly settings: UploadSettings,
    private readonly files: RecordFile[],
    private readonly documentJobs: DocumentFile[][],
    private readonly total: number,
    private readonly leftOut: LeftOutFile[],
  ) {}

  /** The progress view, created at the first job the service accepted. */
  private shownView(): ProgressView {
    this.view ??= process.stderr.isTTY ? new BarView(this.total - this.refused) : new LogView(this.total - this.refused);
    return this.view;
  }

  /** A line every run shows; before any job was accepted there is no view to print it above. */
  private event(line: string): void {
    if (this.view) this.view.event(line);
    else process.stderr.write(`${line}\n`);
  }

  async run(): Promise<number> {
    const onInterrupt = () => {
      // A second Ctrl-C does not wait for the cancellations.
      if (this.interrupt.signal.aborted) process.exit(interruptedExitCode);
      this.event('Interrupted: cancelling the unfinished jobs (Ctrl-C again to quit at once)');
      this.interrupt.abort();
    };
    process.on('SIGINT', onInterrupt);
    try {
      await this.submitAll();
      if (this.interrupt.signal.aborted) await this.cancelUnfinished();
    } finally {
      process.off('SIGINT', onInterrupt);
      this.view?.stop();
    }
    this.printSummary();
    if (this.interrupt.signal.aborted) return interruptedExitCode;
    // A job that completed may still hold failed records: the job's status is the spec's, the exit code is the user's.
    const everythingIn = this.jobs.every((run) => run.outcome === 'completed') && this.counts.failed === 0 && !this.leftOut.some((file) => file.named);
    return everythingIn && this.fatal === undefined ? 0 : 1;
  }

  private get stopped(): boolean {
    return this.interrupt.signal.aborted || this.fatal !== undefined;
  }

  /** Reads each file's batches only when a job slot is free, so at most `concurrency` payloads exist at once. */
  private async submitAll(): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    const launch = (submitted: Promise<JobRun>) => {
      const task = submitted.then((run) => (run.id ? this.track(run) : undefined));
      const tracked = task.finally(() => inFlight.delete(tracked));
      inFlight.add(tracked);
    };
    for (const file of this.files) {
      const batches = splitIntoBatches(file.records(), batchLimits(file.envelope, this.settings.recordsPerJob));
      try {
        for (;;) {
          while (inFlight.size >= this.settings.concurrency) await Promise.race(inFlight);
          if (this.stopped) break;
          const next = await batches.next();
          if (next.done) break;
          launch(this.submit(file, next.value));
        }
      } finally {
        await batches.return(undefined);
      }
      if (this.stopped) break;
    }
    for (const documents of this.documentJobs) {
      while (inFlight.size >= this.settings.concurrency) await Promise.race(inFlight);
      if (this.stopped) break;
      launch(this.submitDocuments(documents));
    }
    await Promise.all(inFlight);
  }

  /** Submits one job of documents to the files adapter; the files are streamed from disk. */
  private async submitDocuments(documents: DocumentFile[]): Promise<JobRun> {
    const first = documents[0]!.name;
    const last = documents[documents.length - 1]!.name;
    const run: JobRun = {
      number: this.jobs.length + 1,
      origin: documents.length === 1 ? first : `${first} … ${last}, ${documents.length} documents`,
      records: documents.length,
      processed: 0,
      startedAt: Date.now(),
    };
    this.jobs.push(run);
    try {
      const files = await Promise.all(documents.map(async (document) => ({ name: document.name, content: await openAsBlob(document.path) })));
      run.id = (await this.client.submitFiles({ knowledgeBaseId: this.settings.knowledgeBaseId, files })).jobId;
      this.shownView().detail(`job ${run.number} submitted: ${run.id} (${run.origin})`);
    } catch (error) {
      this.refuse(run, error, refusalOf(error));
    }
    return run;
  }

  /** Records a job the service did not accept; a refusal that is not about the payload stops the upload. */
  private refuse(run: JobRun, error: unknown, problem: string): void {
    run.outcome = 'refused';
    run.problem = problem;
    // A refused payload is that job's problem; any other refusal (401, 403, 404, 409, no service) would refuse every job.
    const payloadProblem = error instanceof LoreApiError && (error.status === 400 || error.status === 413);
    if (!payloadProblem) this.fatal ??= (error as Error).message;
    this.event(`job ${run.number} (${run.origin}, ${recordCount(run.records)}) refused: ${run.problem}`);
    // Its records leave the bar's total instead of filling it: they were not processed, and never will be.
    this.refused += run.records;
    this.view?.setTotal(this.total - this.refused);
    this.advance(run, 0);
  }

  private async submit(file: RecordFile, batch: Batch): Promise<JobRun> {
    const first = batch.locations[0]!;
    const last = batch.locations[batch.locations.length - 1]!;
    const run: JobRun = {
      number: this.jobs.length + 1,
      origin: `${file.describe(first)}${last === first ? '' : `-${last}`}`,
      records: batch.records.length,
      processed: 0,
      startedAt: Date.now(),
    };
    this.jobs.push(run);
    try {
      const data = new JsonText(payloadText(batch, file.envelope));
      const submitted = await this.client.submitJob({ adapterType: this.settings.adapter!, knowledgeBaseId: this.settings.knowledgeBaseId, data });
      run.id = submitted.jobId;
      this.shownView().detail(`job ${run.number} submitted: ${run.id} (${run.origin}, ${recordCount(run.records)})`);
    } catch (error) {
      this.refuse(run, error, refusalOf(error, { batch, file }));
    }
    return run;
  }

  /** Polls a job until it ends, 250 ms doubling to 5 s, or sooner when its ETA is shorter; stops polling on Ctrl-C. */
  private async track(run: JobRun): Promise<void> {
    let interval = firstPollMs;
    let etaMs = Infinity;
    for (;;) {
      try {
        await sleep(Math.max(firstPollMs, Math.min(interval, etaMs)), undefined, { signal: this.interrupt.signal });
      } catch {
        return;
      }
      let job: Job;
      try {
        job = await this.client.getJob(run.id!);
      } catch (error) {
        if (this.interrupt.signal.aborted) return;
        run.outcome = 'lost';
        run.problem = (error as Error).message;
        this.fatal ??= run.problem;
        this.event(`job ${run.number} (${run.id}) could not be polled: ${run.problem}`);
        return;
      }
      this.advance(run, job.data.progress.processed);
      if (terminalJobStatuses.includes(job.status)) {
        this.finish(run, job);
        return;
      }
      etaMs = job.data.eta ? job.data.eta.secondsRemaining * 1000 : Infinity;
      interval = Math.min(interval * 2, maxPollMs);
    }
  }

  /** Moves the bar by a job's newly processed records. */
  private advance(run: JobRun, processed: number): void {
    this.done += Math.max(processed - run.processed, 0);
    run.processed = Math.max(processed, run.processed);
    const ended = this.jobs.filter((job) => job.outcome !== undefined).length;
    this.view?.update(this.done, `${ended}/${this.jobs.length}`);
  }

  /** Adds an ended job's counts and failed records; its unprocessed records count as done for the bar. */
  private finish(run: JobRun, job: Job): void {
    run.outcome = job.status as Outcome;
    const { result } = job;
    this.counts.created += result.entriesCreated;
    this.counts.updated += result.entriesUpdated;
    this.counts.skipped += result.entriesSkipped;
    this.counts.deleted += result.entriesDeleted;
    this.counts.failed += result.entriesFailed;
    for (const record of job.data.results) {
      if (record.status === 'failed') this.failures.push({ sourceId: record.sourceId, error: record.error ?? 'failed', job: run.number });
      if (record.status === 'skipped') this.skippedReasons.set(record.reason ?? 'skipped', (this.skippedReasons.get(record.reason ?? 'skipped') ?? 0) + 1);
    }
    if (job.status === 'failed') run.problem = result.error ?? 'the job failed';
    this.advance(run, run.records);
    const took = seconds(Date.parse(job.completed_at ?? new Date().toISOString()) - run.startedAt);
    const counts = `${result.entriesCreated} created, ${result.entriesUpdated} updated, ${result.entriesSkipped} skipped, ${result.entriesDeleted} deleted, ${result.entriesFailed} failed`;
    this.event(`job ${run.number} (${run.origin}) ${job.status} in ${took}: ${counts}${run.problem ? `; ${run.problem}` : ''}`);
  }

  /** Cancels every submitted job that has not ended, then reads its final counts (what it wrote before stopping stays). */
  private async cancelUnfinished(): Promise<void> {
    const unfinished = this.jobs.filter((run) => run.id && run.outcome === undefined);
    await Promise.all(
      unfinished.map(async (run) => {
        try {
          await this.client.cancelJob(run.id!);
        } catch (error) {
          // 409: the job ended between the last poll and the cancel; its final state is read below.
          if (!(error instanceof LoreApiError && error.status === 409)) {
            run.outcome = 'lost';
            run.problem = `could not be cancelled: ${(error as Error).message}`;
            return;
          }
        }
        try {
          this.finish(run, await this.client.getJob(run.id!));
        } catch (error) {
          run.outcome = 'lost';
          run.problem = `cancelled, but its final counts could not be read: ${(error as Error).message}`;
        }
      }),
    );
  }

  /** One plain sentence first when the service refused records: how many, of what, and whether anything was ingested; "Jobs that did not complete" says why. */
  private refusalHeadline(): string[] {
    if (this.refused === 0) return [];
    const sources = [...this.files.map((file) => file.path), ...this.documentJobs.flat().map((document) => document.name)];
    const of = sources.length === 1 ? ` of ${sources[0]}` : '';
    const refusedJobs = this.jobs.filter((run) => run.outcome === 'refused').length;
    const sentence =
      this.refused === this.total
        ? `The service refused all ${recordCount(this.total)}${of}: nothing was ingested.`
        : `The service refused ${this.refused} of ${recordCount(this.total)}${of} (${refusedJobs} job${refusedJobs === 1 ? '' : 's'}); the other jobs ran.`;
    return [sentence, ''];
  }

  /** How many records failed, and the first distinct reasons with their counts; the full list closes the summary. */
  private failureHeadline(): string[] {
    const { failed } = this.counts;
    if (failed === 0) return [];
    const reasons = new Map<string, number>();
    for (const failure of this.failures) reasons.set(failure.error, (reasons.get(failure.error) ?? 0) + 1);
    const sentence = failed === this.total ? `All ${recordCount(failed)} failed: nothing was ingested.` : `${failed} of ${recordCount(this.total)} failed.`;
    const shown = [...reasons].slice(0, reasonsShown);
    return [
      `${sentence} The first reasons:`,
      ...shown.map(([reason, count]) => `  ${reason} (${recordCount(count)})`),
      ...(reasons.size > shown.length ? [`  and ${reasons.size - shown.length} other reasons (below)`] : []),
      '',
    ];
  }

  private printSummary(): void {
    const elapsed = Date.now() - this.startedAt;
    const outcomes = new Map<string, number>();
    for (const run of this.jobs) outcomes.set(run.outcome ?? 'unfinished', (outcomes.get(run.outcome ?? 'unfinished') ?? 0) + 1);
    const { created, updated, skipped, deleted, failed } = this.counts;
    const processed = created + updated + skipped + deleted + failed;
    const reasons = [...this.skippedReasons].map(([reason, count]) => `${reason} ${count}`).join(', ');
    const rows: [string, string][] = [
      ['created', String(created)],
      ['updated', String(updated)],
      ['skipped', `${skipped}${reasons ? `  (${reasons})` : ''}`],
      ['deleted', String(deleted)],
      ['failed', String(failed)],
      ...(this.refused > 0 ? [['refused', `${this.refused}  (the service did not accept their jobs; nothing of them was written)`] as [string, string]] : []),
      ...(processed + this.refused < this.total
        ? [['not processed', `${this.total - processed - this.refused}  (in jobs that failed or were cancelled, or never submitted)`] as [string, string]]
        : []),
      ...(this.leftOut.length > 0 ? [['left out', `${this.leftOut.length}  (${typeCounts(this.leftOut)}; not uploaded)`] as [string, string]] : []),
      ['total', String(this.total)],
      ['jobs', `${this.jobs.length}  (${[...outcomes].map(([outcome, count]) => `${count} ${outcome}`).join(', ') || 'none'})`],
      ['wall time', seconds(elapsed)],
      ['records/s', (processed / Math.max(elapsed / 1000, 0.001)).toFixed(1)],
    ];
    const width = Math.max(...rows.map(([label]) => label.length)) + 2;
    const adapters = [...(this.files.length > 0 ? [this.settings.adapter] : []), ...(this.documentJobs.length > 0 ? ['files'] : [])];
    const lines = [...this.refusalHeadline(), ...this.failureHeadline(), ...namedLeftOutHeadline(this.leftOut), `Uploaded to knowledge base ${this.settings.knowledgeBaseId} (${adapters.join(' and ')}):`];
    lines.push(...rows.map(([label, value]) => `  ${label.padEnd(width)}${value}`));
    const troubled = this.jobs.filter((run) => run.problem !== undefined);
    if (troubled.length > 0) {
      lines.push('', `Jobs that did not complete (${troubled.length}):`);
      for (const run of troubled) lines.push(`  job ${run.number} (${run.origin}, ${recordCount(run.records)}${run.id ? `, ${run.id}` : ''}) ${run.outcome}: ${run.problem}`);
    }
    if (this.fatal !== undefined) lines.push('', `Stopped submitting: ${this.fatal}`);
    if (this.failures.length > 0) {
      lines.push('', `Failed records (${this.failures.length}):`);
      for (const failure of this.failures.slice(0, failuresShown)) lines.push(`  ${failure.sourceId} (job ${failure.job}): ${failure.error}`);
      if (this.failures.length > failuresShown) lines.push(`  and ${this.failures.length - failuresShown} more`);
    }
    lines.push(...leftOutList(this.leftOut));
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}

/**
 * Runs `lore ingest PATH...` (files and directories); answers the exit code: 0 when every job
 * completed with no failed record and no file named on the command line was left out, 1
 * otherwise, 130 after Ctrl-C.
 */
export async function ingest(paths: string[], options: IngestCommandOptions, config: ClientConfig): Promise<number> {
  const settings = settingsOf(options);
  const service = serviceOf(options, config);
  const client = clientOf(options, config, service);
  // Checks the URL, the credentials and the read scope before any file is read.
  let adapters;
  try {
    adapters = await client.listAdapters();
  } catch (error) {
    if (!(error instanceof LoreConnectionError)) throw error;
    throw new Error(
      `cannot reach the service at ${service.url} (from ${service.from}): ${error.reason}. Give its address with --url or LORE_URL ` +
        '(e.g. --url https://lore.example.com), or set the server\'s HOST and PORT here (in the environment or .env).',
      { cause: error },
    );
  }
  let found;
  try {
    found = await findUploadPaths(paths, { jsonAsDocuments: options.adapter === 'files' });
  } catch (error) {
    throw new Error(`nothing was uploaded: ${(error as Error).message}`, { cause: error });
  }
  const { documents, recordFiles: recordPaths, leftOut } = found;
  if (recordPaths.length > 0 && settings.adapter === undefined) {
    throw new Error(`--adapter generic-json or content-hub is needed for the JSON files: ${recordPaths.slice(0, 3).join(', ')}`);
  }
  // The service must have each adapter the upload uses.
  for (const needed of [...(recordPaths.length > 0 ? [settings.adapter!] : []), ...(documents.length > 0 ? ['files'] : [])]) {
    if (!adapters.some((adapter) => adapter.name === needed)) {
      throw new Error(`The service at ${service.url} has no adapter ${needed}; it has ${adapters.map((adapter) => adapter.name).join(', ')}`);
    }
  }
  const files: RecordFile[] = [];
  try {
    for (const path of recordPaths) files.push(await openRecordFile(path, settings.adapter!));
  } catch (error) {
    if (error instanceof RecordFileError) throw new Error(`nothing was uploaded: ${error.message}`, { cause: error });
    throw error;
  }
  if (leftOut.length > 0) process.stderr.write(`Left out ${fileCount(leftOut.length)} of types lore does not read: ${typeCounts(leftOut)} (each is named in the summary)\n`);
  const total = files.reduce((sum, file) => sum + file.count, 0) + documents.length;
  if (total === 0) {
    process.stdout.write([...namedLeftOutHeadline(leftOut), 'No records to upload.', ...leftOutList(leftOut), ''].join('\n'));
    return leftOut.some((file) => file.named) ? 1 : 0;
  }
  const sources = files.length + documents.length;
  process.stderr.write(`Uploading ${recordCount(total)} from ${fileCount(sources)}\n`);
  return new Upload(client, settings, files, packDocuments(documents), total, leftOut).run();
}
