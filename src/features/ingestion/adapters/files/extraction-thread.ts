/**
 * The extraction thread: takes one file at a time from its DocumentExtractor and answers with its
 * text or the message of its failure. Its heap is capped by the Worker's resourceLimits and its
 * time by the extractor, which terminates it; this side holds the other bounds (extract.ts).
 */
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import type { ExtractionBounds } from './bounds.ts';
import type { Extracted, ExtractedFormat } from '../adapter.ts';
import { extractDocument } from './extract.ts';

/** One file to extract; `bytes` is transferred. */
export type ExtractionRequest = { format: ExtractedFormat; bytes: Uint8Array; bounds: ExtractionBounds };
export type ExtractionAnswer = { type: 'ready' } | { type: 'done'; extracted: Extracted } | { type: 'failed'; error: string };

const port = parentPort!;
// On Linux the nice value is the thread's (setpriority(2)), as for the embedder's threads: the
// HTTP thread preempts extraction at once instead of waiting for its time slice.
if (process.platform === 'linux') setPriority(0, 10);

port.on('message', async (request: ExtractionRequest) => {
  try {
    const bytes = Buffer.from(request.bytes.buffer, request.bytes.byteOffset, request.bytes.byteLength);
    port.postMessage({ type: 'done', extracted: await extractDocument(request.format, bytes, request.bounds) } satisfies ExtractionAnswer);
  } catch (error) {
    port.postMessage({ type: 'failed', error: (error as Error).message } satisfies ExtractionAnswer);
  }
});
port.postMessage({ type: 'ready' } satisfies ExtractionAnswer);
