import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { AdapterIssue, ContentType, NormalizedRecord, RecordFailure } from './adapter.ts';
import { contentHubAdapter, contentTypeOfTaxonomy } from './content-hub.ts';

const readFixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const exportPayload: unknown = JSON.parse(readFixture('content-hub-export.json'));

type Attribute = { key: string; value: Record<string, unknown> };
const stringAttribute = (key: string, stringValue: string): Attribute => ({ key, value: { type: 'STRING', stringValue } });

/** One content-hub item with entity-encoded HTML. */
function item(id: string, html: string, attributes: Attribute[] = []) {
  const data = html.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
  return {
    content: { documentIdentifier: id, parseImage: false, deleted: false, inlineContent: { textContent: { data }, type: 'TEXT' } },
    metadata: { inlineAttributes: attributes },
  };
}
const payload = (...items: unknown[]) => [items, { timeTaken: '0.1s' }];
const normalizeOne = (...items: unknown[]) => {
  const data = payload(...items);
  assert.deepEqual(contentHubAdapter.validate(data), []);
  return [...contentHubAdapter.normalize(data)][0];
};

describe('content-hub normalize: the export fixture', () => {
  test('is valid and has 6 items', () => {
    assert.deepEqual(contentHubAdapter.validate(exportPayload), []);
    assert.equal(contentHubAdapter.count(exportPayload), 6);
  });

  const expected: Array<NormalizedRecord | RecordFailure> = [
    {
      id: 'kb-article-1001',
      title: 'Resetting your password',
      content: readFixture('content-hub-article.md').trimEnd(),
      contentType: 'markdown',
      url: 'https://help.example.com/articles/1001',
      tags: ['password', 'account', 'security', 'Lore Cloud', 'EU', 'US'],
      metadata: {
        Title: 'Resetting your password',
        keywords: 'password, account,  security ,,password',
        Taxonomy: 'Support > Account',
        url: 'https://help.example.com/articles/1001',
        customProduct: 'Lore Cloud',
        entityRegions: ['EU', 'US'],
        priority: 3,
        published: true,
      },
      deleted: false,
    },
    {
      id: 'faq-2002',
      title: 'How do I reset my password?',
      content: '## How do I reset my password?\n\nOpen _Settings → Security_ and click **Reset password**.\n\n1.  Enter your e-mail.\n2.  Follow the link we send you.',
      contentType: 'qa_pair',
      url: 'https://help.example.com/faq#reset',
      tags: ['faq', 'password'],
      metadata: { taxonomy: 'Help Center / FAQ', KEYWORDS: 'faq,password', Link: 'https://help.example.com/faq#reset' },
      deleted: false,
    },
    {
      id: 'snippet-3003',
      title: 'List jobs with curl',
      content:
        'List the ingestion jobs of your workspace:\n\n```\ncurl -H "Authorization: Bearer $TOKEN" \\\n  "https://lore.example.com/api/v2/data-ingestion/jobs?status=completed&limit=5"\n```',
      contentType: 'code',
      url: null,
      tags: [],
      metadata: { category: 'API Reference', title: '  List   jobs with curl ' },
      deleted: false,
    },
    {
      id: 'note-4004',
      title: 'Maintenance window on Sunday from 02:00 to 04:00 UTC',
      content: 'Maintenance window on Sunday from 02:00 to 04:00 UTC. Expect short interruptions of the API.',
      contentType: 'markdown',
      url: null,
      tags: ['maintenance', 'status', 'Platform, SRE'],
      metadata: {
        keywords: ['maintenance', ' status '],
        link: 'ftp://files.example.com/maintenance.txt',
        entityTeams: 'Platform, SRE',
        customFlag: true,
        priority: 2,
      },
      deleted: false,
    },
    { id: 'kb-article-0999', title: 'kb-article-0999', content: '', contentType: 'markdown', url: null, tags: [], metadata: {}, deleted: true },
    { id: 'empty-5005', error: 'content is empty after converting the HTML to Markdown' },
  ];
  const normalized = [...contentHubAdapter.normalize(exportPayload)];
  const about = [
    'an article: Title attribute, table, nested lists, link, code, double-encoded entities, every attribute type',
    'an FAQ: title from the first heading, qa_pair, keys in other cases',
    'a snippet: API reference taxonomy is code, title attribute whitespace collapsed, no url',
    'a note: no title or heading, keywords as a list, non-http link dropped, repeated key keeps the last value',
    'a deletion without content',
    'HTML with nothing but script and style: a per-record failure',
  ];
  expected.forEach((expectedItem, index) => {
    test(`item ${index}, ${about[index]}`, () => assert.deepEqual(normalized[index], expectedItem));
  });
  test('one result per item, in order', () => assert.equal(normalized.length, expected.length));
});

