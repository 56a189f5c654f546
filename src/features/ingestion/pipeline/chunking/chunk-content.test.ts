import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { ContentType } from '../../adapters/adapter.ts';
import { chunkContent, DEFAULT_CHUNK_OPTIONS } from './chunk-content.ts';
import type { Chunk, ChunkOptions } from './types.ts';

const fixture = (name: string): string => readFileSync(new URL(`fixtures/${name}`, import.meta.url), 'utf8');
const widgetGuide = fixture('widget-guide.md');
const billingFaq = fixture('billing-faq.md');

const sourceCode = `import { createHash } from 'node:crypto';

/** SHA-256 over the normalized fields of a record, hex encoded. */
export function contentHash(record) {
  const hash = createHash('sha256');
  for (const field of [record.title, record.content, record.contentType, record.url ?? '']) {
    hash.update(field);
    hash.update('\\u0000');
  }
  return hash.digest('hex');
}

export const EMPTY_HASH = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

export function sameContent(left, right) {
  return contentHash(left) === contentHash(right);
}
`;

const unicodeGuide = `# Emoji und Umlaute 👋

Grüße aus Köln! Die Suche findet „Äpfel“ und café (mit kombinierendem Akzent: cafe\u0301). Familien-Emoji 👨‍👩‍👧‍👦 zählen als ein Zeichen, Hauttöne 👍🏽 ebenso.

## 日本語のセクション

これは日本語の段落です。検索エンジンは文ごとに分割します。長い文章でも、句点で区切られていれば正しく分割されます。絵文字🎌も含まれています。

## 中文部分

知识库支持中文内容。每个句子以句号结束。分块时不会在汉字中间截断代理对。
`;

/** Everything every chunking must satisfy; `mayExceed` names the chunks allowed over chunkSize. */
function assertWellFormed(content: string, chunks: Chunk[], options: ChunkOptions, mayExceed: (chunk: Chunk) => boolean = () => false): void {
  const graphemeBoundaries = new Set([content.length]);
  for (const { index } of new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(content)) graphemeBoundaries.add(index);
  const depth = new Int32Array(content.length + 1);
  chunks.forEach((chunk, index) => {
    assert.equal(chunk.ordinal, index, 'ordinals are consecutive');
    assert.equal(chunk.text, content.slice(chunk.start, chunk.end), `chunk ${index} text is the slice at its offsets`);
    assert.match(chunk.text, /\S/, `chunk ${index} is not whitespace only`);
    assert.equal(chunk.text, chunk.text.trimEnd(), `chunk ${index} ends with its last non-whitespace character`);
    // Leading whitespace is only ever the indentation of a line of code.
    if (chunk.text !== chunk.text.trimStart()) assert.ok(chunk.start === 0 || content.charAt(chunk.start - 1) === '\n', `chunk ${index} starts at a line`);
    assert.ok(graphemeBoundaries.has(chunk.start) && graphemeBoundaries.has(chunk.end), `chunk ${index} does not cut a grapheme`);
    if (!mayExceed(chunk)) assert.ok(chunk.text.length <= options.chunkSize, `chunk ${index} has ${chunk.text.length} > ${options.chunkSize} characters`);
    const previous = chunks[index - 1];
    if (previous) assert.ok(chunk.start > previous.start && chunk.end > previous.end, `chunk ${index} comes after chunk ${index - 1}`);
    depth[chunk.start] = (depth[chunk.start] as number) + 1;
    depth[chunk.end] = (depth[chunk.end] as number) - 1;
  });
  let covering = 0;
  for (let offset = 0; offset < content.length; offset++) {
    covering += depth[offset] as number;
    if (covering === 0) assert.match(content.charAt(offset), /\s/, `character ${offset} (${JSON.stringify(content.charAt(offset))}) is in no chunk`);
  }
}

/** Neighbouring chunks with the same heading path (chunks of one section). */
function sameSectionPairs(chunks: Chunk[]): [Chunk, Chunk][] {
  const pairs: [Chunk, Chunk][] = [];
  for (let index = 1; index < chunks.length; index++) {
    const previous = chunks[index - 1] as Chunk;
    const next = chunks[index] as Chunk;
    if (previous.headingPath.join('\u001f') === next.headingPath.join('\u001f')) pairs.push([previous, next]);
  }
  return pairs;
}

