import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { xhtmlPage } from '../../../../../test/document-fixtures.ts';
import { detectFormat, type Detected } from './detect-format.ts';

const html: Detected = { format: 'html', mediaType: 'text/html' };
const xhtml: Detected = { format: 'html', mediaType: 'application/xhtml+xml' };
const xml: Detected = { format: null, mediaType: 'application/xml' };
const prolog = '<?xml version="1.0" encoding="UTF-8"?>\n';
const body = '<head><title>Page</title></head><body><p>Text.</p></body></html>';

describe('detectFormat: XML', () => {
  const cases: Array<{ name: string; file: string; text: string | Buffer; expected: Detected }> = [
    { name: 'an AsciiDoc manual page (prolog, XHTML 1.1 doctype, XHTML namespace)', file: 'git-tag.html', text: xhtmlPage({ title: 'git-tag(1)', paragraphs: ['Tags.'] }), expected: xhtml },
    {
      name: 'a DocBook page (standalone prolog, XHTML 1.0 doctype on one line)',
      file: 'ch01.html',
      text: `<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd"><html xmlns="http://www.w3.org/1999/xhtml">${body}`,
      expected: xhtml,
    },
    { name: 'an html root without the namespace and without a doctype', file: 'page.xml', text: `${prolog}<html>${body}`, expected: xhtml },
    {
      name: 'comments, processing instructions and a doctype with an internal subset holding ">" before the root',
      file: 'page',
      text: `${prolog}<!-- generated -->\n<?xml-stylesheet href="style.css" type="text/css"?>\n<!DOCTYPE html [\n  <!ENTITY product "lore">\n  <!ENTITY arrow "a -> b">\n]>\n<!-- the page -->\n<html xmlns="http://www.w3.org/1999/xhtml">${body}`,
      expected: xhtml,
    },
    { name: 'a prefixed root bound to the XHTML namespace', file: 'page.xhtml', text: `${prolog}<h:html xmlns:h="http://www.w3.org/1999/xhtml"><h:body><h:p>Text.</h:p></h:body></h:html>`, expected: xhtml },
    { name: 'a UTF-8 byte order mark before the prolog', file: 'page.html', text: `\uFEFF${prolog}<html xmlns="http://www.w3.org/1999/xhtml">${body}`, expected: xhtml },
    { name: 'the rest of the page not well-formed XML (an HTML entity)', file: 'page.html', text: `${prolog}<html><body><p>A&nbsp;B<br></p></body></html>`, expected: xhtml },
    { name: 'an RSS feed', file: 'feed.xml', text: `${prolog}<rss version="2.0"><channel><title>News</title></channel></rss>`, expected: xml },
    { name: 'DocBook source (a book root)', file: 'book.xml', text: `${prolog}<!DOCTYPE book PUBLIC "-//OASIS//DTD DocBook XML V4.5//EN" "docbookx.dtd"><book><title>Guide</title></book>`, expected: xml },
    { name: 'an html root in another namespace', file: 'page.html', text: `${prolog}<html xmlns="urn:example:not-xhtml">${body}`, expected: xml },
    { name: 'an html root whose prefix is bound to another namespace', file: 'page.html', text: `${prolog}<x:html xmlns:x="urn:example:other"><x:body/></x:html>`, expected: xml },
    { name: 'an unbound prefix', file: 'page.html', text: `${prolog}<x:html><x:body/></x:html>`, expected: xml },
    { name: 'text before the root element', file: 'page.html', text: `${prolog}Hello <html>${body}`, expected: xml },
    { name: 'a root past the first 8 KB (a long comment before it)', file: 'page.html', text: `${prolog}<!--${' '.repeat(9000)}-->\n<html>${body}`, expected: xml },
    { name: 'UTF-16: lore reads UTF-8 and Windows-1252 text', file: 'page.html', text: Buffer.from(`\uFEFF${prolog}<html>${body}`, 'utf16le'), expected: xml },
    // The text branch's own pattern, for a prolog that file-type does not know (a tab after "xml").
    { name: 'a prolog that file-type does not take for XML', file: 'page', text: `<?xml\tversion="1.0"?>\n<html>${body}`, expected: html },
  ];
  for (const { name, file, text, expected } of cases) {
    test(name, async () => {
      assert.deepEqual(await detectFormat(file, Buffer.isBuffer(text) ? text : Buffer.from(text)), expected);
    });
  }
});
