/** The content types lore stores; chunking and retrieval treat each differently. */
export type ContentType = 'text' | 'markdown' | 'code' | 'qa_pair';

/** One record as every adapter yields it. */
export type NormalizedRecord = {
  /** The record's own identifier (the job's `results[].sourceId`). */
  id: string;
  /** Never empty: generated from the content (or the id) when the input has none. */
  title: string;
  /** Text or Markdown; empty only on deletions. */
  content: string;
  contentType: ContentType;
  url: string | null;
  /** Deduplicated, trimmed, no empty strings, in input order. */
  tags: string[];
  metadata: Record<string, unknown>;
  /** True: delete the entry with this id instead of writing it. */
  deleted: boolean;
  /** Where each page of a paged document (a PDF) starts in `content`, page 1 first: chunks keep their page. */
  pageStarts?: number[];
};

/** A record that passed the schema but could not be normalized (it becomes a per-record failure). */
export type RecordFailure = { id: string; error: string };

/** A schema problem: a JSON pointer into the adapter payload (e.g. `/records/17/content`) and what is wrong there. */
export type AdapterIssue = { path: string; message: string };

/** The formats whose text the extraction thread takes out (Markdown and plain text are read as they are). */
export type ExtractedFormat = 'pdf' | 'docx' | 'html';

/** A document's text and what lore records of it. */
export type Extracted = { content: string; contentType: 'markdown'; title: string | undefined; pageStarts?: number[]; pageCount?: number };

/** A file part of a multipart submission, as the files adapter receives it. */
export type UploadedFile = { name: string; bytes: Buffer };

/** What `normalize` may need besides the payload. */
export type NormalizeInput = {
  /** The bytes of the job's uploaded file at this ordinal (adapters that take files). */
  readFile(ordinal: number): Promise<Buffer>;
  /** True for a record a resumed job has already processed: an adapter whose normalization is costly yields `null` for it. */
  isDone(ordinal: number): boolean;
  /**
   * The text of the document at this ordinal, taken out on the extraction thread within the
   * extraction bounds. Throws a DocumentError (its message the record's failure) for a document
   * that exceeds a bound or cannot be read. Records the ordinal while it runs (see `interrupted`).
   */
  extract(ordinal: number, format: ExtractedFormat, bytes: Buffer): Promise<Extracted>;
  /** True for a document whose extraction was under way when a previous attempt's process died: it is failed, not extracted again. */
  interrupted(ordinal: number): boolean;
};

type Normalized = NormalizedRecord | RecordFailure;

/** An input format: validates a whole payload up front, then yields its records normalized one by one. */
export interface Adapter {
  /** `generic-json` | `content-hub` | `files`: the `adapterType` clients submit. */
  readonly name: string;
  /** `json` | `content-hub-json` | `multipart`. */
  readonly format: string;
  /** Version of the payload format this adapter reads, e.g. `1.0.0`. */
  readonly version: string;
  /** JSON Schema (2020-12) of the payload, for the OpenAPI document. Validate with `validate()`, not with another compiler. */
  readonly schema: object;
  /** Every schema problem of the payload (at most 100), empty when valid. 10,000 records take well under 100 ms. */
  validate(data: unknown): AdapterIssue[];
  /** Number of records in a payload that passed validate(). */
  count(data: unknown): number;
  /** The normalized records of a valid payload, in input order, one per record. */
  normalize(data: unknown, input: NormalizeInput): Iterable<Normalized> | AsyncIterable<Normalized | null>;
  /**
   * The payload of only the records at `ordinals` (ascending) of a valid payload, in this
   * adapter's format: what retrying those records of a job submits. Absent where the payload does
   * not hold the records themselves (files: their bytes go when the job ends).
   */
  subset?(data: unknown, ordinals: number[]): unknown;
  /**
   * Only adapters that take uploaded files (multipart parts named `files`) instead of a JSON
   * payload: the payload stored with the job, built from the files and the optional `manifest`
   * part, with every problem of the manifest (paths under `/manifest`).
   */
  fromFiles?(files: UploadedFile[], manifest: unknown): Promise<{ data: unknown; issues: AdapterIssue[] }>;
}

/** Tells a per-record failure from a normalized record. */
export function isRecordFailure(item: NormalizedRecord | RecordFailure): item is RecordFailure {
  return 'error' in item;
}
