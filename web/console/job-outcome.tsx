/**
 * How a job's records went, wherever the console shows a job (its row in the list, where an upload
 * lands, and its page). A job's status is the service's and stays so: a job whose every record
 * failed has still `completed`, as the spec defines it. It showed as a green "completed" with a
 * full bar; its colour now says how its records went, and its pill how many failed.
 */
import type { Job } from './types.ts';

/**
 * `error` for a job that failed, or whose records all failed so far (none written or skipped);
 * `warning` for one with some failed records; none otherwise (the status's own colour).
 */
export function jobOutcome(job: Job): 'warning' | 'error' | undefined {
  const { successful, failed, skipped } = job.data.progress;
  if (job.status === 'failed' || (failed > 0 && successful + skipped === 0)) return 'error';
  return failed > 0 ? 'warning' : undefined;
}

/** The class that colours a job's pill and bar by its outcome (styles.ts), or none. */
export function outcomeClass(job: Job): string | undefined {
  const outcome = jobOutcome(job);
  return outcome && `outcome-${outcome}`;
}

/**
 * The job's status, and the count of its failed records when there are any: "completed · 3 records
 * failed" (with the noun, so that a failed job's reads "failed · 2 records failed").
 */
export function JobStatusBadge({ job }: { job: Job }) {
  const { processed, successful, failed, skipped } = job.data.progress;
  const title = failed === 0 ? undefined : `${failed} of the ${processed} records processed failed${successful + skipped === 0 ? '; none was written' : ''}`;
  return (
    <span class={['badge', `badge-${job.status}`, outcomeClass(job)].filter(Boolean).join(' ')} title={title}>
      {job.status}
      {failed > 0 ? ` · ${failed} ${failed === 1 ? 'record' : 'records'} failed` : ''}
    </span>
  );
}

/** What each count counts, as its title. */
const countTitles = {
  succeeded: 'Records written: created, updated or deleted',
  failed: "Records that failed: see each one's error on the job's page",
  skipped: 'Records skipped: unchanged, a duplicate, not found or superseded',
};

/** The job's records by result, in words ("2 succeeded · 1 failed · 0 skipped"), each titled. */
export function RecordCounts({ job }: { job: Job }) {
  const { successful, failed, skipped } = job.data.progress;
  return (
    <span class="counts">
      <span class="count" title={countTitles.succeeded}>
        {successful} succeeded
      </span>
      {' · '}
      <span class={`count${failed > 0 ? ' bad' : ''}`} title={countTitles.failed}>
        {failed} failed
      </span>
      {' · '}
      <span class="count" title={countTitles.skipped}>
        {skipped} skipped
      </span>
    </span>
  );
}
