import mammoth from 'mammoth';
import { entityEncodedHtmlToMarkdown } from '../html-to-markdown.ts';
import { DocumentError } from './document-error.ts';

/**
 * A Word document (DOCX) as Markdown: mammoth maps its styles to HTML (Heading 1-6 to h1-h6,
 * lists, tables), then the HTML takes the path content-hub's does. Images are dropped: mammoth
 * would inline them as base64 data URIs, of which only the alt text is kept anyway.
 */
export async function docxToMarkdown(bytes: Buffer): Promise<string> {
  let html: string;
  try {
    ({ value: html } = await mammoth.convertToHtml({ buffer: bytes }, { convertImage: mammoth.images.imgElement(async () => ({ src: '' })) }));
  } catch (error) {
    throw new DocumentError(`The DOCX document is damaged and cannot be read: ${(error as Error).message}`);
  }
  return entityEncodedHtmlToMarkdown(html);
}
