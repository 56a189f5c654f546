import type { Queryable } from '../../core/db/db.ts';

/** Stores the uploaded files of a job (files adapter), in the submit's transaction; `ordinal` is each file's position in the payload. */
export async function insertJobFiles(tx: Queryable, workspaceId: string, jobId: string, files: Buffer[]): Promise<void> {
  // One statement per file: a single one with every file would build a parameter of up to 30 MB
  // more, and PGlite copies each parameter once more to its thread.
  for (const [ordinal, bytes] of files.entries()) {
    await tx.query('INSERT INTO ingestion_job_files (job_id, workspace_id, ordinal, content) VALUES ($1, $2, $3, $4)', [jobId, workspaceId, ordinal, bytes]);
  }
}

/** The bytes of one uploaded file of a job. */
export async function readJobFile(db: Queryable, workspaceId: string, jobId: string, ordinal: number): Promise<Buffer> {
  const { rows } = await db.query<{ content: Uint8Array }>(
    'SELECT content FROM ingestion_job_files WHERE workspace_id = $1 AND job_id = $2 AND ordinal = $3',
    [workspaceId, jobId, ordinal],
  );
  const content = rows[0]?.content;
  if (!content) throw new Error(`The uploaded file ${ordinal} of job ${jobId} is missing.`);
  return Buffer.isBuffer(content) ? content : Buffer.from(content.buffer, content.byteOffset, content.byteLength);
}

/**
 * Drops the uploaded files of the workspace's finished jobs: once every file of a job has its
 * result row, its bytes serve nothing (a job that completed, failed or was cancelled never runs
 * again), and a workspace uploading 30 MB per job would otherwise keep all of it forever.
 */
export async function deleteFinishedJobFiles(db: Queryable, workspaceId: string): Promise<void> {
  await db.query(
    `DELETE FROM ingestion_job_files f USING ingestion_jobs j
     WHERE f.workspace_id = $1 AND j.workspace_id = $1 AND j.id = f.job_id AND j.status IN ('completed', 'failed', 'cancelled')`,
    [workspaceId],
  );
}

/** Drops a job's uploaded files once all of them have a result row (the job resumes without them). */
export async function deleteJobFiles(db: Queryable, workspaceId: string, jobId: string): Promise<void> {
  await db.query('DELETE FROM ingestion_job_files WHERE workspace_id = $1 AND job_id = $2', [workspaceId, jobId]);
}