/** Ranges of `content` matched by `pattern` (global). */
function rangesOf(content: string, pattern: RegExp): { start: number; end: number }[] {
  return [...content.matchAll(pattern)].map((match) => ({ start: match.index, end: match.index + match[0].length }));
}

const strictlyInside = (offset: number, range: { start: number; end: number }): boolean => offset > range.start && offset < range.end;

describe('chunkContent: invariants on realistic content', () => {
  const cases: { name: string; content: string; contentType: ContentType; options: ChunkOptions; mayExceed?: (chunk: Chunk) => boolean }[] = [
    { name: 'product docs, defaults', content: widgetGuide, contentType: 'markdown', options: DEFAULT_CHUNK_OPTIONS },
    { name: 'product docs, 300/60', content: widgetGuide, contentType: 'markdown', options: { chunkSize: 300, chunkOverlap: 60 } },
    // At 120 characters the configuration table's longest row (123) cannot be split.
    {
      name: 'product docs, 120/30',
      content: widgetGuide,
      contentType: 'markdown',
      options: { chunkSize: 120, chunkOverlap: 30 },
      mayExceed: (chunk) => chunk.text.startsWith('|') && !chunk.text.includes('\n'),
    },
    { name: 'product docs as text', content: widgetGuide, contentType: 'text', options: { chunkSize: 400, chunkOverlap: 80 } },
    { name: 'product docs, no overlap', content: widgetGuide, contentType: 'markdown', options: { chunkSize: 250, chunkOverlap: 0 } },
    { name: 'product docs, CRLF', content: widgetGuide.replaceAll('\n', '\r\n'), contentType: 'markdown', options: { chunkSize: 300, chunkOverlap: 60 } },
    { name: 'FAQ as qa_pair', content: billingFaq, contentType: 'qa_pair', options: DEFAULT_CHUNK_OPTIONS },
    { name: 'FAQ as qa_pair, 100/20', content: billingFaq, contentType: 'qa_pair', options: { chunkSize: 100, chunkOverlap: 20 }, mayExceed: (chunk) => chunk.text.length <= 200 },
    { name: 'FAQ as markdown', content: billingFaq, contentType: 'markdown', options: { chunkSize: 150, chunkOverlap: 30 } },
    { name: 'source code', content: sourceCode, contentType: 'code', options: { chunkSize: 120, chunkOverlap: 40 } },
    { name: 'source code as markdown', content: sourceCode, contentType: 'markdown', options: { chunkSize: 120, chunkOverlap: 40 } },
    { name: 'emoji, CJK and combining marks', content: unicodeGuide, contentType: 'markdown', options: { chunkSize: 60, chunkOverlap: 15 } },
  ];
  for (const { name, content, contentType, options, mayExceed } of cases) {
    test(name, () => {
      const chunks = chunkContent(content, contentType, options);
      assert.ok(chunks.length > 0);
      assertWellFormed(content, chunks, options, mayExceed);
    });
  }

  test('the defaults are 800 and 100 characters', () => {
    assert.deepEqual(DEFAULT_CHUNK_OPTIONS, { chunkSize: 800, chunkOverlap: 100 });
    assert.deepEqual(chunkContent(widgetGuide, 'markdown'), chunkContent(widgetGuide, 'markdown', { chunkSize: 800, chunkOverlap: 100 }));
  });
});

