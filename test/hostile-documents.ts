/**
 * Hostile documents, generated at run time for the tests of extraction's bounds: a PDF whose
 * content stream is a Flate bomb, a DOCX whose entry is a zip bomb (with a truthful or a lying
 * declared size), and HTML nested deeper than any browser nests it.
 */
import { crc32, deflateRawSync, deflateSync } from 'node:zlib';

/** A PDF of the given objects (1 is the catalog), its cross-reference table computed. Streams are Buffers. */
function pdfOf(objects: Array<string | { dictionary: string; stream: Buffer }>): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n%\u00e2\u00e3\u00cf\u00d3\n', 'latin1')];
  let length = parts[0]!.length;
  const push = (part: Buffer) => {
    parts.push(part);
    length += part.length;
  };
  const offsets = objects.map((object, index) => {
    const offset = length;
    if (typeof object === 'string') push(Buffer.from(`${index + 1} 0 obj\n${object}\nendobj\n`, 'latin1'));
    else {
      push(Buffer.from(`${index + 1} 0 obj\n<< ${object.dictionary} /Length ${object.stream.length} >>\nstream\n`, 'latin1'));
      push(object.stream);
      push(Buffer.from('\nendstream\nendobj\n', 'latin1'));
    }
    return offset;
  });
  const xref = length;
  push(
    Buffer.from(
      `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')}` +
        `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`,
      'latin1',
    ),
  );
  return Buffer.concat(parts);
}

const catalog = '<< /Type /Catalog /Pages 2 0 R >>';
const helvetica = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';

/** A PDF of `pages` pages that all show one content stream, `text` Flate-compressed; the font is object 3. */
function pdfShowing(text: Buffer, pages: number): Buffer {
  const kids = Array.from({ length: pages }, (_, index) => `${index + 5} 0 R`).join(' ');
  const page = '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>';
  return pdfOf([
    catalog,
    `<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`,
    helvetica,
    { dictionary: '/Filter /FlateDecode', stream: deflateSync(text, { level: 9 }) },
    ...Array.from({ length: pages }, () => page),
  ]);
}

/**
 * A one-page PDF whose content stream is `operator` repeated until it inflates to about
 * `inflatedBytes`, Flate-compressed (about 400:1 for this repetition): 300 MB take 1.4 s to build.
 * pdf.js takes about 0.4 s per inflated MB of it on this machine.
 */
export function flateBombPdf(inflatedBytes: number, operator = '(Lorem ipsum dolor sit amet) Tj\n'): Buffer {
  const block = Buffer.from(operator.repeat(Math.ceil((1 << 20) / operator.length)), 'latin1');
  const blocks = Math.max(1, Math.round(inflatedBytes / block.length));
  return pdfShowing(Buffer.concat([Buffer.from('BT /F1 12 Tf 72 720 Td\n'), ...Array.from({ length: blocks }, () => block), Buffer.from('ET\n')]), 1);
}

/** A PDF of `pages` pages, each showing one short line. */
export function pagesPdf(pages: number): Buffer {
  return pdfShowing(Buffer.from('BT /F1 12 Tf 72 720 Td (A page.) Tj ET\n'), pages);
}

/** A PDF of `pages` pages, each showing the same 1 pt text: 790 lines of 1,200 characters, about 950,000 characters a page. */
export function wordyPdf(pages: number): Buffer {
  const line = `(${'word '.repeat(240)}) Tj 0 -1 Td\n`;
  return pdfShowing(Buffer.from(`BT /F1 1 Tf 1 791 Td\n${line.repeat(790)}ET\n`, 'latin1'), pages);
}

type ZipEntry = { name: string; data: Buffer; declaredSize?: number };

/** A little-endian record of `length` bytes; each field is [offset, width in bytes, value]. */
function record(length: number, fields: Array<[number, 2 | 4, number]>): Buffer {
  const buffer = Buffer.alloc(length);
  for (const [offset, width, value] of fields) {
    if (width === 2) buffer.writeUInt16LE(value, offset);
    else buffer.writeUInt32LE(value, offset);
  }
  return buffer;
}

/** A ZIP archive (deflated entries), each entry's uncompressed size as its headers declare it: its own, or `declaredSize`. */
export function zipArchive(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const compressed = deflateRawSync(entry.data, { level: 9 });
    const crc = crc32(entry.data);
    // The CRC-32, both sizes and the name's length, at `at` in the local header and in the central one.
    const sizes = (at: number): Array<[number, 2 | 4, number]> => [
      [at, 4, crc],
      [at + 4, 4, compressed.length],
      [at + 8, 4, entry.declaredSize ?? entry.data.length],
      [at + 12, 2, name.length],
    ];
    locals.push(record(30, [[0, 4, 0x04034b50], [4, 2, 20], [8, 2, 8], ...sizes(14)]), name, compressed);
    central.push(record(46, [[0, 4, 0x02014b50], [4, 2, 20], [6, 2, 20], [10, 2, 8], ...sizes(16), [42, 4, offset]]), name);
    offset += 30 + name.length + compressed.length;
  }
  const directory = Buffer.concat(central);
  const end = record(22, [[0, 4, 0x06054b50], [8, 2, entries.length], [10, 2, entries.length], [12, 4, directory.length], [16, 4, offset]]);
  return Buffer.concat([...locals, directory, end]);
}

const contentTypes = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`;
const rootRelationships = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`;

/**
 * A DOCX whose word/document.xml holds `paragraphs` paragraphs of the same sentence: a zip bomb
 * when they are many (XML this repetitive deflates about 500:1). `declaredSize` makes its headers
 * lie about the inflated size of word/document.xml.
 */
export function docxBomb(paragraphs: number, options: { declaredSize?: number } = {}): { docx: Buffer; xmlBytes: number } {
  const paragraph = '<w:p><w:r><w:t>The ferry to the Lofoten islands leaves every Tuesday at nine.</w:t></w:r></w:p>';
  const body = Buffer.concat([
    Buffer.from('<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>'),
    // Buffer.fill repeats the pattern 10 times faster than String.repeat and a copy.
    Buffer.alloc(paragraph.length * paragraphs, paragraph),
    Buffer.from('</w:body></w:document>'),
  ]);
  const docx = zipArchive([
    { name: '[Content_Types].xml', data: Buffer.from(contentTypes) },
    { name: '_rels/.rels', data: Buffer.from(rootRelationships) },
    { name: 'word/document.xml', data: body, ...(options.declaredSize === undefined ? {} : { declaredSize: options.declaredSize }) },
  ]);
  return { docx, xmlBytes: body.length };
}

/** An HTML page whose body nests `depth` div elements, a sentence in the innermost. */
export function nestedHtml(depth: number): string {
  return `<!DOCTYPE html><html><head><title>Nested</title></head><body>${'<div>'.repeat(depth)}Deep inside.${'</div>'.repeat(depth)}</body></html>`;
}
