import mammoth from 'mammoth';
import { entityEncodedHtmlToMarkdown } from '../html-to-markdown.ts';
import { boundExceeded, inflatedBound, MAX_CHARACTERS, megabytes, type ExtractionBounds } from './bounds.ts';
import { DocumentError } from './document-error.ts';
import { zipExcess } from './inflated-size.ts';

/**
 * A Word document (DOCX) as Markdown: mammoth maps its styles to HTML (Heading 1-6 to h1-h6,
 * lists, tables), then the HTML takes the path content-hub's does. Images are dropped: mammoth
 * would inline them as base64 data URIs, of which only the alt text is kept anyway. Its ZIP
 * entries are held to the bound of inflated bytes before mammoth reads any (a zip bomb of 5.5 MB
 * cost mammoth 3 GB), and its HTML to MAX_CHARACTERS.
 */
export async function docxToMarkdown(bytes: Buffer, bounds: ExtractionBounds): Promise<string> {
  const excess = await zipExcess(bytes, bounds.inflatedBytes);
  if (excess?.lying) {
    throw boundExceeded('docx', 'its ZIP directory\'s sizes', `its entry ${excess.entry} inflates to more than the ${excess.declared} bytes declared`);
  }
  if (excess) {
    const detail = excess.declared > bounds.inflatedBytes ? `its entry ${excess.entry} inflates to ${megabytes(excess.declared)} MB` : `its entries inflate to more, counted up to ${excess.entry}`;
    throw boundExceeded('docx', inflatedBound(bounds), detail);
  }
  let html: string;
  try {
    ({ value: html } = await mammoth.convertToHtml({ buffer: bytes }, { convertImage: mammoth.images.imgElement(async () => ({ src: '' })) }));
  } catch (error) {
    throw new DocumentError(`The DOCX document is damaged and cannot be read: ${(error as Error).message}`);
  }
  if (html.length > MAX_CHARACTERS) throw boundExceeded('docx', `${MAX_CHARACTERS} characters of text per file`, `its HTML has ${html.length}`);
  return entityEncodedHtmlToMarkdown(html);
}