describe('content-hub normalize: attributes', () => {
  test('each value type becomes a typed metadata value', () => {
    const record = normalizeOne(
      item('a', '<p>Text.</p>', [
        stringAttribute('audience', 'admins'),
        { key: 'readingMinutes', value: { type: 'NUMBER', numberValue: 4.5 } },
        { key: 'internal', value: { type: 'BOOLEAN', booleanValue: false } },
        { key: 'products', value: { type: 'STRING_LIST', stringListValue: ['Lore', 'Lore Cloud'] } },
        { key: 'empty', value: { type: 'STRING_LIST', stringListValue: [] } },
      ]),
    );
    assert.deepEqual((record as NormalizedRecord).metadata, { audience: 'admins', readingMinutes: 4.5, internal: false, products: ['Lore', 'Lore Cloud'], empty: [] });
  });

  test('a __proto__ key is kept as a plain field', () => {
    const record = normalizeOne(item('a', '<p>Text.</p>', [stringAttribute('__proto__', 'x')])) as NormalizedRecord;
    assert.deepEqual(Object.keys(record.metadata), ['__proto__']);
    assert.equal(Object.getPrototypeOf(record.metadata), Object.prototype);
  });

  const tagCases: Array<{ name: string; attributes: Attribute[]; tags: string[] }> = [
    { name: 'keywords split on commas, trimmed, deduplicated', attributes: [stringAttribute('Keywords', ' a, b ,a,, c ')], tags: ['a', 'b', 'c'] },
    { name: 'keywords as a list are not split', attributes: [{ key: 'keywords', value: { type: 'STRING_LIST', stringListValue: ['a, b', 'c'] } }], tags: ['a, b', 'c'] },
    { name: 'custom and entity fields, one tag per string', attributes: [stringAttribute('customSegment', 'SMB, EU'), stringAttribute('EntityOwner', 'Team Blue')], tags: ['SMB, EU', 'Team Blue'] },
    { name: 'any string list', attributes: [{ key: 'regions', value: { type: 'STRING_LIST', stringListValue: ['EU', 'US', 'EU'] } }], tags: ['EU', 'US'] },
    {
      name: 'numbers and booleans of custom fields are no tags',
      attributes: [
        { key: 'customScore', value: { type: 'NUMBER', numberValue: 3 } },
        { key: 'customFlag', value: { type: 'BOOLEAN', booleanValue: true } },
      ],
      tags: [],
    },
    { name: 'ordinary string attributes are no tags', attributes: [stringAttribute('author', 'Ana'), stringAttribute('Taxonomy', 'Guides')], tags: [] },
    { name: 'keywords first, then entity fields, repeats dropped', attributes: [stringAttribute('customTopic', 'billing'), stringAttribute('keywords', 'billing, invoices')], tags: ['billing', 'invoices'] },
  ];
  for (const { name, attributes, tags } of tagCases) {
    test(`tags: ${name}`, () => assert.deepEqual((normalizeOne(item('a', '<p>Text.</p>', attributes)) as NormalizedRecord).tags, tags));
  }

  const titleCases: Array<{ name: string; html: string; attributes: Attribute[]; title: string }> = [
    { name: 'the Title attribute', html: '<h1>Heading</h1>', attributes: [stringAttribute('Title', 'From attribute')], title: 'From attribute' },
    { name: 'the title key in any case', html: '<h1>Heading</h1>', attributes: [stringAttribute('TITLE', 'Upper')], title: 'Upper' },
    { name: 'a blank Title falls back to the first heading', html: '<p>Intro.</p><h2>Heading</h2>', attributes: [stringAttribute('Title', '  ')], title: 'Heading' },
    { name: 'no heading: the first sentence', html: '<p>First sentence here. Second.</p>', attributes: [], title: 'First sentence here' },
    { name: 'a Title over 1000 characters is shortened', html: '<p>x</p>', attributes: [stringAttribute('Title', 'word '.repeat(300))], title: `${'word '.repeat(199).trim()}…` },
  ];
  for (const { name, html, attributes, title } of titleCases) {
    test(`title: ${name}`, () => assert.equal((normalizeOne(item('a', html, attributes)) as NormalizedRecord).title, title));
  }

  const urlCases: Array<{ name: string; attributes: Attribute[]; url: string | null }> = [
    { name: 'url attribute', attributes: [stringAttribute('URL', 'https://x.example/a')], url: 'https://x.example/a' },
    { name: 'link attribute', attributes: [stringAttribute('link', 'http://x.example/b')], url: 'http://x.example/b' },
    { name: 'not http', attributes: [stringAttribute('url', 'mailto:help@x.example')], url: null },
    { name: 'not a URL', attributes: [stringAttribute('url', '/relative/path')], url: null },
    { name: 'none', attributes: [], url: null },
  ];
  for (const { name, attributes, url } of urlCases) {
    test(`url: ${name}`, () => assert.equal((normalizeOne(item('a', '<p>Text.</p>', attributes)) as NormalizedRecord).url, url));
  }

  test('contentType from a taxonomy list attribute', () => {
    const record = normalizeOne(item('a', '<p>Q.</p>', [{ key: 'taxonomyPath', value: { type: 'STRING_LIST', stringListValue: ['Support', 'FAQs'] } }]));
    assert.equal((record as NormalizedRecord).contentType, 'qa_pair');
  });

  test('a deletion that still carries content yields no content', () => {
    const deletion = item('gone', '<p>Old text.</p>', [stringAttribute('Title', 'Old page')]);
    deletion.content.deleted = true;
    assert.deepEqual(normalizeOne(deletion), {
      id: 'gone',
      title: 'Old page',
      content: '',
      contentType: 'markdown',
      url: null,
      tags: [],
      metadata: { Title: 'Old page' },
      deleted: true,
    });
  });

  test('more than 100 derived tags: a per-record failure', () => {
    const keywords = Array.from({ length: 101 }, (_, index) => `k${index}`).join(',');
    assert.deepEqual(normalizeOne(item('many', '<p>Text.</p>', [stringAttribute('keywords', keywords)])), {
      id: 'many',
      error: 'has 101 tags, more than the limit of 100',
    });
  });

  test('Markdown over 1,000,000 characters: a per-record failure', () => {
    assert.deepEqual(normalizeOne(item('huge', `<p>${'x'.repeat(1_000_001)}</p>`)), {
      id: 'huge',
      error: 'content has 1000001 characters, more than the limit of 1000000',
    });
  });
});

