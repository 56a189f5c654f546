import { fileTypeFromBuffer } from 'file-type';
import sax, { type QualifiedTag } from 'sax';

/** The document formats the files adapter extracts text from. */
export type FileFormat = 'pdf' | 'docx' | 'html' | 'markdown' | 'text';

/** What a file's bytes are: a format lore reads, or null with the media type found (if any). */
export type Detected = { format: FileFormat | null; mediaType: string | null };

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
// Binary formats are told by their magic bytes; file-type reads at most the first few KB.
const binaryFormats: Record<string, FileFormat> = { 'application/pdf': 'pdf', [DOCX]: 'docx' };
// A text file has no NUL byte: UTF-16 and binary formats file-type does not know all have some
// within their first bytes. 8 KB is what `file` and git look at for the same question.
const TEXT_PROBE_BYTES = 8192;
const markdownExtensions = /\.(md|markdown|mdown|mkd)$/i;
const htmlExtensions = /\.(html?|xhtml)$/i;
const textExtensions = /\.(txt|text)$/i;
// An HTML document announces itself in its first tag; a fragment saved as .html at least has a
// block element. Markdown may hold inline HTML too, so without the extension only a document counts.
const htmlDocument = /^\s*(?:<\?xml[^>]*>\s*)?(?:<!--[\s\S]*?-->\s*)*<(?:!doctype\s+html|html[\s>])/i;
const htmlFragment = /<(?:p|div|h[1-6]|body|article|section|table|ul|ol)[\s>]/i;
// Markdown syntax that plain text rarely has at the start of a line: ATX headings, fences,
// list items, block quotes, tables, or links anywhere.
const markdownSyntax = /^(?:#{1,6}\s+\S|```|~~~|[-*+]\s+\S|\d+[.)]\s+\S|>\s|\|.*\|\s*$)|\[[^\]\n]+\]\([^)\s]+\)/m;

/**
 * The format of an uploaded file, by its content: PDF and DOCX by their magic bytes (a ZIP named
 * `.docx` is read as DOCX, so that a damaged one fails as a corrupt document rather than as an
 * unknown type), other binaries are unsupported; XML is HTML when its root element is XHTML's
 * `html`, unsupported otherwise; text is HTML, Markdown or plain text, the file name's extension
 * deciding only between those three.
 */
export async function detectFormat(name: string, bytes: Buffer): Promise<Detected> {
  const type = await fileTypeFromBuffer(bytes);
  // file-type answers application/xml for any `<?xml ` prolog, and AsciiDoc, DocBook and other
  // generators start XHTML pages with one: 205 of the 206 pages of Debian's git-doc.
  if (type?.mime === 'application/xml') {
    const xhtml = isXhtml(decodeText(bytes.subarray(0, TEXT_PROBE_BYTES)));
    return xhtml ? { format: 'html', mediaType: 'application/xhtml+xml' } : { format: null, mediaType: type.mime };
  }
  if (type) {
    const format = binaryFormats[type.mime] ?? (type.mime === 'application/zip' && /\.docx$/i.test(name) ? 'docx' : null);
    return { format, mediaType: format === 'docx' ? DOCX : type.mime };
  }
  if (bytes.length === 0 || bytes.subarray(0, TEXT_PROBE_BYTES).includes(0)) return { format: null, mediaType: null };
  const head = decodeText(bytes.subarray(0, TEXT_PROBE_BYTES));
  if (htmlDocument.test(head) || (htmlExtensions.test(name) && htmlFragment.test(head))) return { format: 'html', mediaType: 'text/html' };
  if (markdownExtensions.test(name)) return { format: 'markdown', mediaType: 'text/markdown' };
  if (textExtensions.test(name)) return { format: 'text', mediaType: 'text/plain' };
  return markdownSyntax.test(head) ? { format: 'markdown', mediaType: 'text/markdown' } : { format: 'text', mediaType: 'text/plain' };
}

const XHTML_NAMESPACE = 'http://www.w3.org/1999/xhtml';
// Thrown out of the parser's callbacks: the root element, or an error before it, ends the parse.
const endOfProlog = Symbol('end of prolog');

/** The root element of an XML text, after its prolog, comments, processing instructions and doctype; undefined if the text is not well-formed up to it. */
function xmlRootElement(text: string): QualifiedTag | undefined {
  const parser = sax.parser(true, { xmlns: true });
  let root: QualifiedTag | undefined;
  parser.onopentag = (tag) => {
    root = tag as QualifiedTag;
    throw endOfProlog;
  };
  parser.onerror = () => {
    throw endOfProlog;
  };
  try {
    parser.write(text);
  } catch (error) {
    if (error !== endOfProlog) throw error;
  }
  return root;
}

/** Whether an XML text is an XHTML page: its root an `html` element in the XHTML namespace or in none. What follows the root's start tag may be any HTML. */
function isXhtml(text: string): boolean {
  const root = xmlRootElement(text);
  return root?.local === 'html' && (root.uri === '' || root.uri === XHTML_NAMESPACE);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const windows1252 = new TextDecoder('windows-1252');

/** UTF-8 (a BOM dropped), or Windows-1252 when the bytes are not UTF-8: what older editors on Windows save. */
export function decodeText(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    return windows1252.decode(bytes);
  }
}
