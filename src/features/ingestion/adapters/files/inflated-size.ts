import { Readable, Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createInflate } from 'node:zlib';
import yauzl from 'yauzl';

/**
 * Bytes that `streams` (each a chain of zlib layers, the output of one the input of the next)
 * inflate to, every layer's output counted, stopping once the count passes `limit`. Counted, never
 * kept: a bomb costs the time to inflate `limit` bytes (zlib: about 0.3 s for 128 MB) and a few
 * 16 KB chunks of memory. A layer that is not valid zlib data counts what it gave until then.
 */
async function inflatedBytes(streams: Iterable<{ data: Uint8Array; layers: number }>, limit: number): Promise<number> {
  let total = 0;
  const count = () =>
    new Transform({
      transform(chunk: Buffer, _encoding, done) {
        total += chunk.length;
        done(total > limit ? new RangeError('past the limit') : null, chunk);
      },
    });
  for (const { data, layers } of streams) {
    const stages = Array.from({ length: layers }, () => [createInflate(), count()]).flat();
    await pipeline([Readable.from([data]), ...stages, new Writable({ write: (_chunk, _encoding, done) => done() })]).catch(() => undefined);
    if (total > limit) break;
  }
  return total;
}

const STREAM = Buffer.from('stream');
const END_STREAM = Buffer.from('endstream');
const OBJ = Buffer.from(' obj');

/**
 * The Flate-compressed streams of a PDF that text extraction inflates: every stream object but
 * images (pdf.js never decodes an image to read text, and a scan's images can inflate to hundreds
 * of MB honestly), with the number of FlateDecode filters its /Filter starts with. Found by the
 * `stream`/`endstream` keywords rather than by /Length, which may be an indirect object or lie.
 */
function* flateStreams(pdf: Buffer): Generator<{ data: Uint8Array; layers: number }> {
  for (let at = pdf.indexOf(STREAM); at !== -1; at = pdf.indexOf(STREAM, at + STREAM.length)) {
    if (at >= 3 && pdf.toString('latin1', at - 3, at) === 'end') continue;
    const objectStart = pdf.lastIndexOf(OBJ, at);
    if (objectStart === -1) continue;
    const dictionary = pdf.toString('latin1', objectStart, at);
    const filters = /\/Filter\s*(\[[^\]]*\]|\/\w+)/.exec(dictionary)?.[1]?.match(/\/\w+/g) ?? [];
    const other = filters.findIndex((filter) => filter !== '/FlateDecode');
    const layers = other === -1 ? filters.length : other;
    if (layers === 0 || /\/Subtype\s*\/Image\b/.test(dictionary)) continue;
    let start = at + STREAM.length;
    if (pdf[start] === 0x0d) start += 1;
    if (pdf[start] === 0x0a) start += 1;
    const end = pdf.indexOf(END_STREAM, start);
    if (end === -1) return;
    yield { data: pdf.subarray(start, end), layers };
    at = end;
  }
}

/** Bytes a PDF's compressed streams (images aside) inflate to, counted until they pass `limit`. */
export function pdfInflatedBytes(pdf: Buffer, limit: number): Promise<number> {
  return inflatedBytes(flateStreams(pdf), limit);
}

/** Why a ZIP archive exceeds `limit` bytes inflated, or undefined when it does not (or is not a ZIP lore can open: its reader says why). */
export type ZipExcess = { entry: string; declared: number; lying: boolean };

/**
 * The first entry of a ZIP archive that takes the inflated bytes of all its entries past `limit`,
 * checked before anything reads it: by the size the central directory declares, then by the bytes
 * the entry really inflates to, which yauzl holds to the declared size (`validateEntrySizes`: an
 * entry that inflates past it is a lying header, a zip bomb that hides its size).
 */
export async function zipExcess(archive: Buffer, limit: number): Promise<ZipExcess | undefined> {
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.fromBufferPromise(archive, { validateEntrySizes: true });
  } catch {
    return undefined;
  }
  try {
    let total = 0;
    for await (const entry of zip.eachEntry()) {
      total += entry.uncompressedSize;
      if (total > limit) return { entry: entry.fileName, declared: entry.uncompressedSize, lying: false };
      const stream = await zip.openReadStreamPromise(entry);
      try {
        for await (const chunk of stream) void chunk;
      } catch (error) {
        if (/too many bytes/.test((error as Error).message)) return { entry: entry.fileName, declared: entry.uncompressedSize, lying: true };
        return undefined;
      }
    }
    return undefined;
  } catch {
    return undefined;
  } finally {
    zip.close();
  }
}
