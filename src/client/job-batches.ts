/**
 * Splits a stream of records into job payloads the way the spec advises: at most a few hundred
 * records per job and under 1 MB of JSON, so that each job travels as a plain JSON body and
 * finishes soon enough for its progress to be worth polling.
 */
import { MULTIPART_FROM_BYTES } from './lore-client.ts';

/** A record as read from a file: its JSON text, and where it was (a line number, or an index in the file's array). */
export type SourceRecord = { json: string; location: number };

/** The records of one job, in input order, with their locations and the bytes of their comma-joined JSON. */
export type Batch = { records: string[]; locations: number[]; bytes: number };

export type BatchLimits = {
  /** Records per job. */
  maxRecords: number;
  /** Bytes of the records' comma-joined JSON; a single record larger than this still gets a job of its own. */
  maxBytes: number;
};

/** How an adapter's payload wraps its records: the JSON before and after them, and the pointer of their array. */
export type PayloadEnvelope = { prefix: string; suffix: string; recordsPointer: string };

/** generic-json: `{records: [...]}`. */
export const genericJsonEnvelope: PayloadEnvelope = { prefix: '{"records":[', suffix: ']}', recordsPointer: '/records' };

/** content-hub: `[items, summary]`, each job carrying the export's summary (e.g. `{timeTaken}`). */
export function contentHubEnvelope(summary: object): PayloadEnvelope {
  return { prefix: '[[', suffix: `],${JSON.stringify(summary)}]`, recordsPointer: '/0' };
}

// Room for the submission's other fields around the payload: `{"adapterType":..,"knowledgeBaseId":..,"data":}` is about 90 bytes.
const submissionFieldsBytes = 256;

/** Limits under which a batch's payload, inside its submission, stays a JSON body below the multipart threshold. */
export function batchLimits(envelope: PayloadEnvelope, maxRecords: number): BatchLimits {
  const envelopeBytes = Buffer.byteLength(envelope.prefix) + Buffer.byteLength(envelope.suffix);
  return { maxRecords, maxBytes: MULTIPART_FROM_BYTES - submissionFieldsBytes - envelopeBytes };
}

/** Groups records into batches of at most `maxRecords` records and `maxBytes` bytes, in input order; holds one batch at a time. */
export async function* splitIntoBatches(records: AsyncIterable<SourceRecord> | Iterable<SourceRecord>, limits: BatchLimits): AsyncGenerator<Batch> {
  let batch: Batch = { records: [], locations: [], bytes: 0 };
  for await (const record of records) {
    const bytes = Buffer.byteLength(record.json);
    const full = batch.records.length >= limits.maxRecords || batch.bytes + 1 + bytes > limits.maxBytes;
    if (batch.records.length > 0 && full) {
      yield batch;
      batch = { records: [], locations: [], bytes: 0 };
    }
    batch.bytes += (batch.records.length > 0 ? 1 : 0) + bytes;
    batch.records.push(record.json);
    batch.locations.push(record.location);
  }
  if (batch.records.length > 0) yield batch;
}

/** The adapter payload of a batch, as JSON text. */
export function payloadText(batch: Batch, envelope: PayloadEnvelope): string {
  return `${envelope.prefix}${batch.records.join(',')}${envelope.suffix}`;
}

/** The index in its batch of the record a payload's JSON pointer (e.g. `/records/17/content`) points into, if any. */
export function recordIndexOf(pointer: string, envelope: PayloadEnvelope): number | undefined {
  if (!pointer.startsWith(`${envelope.recordsPointer}/`)) return undefined;
  const index = Number(pointer.slice(envelope.recordsPointer.length + 1).split('/', 1)[0]);
  return Number.isInteger(index) ? index : undefined;
}
