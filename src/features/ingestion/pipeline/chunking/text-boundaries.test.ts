import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cutToken, isListMarker, isWhitespace, proseBoundaryStrength, splitListItems, splitSentences, splitWords, type Range } from './text-boundaries.ts';

const texts = (content: string, ranges: Range[]): string[] => ranges.map(({ start, end }) => content.slice(start, end));

describe('isWhitespace', () => {
  test('matches exactly the code units of /\\s/', () => {
    for (let code = 0; code <= 0xffff; code++) {
      assert.equal(isWhitespace(code), /\s/.test(String.fromCharCode(code)), `U+${code.toString(16)}`);
    }
  });
});

describe('splitSentences', () => {
  const cases: [string, string[]][] = [
    ['One. Two! Three? Four', ['One.', 'Two!', 'Three?', 'Four']],
    ['Version 2.3 is out. Update now.', ['Version 2.3 is out.', 'Update now.']],
    ['He said "stop." Then left.', ['He said "stop."', 'Then left.']],
    ['Run it (twice.) Done… Really', ['Run it (twice.)', 'Done…', 'Really']],
    ['**Bold.** Next', ['**Bold.**', 'Next']],
    ['Wait...  what?\nNext line.', ['Wait...', 'what?', 'Next line.']],
    ['日本語です。次の文！最後？', ['日本語です。', '次の文！', '最後？']],
    ['「引用。」次', ['「引用。」', '次']],
    ['  padded.  ', ['padded.']],
    ['no terminator at all', ['no terminator at all']],
  ];
  for (const [content, expected] of cases) {
    test(JSON.stringify(content), () => assert.deepEqual(texts(content, splitSentences(content, 0, content.length)), expected));
  }

  test('works on a range inside a larger string', () => {
    const content = 'xx First. Second. yy';
    assert.deepEqual(texts(content, splitSentences(content, 2, 17)), ['First.', 'Second.']);
  });
});

describe('splitWords', () => {
  test('splits on any whitespace, including no-break and ideographic spaces', () => {
    const content = ' alpha\tbeta\r\ngamma\u00a0delta\u3000epsilon ';
    assert.deepEqual(texts(content, splitWords(content, 0, content.length)), ['alpha', 'beta', 'gamma', 'delta', 'epsilon']);
  });
});

describe('list items', () => {
  const markers: [string, boolean][] = [
    ['- item', true],
    ['* item', true],
    ['+ item', true],
    ['1. item', true],
    ['12) item', true],
    ['123456789. item', true],
    ['1234567890. item', false],
    ['-item', false],
    ['1.5 million', false],
    ['-', false],
    ['Item', false],
  ];
  for (const [line, expected] of markers) {
    test(`${JSON.stringify(line)} ${expected ? 'starts' : 'does not start'} a list item`, () => {
      assert.equal(isListMarker(line, 0, line.length), expected);
    });
  }

  test('splitListItems cuts before every marker line and keeps continuation lines with their item', () => {
    const content = 'Steps:\n- open the console\n  and sign in\n- create a key\n10. done';
    assert.deepEqual(texts(content, splitListItems(content, 0, content.length)), [
      'Steps:',
      '- open the console\n  and sign in',
      '- create a key',
      '10. done',
    ]);
  });
});

describe('cutToken', () => {
  const graphemeStarts = (content: string): Set<number> =>
    new Set([...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(content)].map(({ index }) => index).concat(content.length));

  const cases: { name: string; token: string; limit: number; pieces?: string[] }[] = [
    { name: 'plain letters are cut at the limit', token: 'a'.repeat(25), limit: 10, pieces: ['a'.repeat(10), 'a'.repeat(10), 'a'.repeat(5)] },
    { name: 'a URL is cut after punctuation near the limit', token: 'https://example.com/docs/guide/index.html', limit: 16, pieces: ['https://example.', 'com/docs/guide/', 'index.html'] },
    { name: 'emoji with skin tones stay whole', token: '👍🏽'.repeat(9), limit: 10 },
    { name: 'ZWJ families stay whole', token: '👨‍👩‍👧'.repeat(5), limit: 12 },
    { name: 'flags stay whole', token: '🇩🇪🇫🇷🇯🇵'.repeat(4), limit: 10 },
    { name: 'combining accents stay on their letter', token: 'e\u0301'.repeat(20), limit: 7 },
    { name: 'CJK without punctuation is cut at the limit', token: '知识库支持中文内容'.repeat(3), limit: 10 },
  ];
  for (const { name, token, limit, pieces } of cases) {
    test(name, () => {
      const ranges = cutToken(token, 0, token.length, limit);
      assert.equal(ranges.map(({ start, end }) => token.slice(start, end)).join(''), token);
      const boundaries = graphemeStarts(token);
      for (const { start, end } of ranges) {
        assert.ok(end - start <= limit, `${end - start} > ${limit}`);
        assert.ok(boundaries.has(start) && boundaries.has(end), `[${start}, ${end}) cuts a grapheme`);
      }
      if (pieces) assert.deepEqual(texts(token, ranges), pieces);
    });
  }

  test('a grapheme longer than the limit stays whole', () => {
    const token = `x${'\u0301'.repeat(12)}y`;
    assert.deepEqual(texts(token, cutToken(token, 0, token.length, 5)), [token.slice(0, 13), 'y']);
  });
});

describe('proseBoundaryStrength', () => {
  const content = 'First one. second two 日本。次';
  const cases: [number, number][] = [
    [content.indexOf('First'), 0],
    [content.indexOf('one'), 1],
    [content.indexOf('second'), 2],
    [content.indexOf('two'), 1],
    [content.indexOf('econd'), 0],
    [content.indexOf(' two'), 0],
    [content.indexOf('日'), 1],
    [content.indexOf('次'), 2],
  ];
  for (const [position, expected] of cases) {
    test(`${JSON.stringify(content.slice(position, position + 6))} rates ${expected}`, () => {
      assert.equal(proseBoundaryStrength(content, position), expected);
    });
  }
});