describe('chunkContent: trivial inputs', () => {
  for (const content of ['', ' ', '\n\n\t  \r\n', '\u00a0\u3000']) {
    test(`${JSON.stringify(content)} gives no chunk`, () => {
      for (const contentType of ['text', 'markdown', 'code', 'qa_pair'] as const) assert.deepEqual(chunkContent(content, contentType), []);
    });
  }

  test('a one-line document is one chunk', () => {
    const content = 'Refunds are issued within 14 days.\n';
    for (const contentType of ['text', 'markdown', 'code', 'qa_pair'] as const) {
      assert.deepEqual(chunkContent(content, contentType), [
        { ordinal: 0, text: 'Refunds are issued within 14 days.', headingPath: [], start: 0, end: 34 },
      ]);
    }
  });

  test('surrounding whitespace is left out, except the indentation of code', () => {
    const content = '\n    return total;  \n\n';
    assert.deepEqual(chunkContent(content, 'markdown'), [{ ordinal: 0, text: 'return total;', headingPath: [], start: 5, end: 18 }]);
    assert.deepEqual(chunkContent(content, 'code'), [{ ordinal: 0, text: '    return total;', headingPath: [], start: 1, end: 18 }]);
  });

  const invalidOptions: [string, ChunkOptions][] = [
    ['a zero chunkSize', { chunkSize: 0, chunkOverlap: 0 }],
    ['a fractional chunkSize', { chunkSize: 80.5, chunkOverlap: 0 }],
    ['an overlap equal to chunkSize', { chunkSize: 100, chunkOverlap: 100 }],
    ['a negative overlap', { chunkSize: 100, chunkOverlap: -1 }],
  ];
  for (const [name, options] of invalidOptions) {
    test(`${name} is a RangeError`, () => {
      assert.throws(() => chunkContent('Some text.', 'text', options), RangeError);
    });
  }
});

