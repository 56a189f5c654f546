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
