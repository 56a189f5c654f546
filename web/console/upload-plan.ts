/**
 * How the Upload form turns the files an operator chose into ingestion jobs: JSON and JSON Lines
 * files keep their adapter (one job each); every other file is a document for the `files` adapter,
 * packed in order into jobs whose multipart body stays under the service's limit.
 */

/** What the form needs to know of a file (a browser `File` has both). */
export type FileLike = { name: string; size: number };

export type FileKind = 'json' | 'json-lines' | 'document';

/** The extensions the picker offers: records (JSON, JSON Lines) and documents (PDF, DOCX, HTML, Markdown, text). */
export const acceptedExtensions = ['.json', '.jsonl', '.ndjson', '.pdf', '.docx', '.html', '.htm', '.md', '.markdown', '.txt'];

// MULTIPART_LIMIT_MB's default. The console cannot read the server's setting; a server configured
// lower answers 413 with its limit, which the form shows.
export const multipartLimitBytes = 30 * 1024 * 1024;
// Room for the form fields and each part's headers (name, file name, content type: about 200
// bytes a part), so a job packed to the limit is not refused for its envelope.
const formFieldsBytes = 16 * 1024;
const partHeaderBytes = 512;
// The service's limit of file parts in one request (MULTIPART_MAX_FILES).
export const maxFilesPerJob = 1000;

/** JSON and JSON Lines by extension; anything else goes to the `files` adapter, which detects its type by content. */
export function fileKind(name: string): FileKind {
  const extension = /\.[^.]+$/.exec(name.toLowerCase())?.[0] ?? '';
  if (extension === '.json') return 'json';
  if (extension === '.jsonl' || extension === '.ndjson') return 'json-lines';
  return 'document';
}

/**
 * Documents grouped into jobs, in the order chosen: a job takes files until the next one would
 * push its body past `limitBytes` or its count past `maxFiles`. A file larger than the limit by itself gets a job of its own
 * (the service refuses it with its 413, which names the limit).
 */
export function packDocuments<File extends FileLike>(files: File[], limitBytes = multipartLimitBytes, maxFiles = maxFilesPerJob): File[][] {
  const jobs: File[][] = [];
  let current: File[] = [];
  let bytes = formFieldsBytes;
  for (const file of files) {
    const size = file.size + partHeaderBytes;
    if (current.length > 0 && (bytes + size > limitBytes || current.length >= maxFiles)) {
      jobs.push(current);
      current = [];
      bytes = formFieldsBytes;
    }
    current.push(file);
    bytes += size;
  }
  if (current.length > 0) jobs.push(current);
  return jobs;
}

/**
 * A JSON Lines file's records wrapped as the adapter's payload (`{"records": [...]}` for
 * generic-json, `[[...], {}]` for content-hub), as `lore ingest` does; blank lines are skipped.
 * Throws naming the first line that is not a JSON object.
 */
export function jsonLinesPayload(text: string, adapterType: string, fileName: string): string {
  const records: string[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === '') return;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch (error) {
      throw new Error(`${fileName}:${index + 1}: not valid JSON (${(error as Error).message})`, { cause: error });
    }
    if (typeof record !== 'object' || record === null || Array.isArray(record)) throw new Error(`${fileName}:${index + 1}: a record must be a JSON object`);
    records.push(line.trim());
  });
  return adapterType === 'content-hub' ? `[[${records.join(',')}],{}]` : `{"records":[${records.join(',')}]}`;
}

/** The same file chosen twice (by drop and by the picker) is listed once. */
export function fileKey(file: FileLike & { lastModified?: number }): string {
  return `${file.name}\u0000${file.size}\u0000${file.lastModified ?? 0}`;
}
