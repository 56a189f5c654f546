import type { NormalizedRecord } from '../adapters/adapter.ts';
import type { Chunk } from './chunking/types.ts';

/** The text a chunk is embedded as: its title and headings give a short chunk its context. */
export function embeddingText(record: Pick<NormalizedRecord, 'title'>, chunk: Pick<Chunk, 'headingPath' | 'text'>): string {
  const headings = chunk.headingPath.length > 0 ? `${chunk.headingPath.join(' > ')}\n` : '';
  return `${record.title}\n${headings}${chunk.text}`;
}
