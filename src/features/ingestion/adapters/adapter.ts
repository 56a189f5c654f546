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
};

/** A record that passed the schema but could not be normalized (it becomes a per-record failure). */
export type RecordFailure = { id: string; error: string };

/** A schema problem: a JSON pointer into the adapter payload (e.g. `/records/17/content`) and what is wrong there. */
export type AdapterIssue = { path: string; message: string };

/** An input format: validates a whole payload up front, then yields its records normalized one by one. */
export interface Adapter {
  /** `generic-json` | `content-hub`: the `adapterType` clients submit. */
  readonly name: string;
  /** `json` | `content-hub-json`. */
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
  normalize(data: unknown): Iterable<NormalizedRecord | RecordFailure>;
}

/** Tells a per-record failure from a normalized record. */
export function isRecordFailure(item: NormalizedRecord | RecordFailure): item is RecordFailure {
  return 'error' in item;
}
