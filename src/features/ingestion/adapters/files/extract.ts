import { HTML_MAX_DEPTH, HtmlNestingError } from '../html-to-markdown.ts';
import { firstHeading } from '../title.ts';
import { boundExceeded, inflatedBound, MAX_CHARACTERS, subjectOf, type ExtractionBounds } from './bounds.ts';
import { decodeText } from './detect-format.ts';
import { DocumentError } from './document-error.ts';
import { docxToMarkdown } from './docx-to-markdown.ts';
import { htmlPageToMarkdown } from './html-page.ts';
import { pdfInflatedBytes } from './inflated-size.ts';
import { pdfToMarkdown } from './pdf-to-markdown.ts';
import type { Extracted, ExtractedFormat } from '../adapter.ts';

async function extractText(format: ExtractedFormat, bytes: Buffer, bounds: ExtractionBounds): Promise<Extracted> {
  switch (format) {
    case 'pdf': {
      if ((await pdfInflatedBytes(bytes, bounds.inflatedBytes)) > bounds.inflatedBytes) {
        throw boundExceeded('pdf', inflatedBound(bounds), 'its compressed streams inflate to more');
      }
      const pdf = await pdfToMarkdown(bytes);
      return { content: pdf.markdown, contentType: 'markdown', title: pdf.title ?? firstHeading(pdf.markdown), pageStarts: pdf.pageStarts, pageCount: pdf.pageCount };
    }
    case 'docx': {
      const markdown = await docxToMarkdown(bytes, bounds);
      return { content: markdown, contentType: 'markdown', title: firstHeading(markdown) };
    }
    case 'html': {
      const html = decodeText(bytes);
      if (html.length > MAX_CHARACTERS) throw boundExceeded('html', `${MAX_CHARACTERS} characters of text per file`, `it has ${html.length}`);
      const page = htmlPageToMarkdown(html);
      return { content: page.markdown, contentType: 'markdown', title: page.title ?? firstHeading(page.markdown) };
    }
  }
}

/**
 * The text of a PDF, DOCX or HTML file, within `bounds` (all but time and memory, which the
 * thread running this is held to). Throws a DocumentError whose message is the file's `failed`
 * result: the bound it exceeds, or why it cannot be read.
 */
export async function extractDocument(format: ExtractedFormat, bytes: Buffer, bounds: ExtractionBounds): Promise<Extracted> {
  try {
    return await extractText(format, bytes, bounds);
  } catch (error) {
    if (error instanceof DocumentError) throw error;
    if (error instanceof HtmlNestingError) throw boundExceeded(format, `${HTML_MAX_DEPTH} levels of nested elements`, 'its elements nest deeper');
    // Parsers throw on whatever a damaged upload holds: that file fails, the job goes on.
    throw new DocumentError(`${subjectOf(format)} cannot be read: ${(error as Error).message}`);
  }
}