describe('chunkContent: headings', () => {
  test('heading paths follow the nesting, and a ## after a ### pops back', () => {
    const content = [
      'Lore answers questions.',
      '# Billing',
      'Billing is monthly.',
      '## Refunds',
      'Refunds take 14 days.',
      '### Card refunds',
      'Cards take 5 days more.',
      '## Invoices',
      'Invoices are PDFs.',
      '# Support',
      'Write to us.',
    ].join('\n');
    const chunks = chunkContent(content, 'markdown');
    assert.deepEqual(
      chunks.map(({ text, headingPath }) => ({ text, headingPath })),
      [
        { text: 'Lore answers questions.', headingPath: [] },
        { text: '# Billing\nBilling is monthly.', headingPath: ['Billing'] },
        { text: '## Refunds\nRefunds take 14 days.', headingPath: ['Billing', 'Refunds'] },
        { text: '### Card refunds\nCards take 5 days more.', headingPath: ['Billing', 'Refunds', 'Card refunds'] },
        { text: '## Invoices\nInvoices are PDFs.', headingPath: ['Billing', 'Invoices'] },
        { text: '# Support\nWrite to us.', headingPath: ['Support'] },
      ],
    );
    assertWellFormed(content, chunks, DEFAULT_CHUNK_OPTIONS);
  });

  test('the product docs get the heading path of the section each chunk is in', () => {
    const paths = [...new Set(chunkContent(widgetGuide, 'markdown', { chunkSize: 300, chunkOverlap: 60 }).map((chunk) => chunk.headingPath.join(' > ')))];
    assert.deepEqual(paths, [
      'Embedding the support widget',
      'Embedding the support widget > Installation',
      'Embedding the support widget > Installation > Single-page applications',
      'Embedding the support widget > Installation > Content Security Policy',
      'Embedding the support widget > Configuration',
      'Embedding the support widget > Styling',
      'Embedding the support widget > Troubleshooting > The launcher does not appear',
      'Embedding the support widget > Troubleshooting > Answers are slow',
      'Embedding the support widget > Changelog',
    ]);
  });

  test('the heading line belongs to the first chunk of its section', () => {
    const chunks = chunkContent(widgetGuide, 'markdown', { chunkSize: 300, chunkOverlap: 60 });
    for (const heading of rangesOf(widgetGuide, /^#{1,6} .*$/gm)) {
      const owners = chunks.filter((chunk) => chunk.start <= heading.start && chunk.end >= heading.end);
      assert.ok(owners.length >= 1, `${widgetGuide.slice(heading.start, heading.end)} is in a chunk`);
      assert.ok(
        owners.some((chunk) => chunk.start === heading.start || /^#{1,6} [^\n]*\n\s*$/.test(widgetGuide.slice(chunk.start, heading.start))),
        `${widgetGuide.slice(heading.start, heading.end)} starts its chunk (after at most the headings above it)`,
      );
    }
  });

  test('a section with nothing but its heading joins the next section instead of becoming a chunk', () => {
    const content = '# Guide\n\n## Install\n\nRun `npm install lore`.\n\n## Upgrade\n\nRun it again.';
    assert.deepEqual(
      chunkContent(content, 'markdown').map(({ text, headingPath }) => ({ text, headingPath })),
      [
        { text: '# Guide\n\n## Install\n\nRun `npm install lore`.', headingPath: ['Guide', 'Install'] },
        { text: '## Upgrade\n\nRun it again.', headingPath: ['Guide', 'Upgrade'] },
      ],
    );
  });

  test('a heading at the very end still becomes a chunk', () => {
    assert.deepEqual(
      chunkContent('Intro.\n\n## Appendix\n', 'markdown').map(({ text, headingPath }) => ({ text, headingPath })),
      [
        { text: 'Intro.', headingPath: [] },
        { text: '## Appendix', headingPath: ['Appendix'] },
      ],
    );
  });

  test('setext headings, closing hashes and non-headings', () => {
    const content = [
      'Pricing',
      '=======',
      '',
      'Plans are billed monthly.',
      '',
      'Team plan',
      '---------',
      '',
      'For up to 50 people. #hashtags and C# are not headings.',
      '',
      '## Enterprise ##',
      '',
      '- a list item',
      '---',
      'still Enterprise.',
    ].join('\n');
    assert.deepEqual(
      chunkContent(content, 'markdown').map(({ headingPath }) => headingPath),
      [['Pricing'], ['Pricing', 'Team plan'], ['Pricing', 'Enterprise']],
    );
  });

  test('a # line inside a code fence is not a heading', () => {
    const content = '## Install\n\n```bash\n# install the CLI\nnpm install -g lore\n```\n\nThen log in.';
    const chunks = chunkContent(content, 'markdown');
    assert.equal(chunks.length, 1);
    assert.deepEqual(chunks[0]?.headingPath, ['Install']);
  });
});

describe('chunkContent: overlap', () => {
  const options = { chunkSize: 200, chunkOverlap: 50 };
  const chunks = chunkContent(widgetGuide, 'markdown', options);
  const pairs = sameSectionPairs(chunks);

  test('neighbouring chunks of one section overlap by at most chunkOverlap, starting at a word boundary', () => {
    const overlapping = pairs.filter(([previous, next]) => next.start < previous.end);
    // Most neighbours overlap; the others follow a table or fence that fitted whole, which an overlap never enters.
    assert.ok(overlapping.length >= pairs.length * 0.7, `${overlapping.length} of ${pairs.length} neighbours overlap`);
    for (const [previous, next] of overlapping) {
      assert.ok(previous.end - next.start <= options.chunkOverlap, `${previous.ordinal}/${next.ordinal} overlap by ${previous.end - next.start}`);
      assert.match(widgetGuide.charAt(next.start - 1), /\s/, `chunk ${next.ordinal} starts after whitespace: ${JSON.stringify(next.text.slice(0, 30))}`);
    }
  });

  test('the overlap starts at a sentence when one starts in the first half of the overlap window', () => {
    const content = 'Alpha one two. Beta three four. Gamma five six. Delta seven eight. Epsilon nine ten. Zeta eleven twelve.';
    // The window is [7, 27]: the word `two.` starts at 10, the sentence `Beta` at 15.
    const [first, second] = chunkContent(content, 'text', { chunkSize: 60, chunkOverlap: 40 });
    assert.equal(first?.text, 'Alpha one two. Beta three four. Gamma five six.');
    assert.equal(second?.text, 'Beta three four. Gamma five six. Delta seven eight.');
  });

  test('without a sentence start in reach, the overlap starts at a word', () => {
    const content = 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen';
    const [first, second] = chunkContent(content, 'text', { chunkSize: 40, chunkOverlap: 12 });
    assert.equal(first?.text, 'one two three four five six seven eight');
    assert.equal(second?.text, 'seven eight nine ten eleven twelve');
  });

  test('chunks of different sections never overlap', () => {
    for (let index = 1; index < chunks.length; index++) {
      const previous = chunks[index - 1] as Chunk;
      const next = chunks[index] as Chunk;
      if (previous.headingPath.join('\u001f') !== next.headingPath.join('\u001f')) assert.ok(next.start >= previous.end);
    }
  });

  test('chunkOverlap 0 gives disjoint chunks', () => {
    const disjoint = chunkContent(widgetGuide, 'markdown', { chunkSize: 200, chunkOverlap: 0 });
    for (let index = 1; index < disjoint.length; index++) assert.ok((disjoint[index] as Chunk).start >= (disjoint[index - 1] as Chunk).end);
  });

  test('a bare heading is topped up with the start of a paragraph that fits a chunk only alone', () => {
    const paragraph = 'Each request may carry up to 100 records. Larger payloads are rejected with 413. Split them into several jobs.';
    const content = `## Limits\n\n${paragraph}`;
    assert.ok(paragraph.length <= 120 && content.length > 120);
    assert.deepEqual(
      chunkContent(content, 'markdown', { chunkSize: 120, chunkOverlap: 50 }).map((chunk) => chunk.text),
      [
        '## Limits\n\nEach request may carry up to 100 records. Larger payloads are rejected with 413.',
        'Larger payloads are rejected with 413. Split them into several jobs.',
      ],
    );
  });

  test('a chunk at least a quarter full is closed instead, which keeps the next paragraph whole', () => {
    const lead = 'Payload limits for the ingestion API are listed below.';
    const paragraph = 'Each request may carry up to 100 records. Larger payloads are rejected with 413. Split them into several jobs.';
    assert.deepEqual(
      chunkContent(`${lead}\n\n${paragraph}`, 'markdown', { chunkSize: 120, chunkOverlap: 0 }).map((chunk) => chunk.text),
      [lead, paragraph],
    );
  });
});

describe('chunkContent: code fences and tables', () => {
  const fences = rangesOf(widgetGuide, /^```[a-z]*\n[\s\S]*?\n```$/gm);
  const tables = rangesOf(widgetGuide, /^\|.*\|(?:\n\|.*\|)+$/gm);
  const rows = rangesOf(widgetGuide, /^\|.*\|$/gm);

  test('the fixture has the fences and the table the next tests rely on', () => {
    assert.equal(fences.length, 2);
    assert.equal(tables.length, 1);
    assert.equal(rows.length, 7);
  });

  for (const chunkSize of [300, 400, 800]) {
    test(`a fence that fits (chunkSize ${chunkSize}) is whole in one chunk and never cut`, () => {
      const chunks = chunkContent(widgetGuide, 'markdown', { chunkSize, chunkOverlap: 60 });
      for (const fence of fences.filter(({ start, end }) => end - start <= chunkSize)) {
        assert.ok(chunks.some((chunk) => chunk.start <= fence.start && chunk.end >= fence.end));
        for (const chunk of chunks) assert.ok(!strictlyInside(chunk.start, fence) && !strictlyInside(chunk.end, fence), `chunk ${chunk.ordinal} cuts a fence`);
      }
    });
  }

  test('a fence longer than chunkSize is split between lines', () => {
    const chunks = chunkContent(widgetGuide, 'markdown', { chunkSize: 150, chunkOverlap: 30 });
    const longFence = fences.find(({ start, end }) => end - start > 150);
    assert.ok(longFence);
    const cuts = chunks.flatMap((chunk) => [chunk.start, chunk.end]).filter((offset) => strictlyInside(offset, longFence));
    assert.ok(cuts.length > 0);
    for (const offset of cuts) assert.ok(widgetGuide.charAt(offset - 1) === '\n' || widgetGuide.charAt(offset) === '\n', `cut at ${offset} is mid-line`);
  });

  test('a table that fits is whole in one chunk', () => {
    const table = tables[0];
    assert.ok(table);
    const chunks = chunkContent(widgetGuide, 'markdown', { chunkSize: 800, chunkOverlap: 100 });
    assert.ok(chunks.some((chunk) => chunk.start <= table.start && chunk.end >= table.end));
    for (const chunk of chunks) assert.ok(!strictlyInside(chunk.start, table) && !strictlyInside(chunk.end, table));
  });

  for (const chunkSize of [130, 200, 300]) {
    test(`a table longer than chunkSize ${chunkSize} is split between rows, never inside one`, () => {
      const chunks = chunkContent(widgetGuide, 'markdown', { chunkSize, chunkOverlap: 40 });
      for (const chunk of chunks) {
        for (const row of rows) assert.ok(!strictlyInside(chunk.start, row) && !strictlyInside(chunk.end, row), `chunk ${chunk.ordinal} cuts a row`);
      }
    });
  }

  test('a row longer than chunkSize is the one chunk allowed over it', () => {
    const row = `| Long | ${'cell '.repeat(40).trim()} |`;
    const content = `| Name | Value |\n|------|-------|\n| Short | one |\n${row}\n| Last | two |`;
    const chunks = chunkContent(content, 'markdown', { chunkSize: 100, chunkOverlap: 20 });
    assert.deepEqual(
      chunks.filter((chunk) => chunk.text.length > 100).map((chunk) => chunk.text),
      [row],
    );
    assertWellFormed(content, chunks, { chunkSize: 100, chunkOverlap: 20 }, (chunk) => chunk.text === row);
  });

  test('tilde fences and an unclosed fence stay whole', () => {
    const content = 'Intro.\n\n~~~\nline one\n\n## not a heading\n~~~\n\nMiddle.\n\n```js\nconst open = true;\n\n# still code';
    const chunks = chunkContent(content, 'markdown', { chunkSize: 45, chunkOverlap: 0 });
    assert.deepEqual(
      chunks.map(({ text, headingPath }) => ({ text, headingPath })),
      [
        { text: 'Intro.\n\n~~~\nline one\n\n## not a heading\n~~~', headingPath: [] },
        { text: 'Middle.', headingPath: [] },
        { text: '```js\nconst open = true;\n\n# still code', headingPath: [] },
      ],
    );
  });
});

describe('chunkContent: qa_pair', () => {
  test('each question stays with its answer, in every form', () => {
    assert.deepEqual(
      chunkContent(billingFaq, 'qa_pair').map(({ text, headingPath }) => ({ text, headingPath })),
      [
        {
          text: '# Billing FAQ\n\nQ: When am I charged?\nA: On the first day of each month, for the month ahead. Annual plans are charged once a year.',
          headingPath: ['Billing FAQ', 'When am I charged?'],
        },
        {
          text: 'Q: Can I get a refund?\nA: Yes, within 14 days of a charge. Open a ticket with the invoice number.',
          headingPath: ['Billing FAQ', 'Can I get a refund?'],
        },
        {
          text: billingFaq.slice(billingFaq.indexOf('## Account'), billingFaq.indexOf('\n\n**Q:**')),
          headingPath: ['Billing FAQ', 'Account', 'How do I change the owner of a workspace?'],
        },
        {
          text: '**Q:** Can two workspaces share a knowledge base?\n**A:** No. A knowledge base belongs to one workspace.',
          headingPath: ['Billing FAQ', 'Account', 'Can two workspaces share a knowledge base?'],
        },
      ],
    );
  });

  test('headings are questions too', () => {
    const content = '## How long do refunds take?\nFive business days.\n## Can I pay by invoice?\nYes, on annual plans.';
    assert.deepEqual(
      chunkContent(content, 'qa_pair').map(({ text, headingPath }) => ({ text, headingPath })),
      [
        { text: '## How long do refunds take?\nFive business days.', headingPath: ['How long do refunds take?'] },
        { text: '## Can I pay by invoice?\nYes, on annual plans.', headingPath: ['Can I pay by invoice?'] },
      ],
    );
  });

  test('a pair up to twice chunkSize is one chunk; a longer one is split and every piece keeps its question', () => {
    const chunks = chunkContent(billingFaq, 'qa_pair', { chunkSize: 100, chunkOverlap: 20 });
    const firstPair = chunks[0] as Chunk;
    assert.ok(firstPair.text.length > 100 && firstPair.text.endsWith('charged once a year.'));
    const ownerPieces = chunks.filter((chunk) => chunk.headingPath.at(-1) === 'How do I change the owner of a workspace?');
    assert.ok(ownerPieces.length >= 3);
    assert.ok(ownerPieces.every((chunk) => chunk.text.length <= 100));
    assert.ok((ownerPieces.at(-1) as Chunk).text.endsWith('becomes an administrator.'));
  });

  test('content without a recognizable question is one pair', () => {
    const content = 'What is lore?\n\nA self-hostable service that answers questions from your documents.';
    assert.deepEqual(chunkContent(content, 'qa_pair'), [{ ordinal: 0, text: content, headingPath: [], start: 0, end: content.length }]);
  });

  test('a label alone on its line takes the next line as the question', () => {
    const content = '**Question**\nHow do I export my data?\n**Answer**\nFrom the console, as JSON Lines.';
    assert.deepEqual(chunkContent(content, 'qa_pair')[0]?.headingPath, ['How do I export my data?']);
  });
});

describe('chunkContent: code', () => {
  const options = { chunkSize: 120, chunkOverlap: 40 };
  const chunks = chunkContent(sourceCode, 'code', options);
  const longLine = rangesOf(sourceCode, /^export const EMPTY_HASH.*$/gm)[0];

  test('code splits between blank-line blocks and lines, and mid-line only inside a line longer than chunkSize', () => {
    assert.ok(longLine && longLine.end - longLine.start > 120);
    for (const offset of chunks.flatMap((chunk) => [chunk.start, chunk.end])) {
      const lineStart = sourceCode.lastIndexOf('\n', offset - 1) + 1;
      const atLineEdge = sourceCode.slice(lineStart, offset).trim() === '' || /^\s*(\n|$)/.test(sourceCode.slice(offset));
      assert.ok(atLineEdge || strictlyInside(offset, longLine), `offset ${offset} is mid-line`);
    }
    assert.ok(chunks.every((chunk) => chunk.headingPath.length === 0));
  });

  const blocks = 'const a = 1;\nconst b = 2;\n\nfunction add(x, y) {\n  return x + y;\n}\n\nfunction negate(x) {\n  return -x;\n}\n';
  const cases: [number, string[]][] = [
    [40, ['const a = 1;\nconst b = 2;', 'function add(x, y) {\n  return x + y;\n}', 'function negate(x) {\n  return -x;\n}']],
    [80, ['const a = 1;\nconst b = 2;\n\nfunction add(x, y) {\n  return x + y;\n}', 'function negate(x) {\n  return -x;\n}']],
    [30, ['const a = 1;\nconst b = 2;', 'function add(x, y) {', '  return x + y;\n}', 'function negate(x) {', '  return -x;\n}']],
  ];
  for (const [chunkSize, expected] of cases) {
    test(`blocks stay whole while they fit, then split between lines (chunkSize ${chunkSize})`, () => {
      assert.deepEqual(
        chunkContent(blocks, 'code', { chunkSize, chunkOverlap: 0 }).map((chunk) => chunk.text),
        expected,
      );
    });
  }
});

describe('chunkContent: Unicode and line endings', () => {
  test('offsets count UTF-16 code units and cuts never split a surrogate pair or grapheme', () => {
    const options = { chunkSize: 60, chunkOverlap: 15 };
    const chunks = chunkContent(unicodeGuide, 'markdown', options);
    assertWellFormed(unicodeGuide, chunks, options);
    const family = unicodeGuide.indexOf('👨‍👩‍👧‍👦');
    assert.ok(chunks.some((chunk) => chunk.start <= family && chunk.end >= family + '👨‍👩‍👧‍👦'.length));
    assert.deepEqual(chunks.at(-1)?.headingPath, ['Emoji und Umlaute 👋', '中文部分']);
  });

  test('CJK text splits after 。 even without spaces', () => {
    const content = 'これは日本語の段落です。検索エンジンは文ごとに分割します。長い文章でも正しく分割されます。';
    assert.deepEqual(
      chunkContent(content, 'text', { chunkSize: 30, chunkOverlap: 0 }).map((chunk) => chunk.text),
      ['これは日本語の段落です。検索エンジンは文ごとに分割します。', '長い文章でも正しく分割されます。'],
    );
  });

  test('a single token longer than chunkSize is cut between graphemes', () => {
    const content = `See ${'👍🏽'.repeat(40)} and https://example.com/${'a1b2c3'.repeat(30)}/download for details.`;
    const options = { chunkSize: 50, chunkOverlap: 10 };
    const chunks = chunkContent(content, 'text', options);
    assertWellFormed(content, chunks, options);
    assert.ok(chunks.length >= 7);
  });

  test('Windows line endings give the same sections and texts, with no \\r at chunk edges or in headings', () => {
    const crlf = widgetGuide.replaceAll('\n', '\r\n');
    const unix = chunkContent(widgetGuide, 'markdown');
    const windows = chunkContent(crlf, 'markdown');
    assert.deepEqual(
      windows.map(({ text, headingPath }) => ({ text: text.replaceAll('\r\n', '\n'), headingPath })),
      unix.map(({ text, headingPath }) => ({ text, headingPath })),
    );
    for (const chunk of windows) assert.ok(!/^[\r\n]|[\r\n]$/.test(chunk.text) && !chunk.headingPath.some((title) => title.includes('\r')));
  });
});

describe('chunkContent: performance', () => {
  test('2,000 documents of 2 KB take under 400 ms of CPU', () => {
    const documents: string[] = [];
    for (let index = 0; index < 2000; index++) {
      const offset = (index * 977) % (widgetGuide.length - 2048);
      documents.push(`# Record ${index}\n\n${widgetGuide.slice(offset, offset + 2000)}`);
    }
    // Records arrive through JSON.parse, which yields flat strings; concatenated ones are slower to scan.
    const records: string[] = JSON.parse(JSON.stringify(documents));
    // A first pass lets V8 compile the chunker: cold, the same pass costs about 250 ms of CPU, most
    // of it compilation on a busy machine. Compiled, it costs about 30 ms; 400 ms catches a tenfold
    // slowdown and any quadratic regression, which at this size costs seconds. CPU time, not wall
    // time: on a shared test machine the wall clock measures the neighbours.
    for (const record of records) chunkContent(record, 'markdown');
    const before = process.cpuUsage();
    let chunks = 0;
    for (const record of records) chunks += chunkContent(record, 'markdown').length;
    const used = process.cpuUsage(before);
    const milliseconds = (used.user + used.system) / 1000;
    assert.ok(chunks >= 6000, `${chunks} chunks`);
    assert.ok(milliseconds < 400, `took ${milliseconds} ms`);
  });

  // Each shape takes 10-100 ms; anything quadratic in it would take minutes.
  const shapes: [string, string, ContentType][] = [
    ['a single 500 KB token', 'x'.repeat(500_000), 'markdown'],
    ['emoji with skin tones, no space', '👍🏽'.repeat(125_000), 'text'],
    ['words without punctuation', 'word '.repeat(100_000), 'markdown'],
    ['a word after 5,000 spaces, repeated', `word${' '.repeat(5000)}`.repeat(100), 'markdown'],
    ['bare headings', '## heading\n'.repeat(50_000), 'markdown'],
    ['an unclosed fence', `\`\`\`\n${'code line\n'.repeat(50_000)}`, 'markdown'],
    ['a pipe on every line', 'a | b\n'.repeat(80_000), 'markdown'],
    ['a setext heading under a huge paragraph', `${'word '.repeat(100_000)}\n===`, 'markdown'],
    ['question lines', 'Q: why?\nA: because.\n'.repeat(25_000), 'qa_pair'],
    ['long lines of code', `${'x'.repeat(5000)}\n`.repeat(100), 'code'],
  ];
  for (const [name, content, contentType] of shapes) {
    test(`${name} (${(content.length / 1000).toFixed(0)} KB) is chunked in linear time`, () => {
      const before = process.cpuUsage();
      const chunks = chunkContent(content, contentType);
      const used = process.cpuUsage(before);
      assert.ok(chunks.length > 0);
      assert.ok((used.user + used.system) / 1000 < 1000, `took ${(used.user + used.system) / 1000} ms`);
    });
  }
});
