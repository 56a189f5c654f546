/** Documents generated for the files adapter's tests and benchmark: PDFs (pdf-lib), DOCX (docx), and broken ones. */
import { AlignmentType, Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';

/** One page of a generated PDF: an optional heading (18 pt), sections with a subheading (14 pt) and paragraphs (11 pt). */
export type PdfPage = { heading?: string; sections: { subheading?: string; paragraphs: string[] }[] };

const PAGE = { width: 595, height: 842, margin: 56 };

/** A PDF with real text: headings larger than the body, paragraphs wrapped over several lines. */
export async function pdfDocument(pages: PdfPage[], title?: string): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  if (title) pdf.setTitle(title);
  const body = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  const maxWidth = PAGE.width - 2 * PAGE.margin;
  for (const spec of pages) {
    const page = pdf.addPage([PAGE.width, PAGE.height]);
    let y = PAGE.height - PAGE.margin;
    const text = (value: string, size: number, font = body) => {
      const lines = value.split(/(?<=\s)/).reduce<string[]>((wrapped, word) => {
        const last = wrapped.at(-1);
        if (last !== undefined && font.widthOfTextAtSize(last + word, size) <= maxWidth) wrapped[wrapped.length - 1] = last + word;
        else wrapped.push(word);
        return wrapped;
      }, []);
      for (const line of lines) {
        page.drawText(line.trimEnd(), { x: PAGE.margin, y, size, font });
        y -= size * 1.25;
      }
      y -= size * 0.8;
    };
    if (spec.heading) text(spec.heading, 18, bold);
    for (const section of spec.sections) {
      if (section.subheading) text(section.subheading, 14, bold);
      for (const paragraph of section.paragraphs) text(paragraph, 11);
    }
  }
  return Buffer.from(await pdf.save());
}

/** A 1×1 PNG. */
export const pngBytes = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/**
 * An XHTML page as AsciiDoc writes git's manual pages (Debian's git-doc): an XML prolog, the
 * XHTML 1.1 doctype, the XHTML namespace, a style sheet in the head, then the page.
 */
export function xhtmlPage(spec: { title: string; paragraphs: string[] }): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN"
    "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en">
<head>
<meta http-equiv="Content-Type" content="application/xhtml+xml; charset=UTF-8" />
<meta name="generator" content="AsciiDoc 10.2.0" />
<title>${spec.title}</title>
<style type="text/css">
body { font-family: Georgia,serif; }
h1, h2, h3 { border-bottom: 2px solid silver; }
</style>
</head>
<body class="manpage">
<div id="header">
<h1>${spec.title} Manual Page</h1>
</div>
<div id="content">
<div class="sect1">
<h2 id="_description">DESCRIPTION</h2>
<div class="sectionbody">
${spec.paragraphs.map((paragraph) => `<div class="paragraph"><p>${paragraph}</p></div>`).join('\n')}
</div>
</div>
</div>
<div id="footnotes"><hr /></div>
<div id="footer">
<div id="footer-text">Last updated 2024-11-05 16:21:07 UTC</div>
</div>
</body>
</html>
`;
}

/** What a scanned document is to a text extractor: pages holding an image and no text. */
export async function scannedPdf(): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const image = await pdf.embedPng(pngBytes);
  for (let index = 0; index < 2; index += 1) pdf.addPage([200, 200]).drawImage(image, { x: 10, y: 10, width: 180, height: 180 });
  return Buffer.from(await pdf.save());
}

/** A PDF whose file trailer has an /Encrypt dictionary (standard handler, RC4) that the empty password does not open. */
export function encryptedPdf(): Buffer {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>',
    `<< /Filter /Standard /V 1 /R 2 /O <${'ab'.repeat(32)}> /U <${'cd'.repeat(32)}> /P -4 >>`,
  ];
  let out = '%PDF-1.4\n';
  const offsets = objects.map((object, index) => {
    const offset = out.length;
    out += `${index + 1} 0 obj\n${object}\nendobj\n`;
    return offset;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')}`;
  const id = '<0123456789abcdef0123456789abcdef>';
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Encrypt 4 0 R /ID [${id} ${id}] >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** A Word document with headings, paragraphs, a table and a bulleted list. */
export async function docxDocument(spec: {
  heading: string;
  paragraphs: string[];
  subheading: string;
  table: string[][];
  items: string[];
  /** Extra sections (a heading and paragraphs each), for documents of realistic length. */
  sections?: { heading: string; paragraphs: string[] }[];
}): Promise<Buffer> {
  const cell = (text: string) => new TableCell({ children: [new Paragraph(text)] });
  const document = new Document({
    sections: [
      {
        children: [
          new Paragraph({ text: spec.heading, heading: HeadingLevel.HEADING_1 }),
          ...spec.paragraphs.map((text) => new Paragraph({ text, alignment: AlignmentType.LEFT })),
          new Paragraph({ text: spec.subheading, heading: HeadingLevel.HEADING_2 }),
          new Table({ rows: spec.table.map((row) => new TableRow({ children: row.map(cell) })) }),
          ...spec.items.map((text) => new Paragraph({ text, bullet: { level: 0 } })),
          ...(spec.sections ?? []).flatMap((section) => [
            new Paragraph({ text: section.heading, heading: HeadingLevel.HEADING_2 }),
            ...section.paragraphs.map((text) => new Paragraph(text)),
          ]),
        ],
      },
    ],
  });
  return Packer.toBuffer(document);
}
