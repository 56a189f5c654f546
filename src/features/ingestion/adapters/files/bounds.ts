import type { Config } from '../../../../core/config.ts';
import { limits } from '../limits.ts';
import type { FileFormat } from './detect-format.ts';
import { DocumentError } from './document-error.ts';

/**
 * What extracting one file may cost, as configured (EXTRACTION_TIMEOUT_MS, EXTRACTION_MEMORY_LIMIT_MB,
 * EXTRACTION_INFLATED_LIMIT_MB: an operator's to raise for a large machine or lower for a small
 * one). The bounds below follow from what lore keeps of a document.
 */
export type ExtractionBounds = Config['extraction'];

/**
 * Pages of a PDF: pdf.js reads a page of text in 3-5 ms, so 5,000 pages are 15-25 s, about the
 * time limit; a longer document should be split like one over the content limit.
 */
export const MAX_PAGES = 5000;

/**
 * Characters a file may yield before it becomes Markdown (a PDF's text, a DOCX's or an HTML
 * file's HTML): four times a record's content limit, as content-hub admits HTML, since markup and
 * whitespace shrink away. Past it the record could not be stored anyway.
 */
export const MAX_CHARACTERS = 4 * limits.contentLength;

const subjects: Record<FileFormat, string> = {
  pdf: 'The PDF',
  docx: 'The DOCX document',
  html: 'The HTML file',
  markdown: 'The Markdown file',
  text: 'The text file',
};

/** How a file's failure names it: "The PDF", "The DOCX document", "The HTML file". */
export function subjectOf(format: FileFormat): string {
  return subjects[format];
}

/** Megabytes, for messages: 128, or 206.3 when not whole. */
export function megabytes(bytes: number): string {
  const value = bytes / (1024 * 1024);
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

/** The failure of a file that exceeds a bound: `bound` names it, `detail` says how the file exceeds it. */
export function boundExceeded(format: FileFormat, bound: string, detail: string): DocumentError {
  return new DocumentError(`${subjectOf(format)} exceeds the extraction bound of ${bound}: ${detail}.`);
}

/** The bound of inflated bytes, as failures name it. */
export function inflatedBound(bounds: ExtractionBounds): string {
  return `${megabytes(bounds.inflatedBytes)} MB of inflated data per file (EXTRACTION_INFLATED_LIMIT_MB)`;
}
