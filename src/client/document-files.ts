/**
 * Finds the documents of an upload (PDF, DOCX, HTML, Markdown, text) in files and directories,
 * and packs them into jobs of the files adapter under the service's multipart limits.
 */
import { open, readdir, stat } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { detectFormat } from '../features/ingestion/adapters/files/detect-format.ts';

/** A document to upload: where it is, the name it is sent under (its record id), and its size. */
export type DocumentFile = { path: string; name: string; size: number };

/** A file of a type the files adapter does not read: its detected type, and whether it was named (rather than found in a directory). */
export type LeftOutFile = { path: string; type: string; named: boolean };

/** What the paths of an upload hold: record files (JSON, JSON Lines), documents, and the files left out. */
export type UploadPaths = { recordFiles: string[]; documents: DocumentFile[]; leftOut: LeftOutFile[] };

const recordFileExtensions = /\.(json|jsonl|ndjson)$/i;
// Enough of a file for its type: magic bytes, a DOCX's first ZIP entries, the start of a text.
const DETECT_BYTES = 64 * 1024;
/** The service's defaults: 30 MB per multipart request, 1,000 file parts. */
export const DOCUMENT_JOB_LIMITS = { bytes: 30 * 1024 * 1024, files: 1000 };
// The fields and the multipart framing of a job (about 200 bytes per part) stay within this.
const FRAMING_BYTES = 512 * 1024;

async function readHead(path: string): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(DETECT_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, DETECT_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** The files below a directory, depth first in name order, without hidden files and directories (`.git`). */
async function* walk(directory: string): AsyncGenerator<string> {
  const entries = (await readdir(directory, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const path = join(directory, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else if (entry.isFile()) yield path;
  }
}

/**
 * Sorts the paths of an upload (`jsonAsDocuments`: JSON files are documents too). A file is a
 * record file by its extension (.json, .jsonl, .ndjson); any other is a document when the files
 * adapter reads its type (detected by content, as the service does), and is left out otherwise,
 * with that type. A directory is walked recursively. A document found in directory `d` is named
 * by its path relative to `d` (`guides/setup.md`), a named one by its base name, so record ids do
 * not depend on the directory the command runs in.
 */
export async function findUploadPaths(paths: string[], options: { jsonAsDocuments?: boolean } = {}): Promise<UploadPaths> {
  const found: UploadPaths = { recordFiles: [], documents: [], leftOut: [] };
  const isRecordFile = (path: string) => !options.jsonAsDocuments && recordFileExtensions.test(path);
  const sort = async (path: string, name: string, named: boolean) => {
    if (isRecordFile(path)) {
      found.recordFiles.push(path);
      return;
    }
    const head = await readHead(path);
    const { format, mediaType } = await detectFormat(name, head);
    // Worded as the service words a type it cannot name ("Unsupported file type (binary data of an unknown type)").
    if (format === null) found.leftOut.push({ path, type: mediaType ?? (head.length === 0 ? 'an empty file' : 'binary data of an unknown type'), named });
    else found.documents.push({ path, name, size: (await stat(path)).size });
  };
  for (const path of paths) {
    if (!(await stat(path)).isDirectory()) {
      await sort(path, basename(path), true);
      continue;
    }
    for await (const file of walk(path)) await sort(file, relative(path, file).split(sep).join('/'), false);
  }
  return found;
}

/** Documents packed into jobs in order: each job under the request limit and the file-part limit. A document over the limit alone is a job of its own (the service refuses it). */
export function packDocuments(documents: DocumentFile[], limits = DOCUMENT_JOB_LIMITS): DocumentFile[][] {
  const budget = limits.bytes - FRAMING_BYTES;
  const jobs: DocumentFile[][] = [];
  let job: DocumentFile[] = [];
  let bytes = 0;
  for (const document of documents) {
    if (job.length > 0 && (bytes + document.size > budget || job.length >= limits.files)) {
      jobs.push(job);
      job = [];
      bytes = 0;
    }
    job.push(document);
    bytes += document.size;
  }
  if (job.length > 0) jobs.push(job);
  return jobs;
}
