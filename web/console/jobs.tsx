import { useState } from 'preact/hooks';
import type { Api } from './api.ts';
import { navigate, useAction, useData } from './hooks.ts';
import { JobStatusBadge, outcomeClass, RecordCounts } from './job-outcome.tsx';
import type { Job, JobStatus, RecordResult } from './types.ts';
import { Cell, ConfirmButton, DetailPage, ErrorNotice, formatTime, PagedTable, ProgressBar, StatusBadge, Table, useApi, useNames } from './ui.tsx';

const statuses: JobStatus[] = ['pending', 'processing', 'completed', 'failed', 'cancelled'];
const jobsPath = '/api/v2/data-ingestion/jobs';
const pageSize = 20;

// The file names this tab uploaded, by job id: a pending `files` job has no results yet to name them.
const uploadedFileNames = new Map<string, string[]>();

/** Keeps the names of the files a job was created from, for the job list. */
export function rememberFileNames(jobId: string, names: string[]): void {
  uploadedFileNames.set(jobId, names);
}

/**
 * The files a job ingests: the uploaded JSON or JSON Lines file the service names
 * (`data.fileName`); for a `files` job its results' record ids (a file's name unless a manifest
 * gave it another id), or the names this tab uploaded.
 */
export function fileNamesOf(job: Job): string[] {
  if (job.data.fileName) return [job.data.fileName];
  if (job.data.results.length > 0 && job.data.adapterType === 'files') return job.data.results.map((result) => result.sourceId);
  return uploadedFileNames.get(job.id) ?? [];
}

const namesShown = 3;

/** Up to three file names of a job, and how many more. */
function FileNames({ job }: { job: Job }) {
  const names = fileNamesOf(job);
  if (names.length === 0) return null;
  const more = names.length - namesShown;
  return (
    <span class="file-names" title={names.join('\n')}>
      {names.slice(0, namesShown).join(', ')}
      {more > 0 ? ` and ${more} more` : ''}
    </span>
  );
}

function isRunning(job: Job): boolean {
  return job.status === 'pending' || job.status === 'processing';
}

/** Saves the job's submitted payload (includePayload=true) as a JSON file. */
async function downloadPayload(api: Api, jobId: string): Promise<void> {
  const job = await api.get<Job>(`${jobsPath}/${jobId}`, { includePayload: true });
  const blob = new Blob([JSON.stringify(job.payload, null, 2)], { type: 'application/json' });
  const link = document.createElement('a');
  link.href = URL.createObjectURL(blob);
  link.download = `job-${jobId}-payload.json`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}

/** What cancelling the job costs, asked before it is done: one click once cancelled an 800-record job. */
function cancelQuestion(job: Job): string {
  const total = job.data.progress.total || job.data.recordCount;
  const left = Math.max(0, total - job.data.progress.processed);
  return `Cancel this job? ${left} of its ${total} records will not be ingested; the ones already written stay. A cancelled job cannot be resumed.`;
}

/**
 * Whether the job's failed records can be retried (POST .../retry): it has finished with some. A
 * files job's uploaded files are gone once it ends, so its failed documents are uploaded again.
 */
function retriable(job: Job): boolean {
  return !isRunning(job) && job.data.progress.failed > 0 && job.data.adapterType !== 'files';
}

/** Queues a job of the failed records and opens it. */
async function retryFailed(api: Api, jobId: string): Promise<void> {
  const retry = await api.request<Job>('POST', `${jobsPath}/${jobId}/retry`);
  navigate('jobs', retry.id);
}

/** The Payload, Retry and Cancel buttons of a job, with the error of the last click. */
function JobActions({ job, onChanged }: { job: Job; onChanged: () => void }) {
  const api = useApi();
  const { busy, error, run } = useAction();
  const act = async (action: () => Promise<unknown>) => {
    if (await run(action)) onChanged();
  };
  const canWrite = api.holds('data-ingestion:write');
  return (
    <div class="actions">
      <button type="button" disabled={busy} onClick={() => act(() => downloadPayload(api, job.id))}>
        Payload
      </button>
      {canWrite && retriable(job) ? (
        <button type="button" disabled={busy} onClick={() => void run(() => retryFailed(api, job.id))}>
          Retry failed records ({job.data.progress.failed})
        </button>
      ) : null}
      {isRunning(job) ? (
        <ConfirmButton
          label="Cancel"
          question={cancelQuestion(job)}
          confirm="Cancel job"
          keep="Keep running"
          disabled={busy}
          onConfirm={() => act(() => api.request('DELETE', `${jobsPath}/${job.id}`))}
        />
      ) : null}
      <ErrorNotice error={error} />
    </div>
  );
}

