/**
 * Writes a JSON Lines file of generic-json records (Markdown help articles of about 2 KB) of the
 * given size, for measuring `lore ingest` on large uploads:
 *
 *   node --import tsx bench/make-jsonl.ts /tmp/records.jsonl 50     # about 50 MB
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { markdownDocument } from './corpus.ts';

const [file = '/tmp/lore-records.jsonl', megabytes = '50', recordSize = '2200'] = process.argv.slice(2);
const target = Number(megabytes) * 1_000_000;
const out = createWriteStream(file);
let written = 0;
let count = 0;
while (written < target) {
  const { title, content } = markdownDocument(count + 1, Number(recordSize));
  const line = `${JSON.stringify({ id: `article-${count}`, title, content, contentType: 'markdown', tags: ['help'] })}\n`;
  if (!out.write(line)) await once(out, 'drain');
  written += Buffer.byteLength(line);
  count += 1;
}
out.end();
await once(out, 'finish');
console.log(JSON.stringify({ file, records: count, bytes: written }));
