import { createHash } from 'node:crypto';
import type { NormalizedRecord } from '../adapters/adapter.ts';

/** JSON with object keys sorted at every level, so that key order never changes a hash. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * SHA-256 over everything that makes a record's stored version: title, content, contentType,
 * url, tags (sorted: their order means nothing) and metadata (keys sorted). Line endings and
 * trailing whitespace are normalized so that a re-export from another system is not an update.
 */
export function contentHash(record: NormalizedRecord): string {
  const normalizeText = (text: string) => text.replace(/\r\n?/g, '\n').replace(/[ \t]+$/gm, '').trim();
  return sha256(
    canonicalJson({
      title: normalizeText(record.title),
      content: normalizeText(record.content),
      contentType: record.contentType,
      url: record.url,
      tags: [...record.tags].sort(),
      metadata: record.metadata,
    }),
  );
}
