/**
 * Reads the records of an upload from files: JSON (an adapter payload, or a bare array of
 * records) or JSON Lines (one record per line, streamed, so a file of any size costs one line of
 * memory at a time).
 */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { createInterface } from 'node:readline';
import { contentHubEnvelope, genericJsonEnvelope, type PayloadEnvelope, type SourceRecord } from './job-batches.ts';

/** The adapters whose payloads the uploader can build from records. */
export const uploadAdapters = ['generic-json', 'content-hub'] as const;
export type UploadAdapter = (typeof uploadAdapters)[number];

/** A checked file of records: how many, how its jobs' payloads are wrapped, and the records themselves. */
export type RecordFile = {
  path: string;
  count: number;
  envelope: PayloadEnvelope;
  /** A record's location for messages: `file.jsonl:12` or `file.json#/records/3`. */
  describe(location: number): string;
  /** The records in file order; reads the file again. */
  records(): AsyncIterable<SourceRecord>;
};

/** A file that cannot be uploaded: not JSON, or not a shape the adapter takes. Names the file and line. */
export class RecordFileError extends Error {
  override name = 'RecordFileError';
}

const jsonLinesExtensions = new Set(['.jsonl', '.ndjson']);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function lines(path: string) {
  return createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
}

/** Checks every line of a JSON Lines file (each a JSON object) and counts them; blank lines are skipped. */
async function openJsonLines(path: string, adapter: UploadAdapter): Promise<RecordFile> {
  let count = 0;
  let lineNumber = 0;
  for await (const line of lines(path)) {
    lineNumber += 1;
    if (line.trim() === '') continue;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch (error) {
      throw new RecordFileError(`${path}:${lineNumber}: not valid JSON (${(error as Error).message})`);
    }
    if (!isObject(record)) throw new RecordFileError(`${path}:${lineNumber}: a record must be a JSON object`);
    count += 1;
  }
  return {
    path,
    count,
    envelope: adapter === 'content-hub' ? contentHubEnvelope({}) : genericJsonEnvelope,
    describe: (location) => `${path}:${location}`,
    async *records() {
      let location = 0;
      for await (const line of lines(path)) {
        location += 1;
        const json = line.trim();
        if (json !== '') yield { json, location };
      }
    },
  };
}

/** The records array of a JSON file, where its pointer is, and the content-hub summary that goes with it. */
function recordsOf(path: string, value: unknown, adapter: UploadAdapter): { records: unknown[]; pointer: string; summary: object } {
  if (adapter === 'generic-json') {
    if (isObject(value) && Array.isArray(value.records)) return { records: value.records, pointer: '/records', summary: {} };
    if (Array.isArray(value)) return { records: value, pointer: '', summary: {} };
    throw new RecordFileError(`${path}: a generic-json file holds {"records": [...]} or an array of records`);
  }
  if (Array.isArray(value) && value.length === 2 && Array.isArray(value[0]) && isObject(value[1])) {
    return { records: value[0], pointer: '/0', summary: value[1] };
  }
  if (Array.isArray(value) && value.every(isObject)) return { records: value, pointer: '', summary: {} };
  throw new RecordFileError(`${path}: a content-hub file holds an export [items, {timeTaken}] or an array of items`);
}

async function parseJsonFile(path: string, adapter: UploadAdapter) {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new RecordFileError(`${path}: not valid JSON (${(error as Error).message})`);
  }
  return recordsOf(path, value, adapter);
}

/** Checks a JSON file's shape and counts its records; `records()` parses it again, so only one file is held at a time. */
async function openJson(path: string, adapter: UploadAdapter): Promise<RecordFile> {
  const { records, pointer, summary } = await parseJsonFile(path, adapter);
  return {
    path,
    count: records.length,
    envelope: adapter === 'content-hub' ? contentHubEnvelope(summary) : genericJsonEnvelope,
    describe: (location) => `${path}#${pointer}/${location}`,
    async *records() {
      const { records: again } = await parseJsonFile(path, adapter);
      for (let location = 0; location < again.length; location += 1) yield { json: JSON.stringify(again[location]), location };
    },
  };
}

/** Opens a file of records for an adapter: JSON Lines by extension (`.jsonl`, `.ndjson`), JSON otherwise. */
export async function openRecordFile(path: string, adapter: UploadAdapter): Promise<RecordFile> {
  try {
    return jsonLinesExtensions.has(extname(path).toLowerCase()) ? await openJsonLines(path, adapter) : await openJson(path, adapter);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'EACCES') throw new RecordFileError(`${path}: cannot be read (${code})`);
    throw error;
  }
}