/** "about 40 s left", "about 2 min left", "about 1 h 5 min left", "about 2 h left". */
export function formatRemaining(seconds: number): string {
  if (seconds < 60) return `about ${Math.max(1, Math.round(seconds))} s left`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `about ${minutes} min left`;
  const rest = minutes % 60;
  return `about ${Math.floor(minutes / 60)} h${rest > 0 ? ` ${rest} min` : ''} left`;
}

/**
 * The time left at the rate the job went so far (the service's `data.eta`): shown once there is a
 * rate, that is once a record is done, while the job processes.
 */
function Remaining({ job }: { job: Job }) {
  const { eta } = job.data;
  if (!eta) return null;
  return (
    <span class="eta" title={`${eta.recordsPerSecond.toFixed(1)} records/s`}>
      {formatRemaining(eta.secondsRemaining)}
    </span>
  );
}

function JobProgress({ job }: { job: Job }) {
  return (
    <>
      <ProgressBar done={job.data.progress.processed} total={job.data.progress.total || job.data.recordCount} class={outcomeClass(job)} />
      <Remaining job={job} />
    </>
  );
}

/** The workspace's jobs, newest first, refreshed live. */
export function JobsView({ notice }: { notice?: string | undefined }) {
  const api = useApi();
  const [status, setStatus] = useState<JobStatus | ''>('');
  const [offset, setOffset] = useState(0);
  const names = useNames('knowledge-bases:read', '/api/v2/knowledge-bases', 'knowledgeBases');
  const jobs = useData(
    (signal) => api.get<{ total: number; jobs: Job[] }>(jobsPath, { status, limit: pageSize, offset }, signal),
    [status, offset],
    // Always live: jobs submitted elsewhere (CLI, other operators) show up too.
    () => true,
  );

  return (
    <section aria-labelledby="jobs-title">
      <header class="section-header">
        <h2 id="jobs-title">Ingestion jobs</h2>
        <label>
          Status{' '}
          <select
            name="status"
            value={status}
            onChange={(event) => {
              setStatus(event.currentTarget.value as JobStatus | '');
              setOffset(0);
            }}
          >
            <option value="">all</option>
            {statuses.map((value) => (
              <option key={value} value={value}>
                {value}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={jobs.refresh}>
          Refresh
        </button>
        <a class="button primary" href="#/upload">
          Upload
        </a>
      </header>
      {notice ? (
        <p class="notice success" role="status">
          {notice}
        </p>
      ) : null}
      <PagedTable
        loaded={jobs}
        rowsOf={(answer) => answer.jobs}
        offset={offset}
        limit={pageSize}
        onOffset={setOffset}
        name="jobs stack"
        columns={['Created', 'Status', 'Adapter', 'Knowledge base', 'Progress', 'Records', 'Actions']}
        empty={`No jobs${status ? ` with status ${status}` : ''}.`}
        row={(job) => (
          <tr key={job.id} data-job-id={job.id}>
            <Cell label="Created">
              <a href={`#/jobs/${job.id}`} title={job.id}>
                {formatTime(job.created_at)}
              </a>
            </Cell>
            <Cell label="Status">
              <JobStatusBadge job={job} />
            </Cell>
            <Cell label="Adapter">
              {job.data.adapterType}
              <FileNames job={job} />
            </Cell>
            <Cell label="Knowledge base">{names.get(job.data.knowledgeBaseId) ?? <code>{job.data.knowledgeBaseId.slice(0, 8)}</code>}</Cell>
            <Cell label="Progress" class="progress-cell">
              <JobProgress job={job} />
            </Cell>
            <Cell label="Records">
              <RecordCounts job={job} />
            </Cell>
            <Cell label="Actions">
              <a class="button" href={`#/jobs/${job.id}`}>
                Details
              </a>
              <JobActions job={job} onChanged={jobs.refresh} />
            </Cell>
          </tr>
        )}
      />
    </section>
  );
}

/** Failed records first, the others in submission order. */
export function failedFirst(results: RecordResult[]): RecordResult[] {
  return [...results.filter((result) => result.status === 'failed'), ...results.filter((result) => result.status !== 'failed')];
}

const resultsShown = 200;

function ResultsTable({ results, knowledgeBaseId }: { results: RecordResult[]; knowledgeBaseId: string }) {
  const [onlyFailed, setOnlyFailed] = useState(false);
  const [shown, setShown] = useState(resultsShown);
  const failed = results.filter((result) => result.status === 'failed').length;
  const rows = onlyFailed ? results.filter((result) => result.status === 'failed') : failedFirst(results);
  return (
    <section aria-labelledby="results-title">
      <header class="section-header">
        <h3 id="results-title">
          Records ({results.length}, {failed} failed)
        </h3>
        <label>
          <input type="checkbox" checked={onlyFailed} onChange={(event) => setOnlyFailed(event.currentTarget.checked)} /> Only failed
        </label>
      </header>
      <Table
        name="results stack"
        columns={['Record', 'Status', 'Detail', 'Entry']}
        rows={rows.slice(0, shown)}
        empty="No records yet."
        row={(result) => (
          <tr key={result.sourceId} class={`result-${result.status}`}>
            <Cell label="Record">
              <code>{result.sourceId}</code>
            </Cell>
            <Cell label="Status">
              <StatusBadge status={result.status} />
            </Cell>
            <Cell label="Detail">{result.error ?? [result.action, result.reason].filter(Boolean).join(' ')}</Cell>
            <Cell label="Entry">{result.entryId ? <a href={`#/knowledge-bases/${knowledgeBaseId}/entries/${result.entryId}`}>entry</a> : '—'}</Cell>
          </tr>
        )}
      />
      {rows.length > shown ? (
        <button type="button" onClick={() => setShown(shown + resultsShown)}>
          Show {Math.min(resultsShown, rows.length - shown)} more
        </button>
      ) : null}
    </section>
  );
}

/** One job: progress, outcome, timings and per-record results; live until it finishes. */
export function JobView({ jobId }: { jobId: string }) {
  const api = useApi();
  const job = useData((signal) => api.get<Job>(`${jobsPath}/${jobId}`, {}, signal), [jobId], isRunning);
  return (
    <DetailPage kind="Job" id={jobId} back={['#/jobs', 'Jobs']} loaded={job}>
      {(value) => (
        <>
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <JobStatusBadge job={value} />
            </dd>
            <dt>Adapter</dt>
            <dd>
              {value.data.adapterType}
              <FileNames job={value} />
            </dd>
            <dt>Knowledge base</dt>
            <dd>
              <a href={`#/knowledge-bases/${value.data.knowledgeBaseId}`}>
                <code>{value.data.knowledgeBaseId}</code>
              </a>
            </dd>
            <dt>Created / started / ended</dt>
            <dd>
              {formatTime(value.created_at)} / {formatTime(value.started_at)} / {formatTime(value.completed_at)}
            </dd>
            <dt>Progress</dt>
            <dd class="progress-cell">
              <JobProgress job={value} /> <RecordCounts job={value} />
            </dd>
            {value.data.eta ? (
              <>
                <dt>Rate</dt>
                <dd>{value.data.eta.recordsPerSecond.toFixed(1)} records/s</dd>
              </>
            ) : null}
            {value.data.retryOf ? (
              <>
                <dt>Retry of</dt>
                <dd>
                  <a href={`#/jobs/${value.data.retryOf}`}>
                    <code>{value.data.retryOf}</code>
                  </a>
                </dd>
              </>
            ) : null}
            <dt>Entries</dt>
            <dd>
              {value.result.entriesCreated} created, {value.result.entriesUpdated} updated, {value.result.entriesSkipped} skipped,{' '}
              {value.result.entriesDeleted} deleted, {value.result.entriesFailed} failed; {value.result.embeddingsGenerated} embeddings
            </dd>
            {Object.keys(value.data.timings).length > 0 ? (
              <>
                <dt>Time per stage</dt>
                <dd>
                  {Object.entries(value.data.timings)
                    .map(([stage, ms]) => `${stage} ${Math.round(ms)} ms`)
                    .join(' · ')}
                </dd>
              </>
            ) : null}
          </dl>
          {value.result.error ? (
            <div class="notice error" role="alert">
              <strong>The job failed.</strong> {value.result.error}
            </div>
          ) : null}
          <JobActions job={value} onChanged={job.refresh} />
          <ResultsTable results={value.data.results} knowledgeBaseId={value.data.knowledgeBaseId} />
        </>
      )}
    </DetailPage>
  );
}