describe('contentTypeOfTaxonomy', () => {
  const cases: Array<[string[], ContentType]> = [
    [['FAQ'], 'qa_pair'],
    [['Help Center / FAQs'], 'qa_pair'],
    [['Q&A'], 'qa_pair'],
    [['q & a'], 'qa_pair'],
    [['Common Questions'], 'qa_pair'],
    [['Frequently Asked'], 'qa_pair'],
    [['Code'], 'code'],
    [['Developers', 'Code Snippets'], 'code'],
    [['API Reference'], 'code'],
    [['api-reference'], 'code'],
    [['FAQ', 'Code'], 'qa_pair'],
    [['Guides'], 'markdown'],
    [['Barcode scanners'], 'markdown'],
    [['Faqir'], 'markdown'],
    [[], 'markdown'],
  ];
  for (const [values, expected] of cases) {
    test(`${JSON.stringify(values)} is ${expected}`, () => assert.equal(contentTypeOfTaxonomy(values), expected));
  }
});

describe('content-hub validate', () => {
  const ok = item('a', '<p>Text.</p>');
  const withContent = (content: Record<string, unknown>) => payload({ content, metadata: { inlineAttributes: [] } });
  const withAttributes = (...attributes: unknown[]) => payload({ content: ok.content, metadata: { inlineAttributes: attributes } });
  const cases: Array<{ name: string; data: unknown; issues: AdapterIssue[] }> = [
    { name: 'not an array', data: { items: [] }, issues: [{ path: '', message: 'must be an array' }] },
    { name: 'one element', data: [[ok]], issues: [{ path: '', message: 'must have at least 2 items (has 1)' }] },
    { name: 'three elements', data: [[ok], {}, {}], issues: [{ path: '', message: 'must have at most 2 items (has 3)' }] },
    { name: 'element 0 not an array', data: [ok, {}], issues: [{ path: '/0', message: 'must be an array' }] },
    { name: 'element 1 not an object', data: [[ok], 'fast'], issues: [{ path: '/1', message: 'must be an object' }] },
    { name: 'timeTaken not a string', data: [[ok], { timeTaken: 0.4 }], issues: [{ path: '/1/timeTaken', message: 'must be a string' }] },
    { name: 'an item not an object', data: payload(ok, 7), issues: [{ path: '/0/1', message: 'must be an object' }] },
    { name: 'content missing', data: payload({ metadata: {} }), issues: [{ path: '/0/0/content', message: 'is required' }] },
    { name: 'documentIdentifier missing', data: withContent({ inlineContent: ok.content.inlineContent }), issues: [{ path: '/0/0/content/documentIdentifier', message: 'is required' }] },
    {
      name: 'documentIdentifier of the wrong type',
      data: withContent({ documentIdentifier: 12, inlineContent: ok.content.inlineContent }),
      issues: [{ path: '/0/0/content/documentIdentifier', message: 'must be a string' }],
    },
    {
      name: 'blank documentIdentifier',
      data: withContent({ documentIdentifier: ' ', inlineContent: ok.content.inlineContent }),
      issues: [{ path: '/0/0/content/documentIdentifier', message: 'must not be blank' }],
    },
    {
      name: 'inlineContent missing on an item that is not deleted',
      data: withContent({ documentIdentifier: 'a', deleted: false }),
      issues: [{ path: '/0/0/content/inlineContent', message: 'is required (unless deleted is true)' }],
    },
    {
      name: 'textContent.data of the wrong type',
      data: withContent({ documentIdentifier: 'a', inlineContent: { textContent: { data: ['<p>'] }, type: 'TEXT' } }),
      issues: [{ path: '/0/0/content/inlineContent/textContent/data', message: 'must be a string' }],
    },
    {
      name: 'an inlineContent type other than TEXT',
      data: withContent({ documentIdentifier: 'a', inlineContent: { textContent: { data: 'x' }, type: 'BINARY' } }),
      issues: [{ path: '/0/0/content/inlineContent/type', message: 'must be one of: TEXT' }],
    },
    {
      name: 'deleted and parseImage not booleans',
      data: withContent({ documentIdentifier: 'a', deleted: 'no', parseImage: 1, inlineContent: ok.content.inlineContent }),
      issues: [
        { path: '/0/0/content/deleted', message: 'must be a boolean' },
        { path: '/0/0/content/parseImage', message: 'must be a boolean' },
      ],
    },
    { name: 'inlineAttributes not an array', data: payload({ content: ok.content, metadata: { inlineAttributes: {} } }), issues: [{ path: '/0/0/metadata/inlineAttributes', message: 'must be an array' }] },
    { name: 'an attribute without key', data: withAttributes({ value: { type: 'STRING', stringValue: 'x' } }), issues: [{ path: '/0/0/metadata/inlineAttributes/0/key', message: 'is required' }] },
    {
      name: 'an unknown value type',
      data: withAttributes({ key: 'published', value: { type: 'DATE', stringValue: '2024-01-01' } }),
      issues: [{ path: '/0/0/metadata/inlineAttributes/0/value/type', message: 'must be one of: STRING, NUMBER, BOOLEAN, STRING_LIST' }],
    },
    {
      name: 'the value field of the type missing',
      data: withAttributes(stringAttribute('ok', 'x'), { key: 'n', value: { type: 'NUMBER', stringValue: '3' } }),
      issues: [{ path: '/0/0/metadata/inlineAttributes/1/value/numberValue', message: 'is required when type is NUMBER' }],
    },
    {
      name: 'values of the wrong types',
      data: withAttributes(
        { key: 'n', value: { type: 'NUMBER', numberValue: '3' } },
        { key: 'b', value: { type: 'BOOLEAN', booleanValue: 'true' } },
        { key: 'l', value: { type: 'STRING_LIST', stringListValue: ['a', 1] } },
      ),
      issues: [
        { path: '/0/0/metadata/inlineAttributes/0/value/numberValue', message: 'must be a number' },
        { path: '/0/0/metadata/inlineAttributes/1/value/booleanValue', message: 'must be a boolean' },
        { path: '/0/0/metadata/inlineAttributes/2/value/stringListValue/1', message: 'must be a string' },
      ],
    },
    {
      name: 'duplicate documentIdentifiers point at each repeat',
      data: payload(ok, item('b', '<p>b</p>'), item('a', '<p>again</p>'), { content: { documentIdentifier: 'a', deleted: true } }),
      issues: [
        { path: '/0/2/content/documentIdentifier', message: 'duplicates the documentIdentifier of /0/0' },
        { path: '/0/3/content/documentIdentifier', message: 'duplicates the documentIdentifier of /0/0' },
      ],
    },
    {
      name: 'the problems of several items, in document order',
      data: payload(ok, item('b', '<p>b</p>'), item('c', '<p>c</p>'), { content: { parseImage: false, inlineContent: ok.content.inlineContent } }, { content: { documentIdentifier: 'e' } }),
      issues: [
        { path: '/0/3/content/documentIdentifier', message: 'is required' },
        { path: '/0/4/content/inlineContent', message: 'is required (unless deleted is true)' },
      ],
    },
  ];
  for (const { name, data, issues } of cases) {
    test(name, () => assert.deepEqual(contentHubAdapter.validate(data), issues));
  }

  const validCases: Array<{ name: string; data: unknown }> = [
    { name: 'no items', data: [[], { timeTaken: '0s' }] },
    { name: 'no timeTaken', data: [[ok], {}] },
    { name: 'a deletion without inlineContent', data: payload({ content: { documentIdentifier: 'a', deleted: true } }) },
    { name: 'an item without metadata', data: payload({ content: ok.content }) },
    { name: 'fields the export adds beyond the spec', data: payload({ ...ok, score: 0.9, content: { ...ok.content, version: 3 } }) },
  ];
  for (const { name, data } of validCases) {
    test(`valid: ${name}`, () => assert.deepEqual(contentHubAdapter.validate(data), []));
  }

  test('reports at most 100 issues', () => {
    const items = Array.from({ length: 5000 }, () => ({ content: {} }));
    const issues = contentHubAdapter.validate([items, {}]);
    assert.equal(issues.length, 100);
    assert.deepEqual(issues.slice(0, 2), [
      { path: '/0/0/content/documentIdentifier', message: 'is required' },
      { path: '/0/0/content/inlineContent', message: 'is required (unless deleted is true)' },
    ]);
  });
});

describe('content-hub descriptor', () => {
  test('name, format, version', () => {
    assert.deepEqual(
      { name: contentHubAdapter.name, format: contentHubAdapter.format, version: contentHubAdapter.version },
      { name: 'content-hub', format: 'content-hub-json', version: '1.0.0' },
    );
  });
  test('the schema is a two-element array in the 2020-12 form', () => {
    const schema = JSON.parse(JSON.stringify(contentHubAdapter.schema));
    assert.equal(schema.type, 'array');
    assert.equal(schema.prefixItems.length, 2);
    assert.deepEqual([schema.minItems, schema.maxItems], [2, 2]);
    assert.deepEqual(schema.prefixItems[0].items.properties.content.required, ['documentIdentifier']);
  });
});
