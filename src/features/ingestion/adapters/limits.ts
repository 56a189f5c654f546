import type { NormalizedRecord } from './adapter.ts';

/**
 * Limits every adapter enforces, in UTF-16 code units (JavaScript string length). They bound what
 * one record can cost downstream: 1,000,000 characters of content is about 1,250 chunks of 800
 * characters, a minute of builtin embedding; larger documents should be split by the source.
 */
export const limits = {
  /** Characters of a record id (the `sourceId` of the job's results). */
  idLength: 512,
  /** Characters of a title given by the input. */
  titleLength: 1000,
  /** Characters of a record's content after normalization. */
  contentLength: 1_000_000,
  /** Tags of one record, and characters of one tag. */
  tags: 100,
  tagLength: 200,
  /** Characters of a URL. */
  urlLength: 2048,
  /** Records of one payload: `data.results` keeps one entry per record, so a job's document stays a few MB. */
  records: 50_000,
} as const;

/** Trims tags, drops empty ones and repeats (exact match), keeping the first occurrence's position. */
export function normalizeTags(values: Iterable<string>): string[] {
  const tags = new Set<string>();
  for (const value of values) {
    const tag = value.trim();
    if (tag !== '') tags.add(tag);
  }
  return [...tags];
}

/** `\r\n` and lone `\r` become `\n`, so the same text hashes the same whatever system exported it. */
export function normalizeLineEndings(text: string): string {
  return text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
}

/** Whether a string is an absolute http or https URL. */
export function isHttpUrl(value: string): boolean {
  if (value.length > limits.urlLength) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * Why a record derived from its input (not checked by a schema, e.g. Markdown converted from
 * HTML) cannot be stored, or undefined when it can.
 */
export function limitViolation(record: NormalizedRecord): string | undefined {
  if (record.deleted) return undefined;
  if (record.content.trim() === '') return 'content is empty';
  if (record.content.length > limits.contentLength) {
    return `content has ${record.content.length} characters, more than the limit of ${limits.contentLength}`;
  }
  if (record.tags.length > limits.tags) return `has ${record.tags.length} tags, more than the limit of ${limits.tags}`;
  const longTag = record.tags.find((tag) => tag.length > limits.tagLength);
  if (longTag !== undefined) return `tag "${longTag.slice(0, 40)}…" is longer than ${limits.tagLength} characters`;
  return undefined;
}
