import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { deriveTitle, plainInline, shortenText } from './title.ts';

describe('deriveTitle', () => {
  const cases: Array<{ name: string; content: string; expected: string }> = [
    { name: 'first ATX heading, inline syntax removed', content: '# Reset your **password**\n\nText.', expected: 'Reset your password' },
    { name: 'a heading anywhere wins over an earlier paragraph', content: 'Intro paragraph. Second.\n\n## Later heading', expected: 'Later heading' },
    { name: 'closing hashes of a heading dropped', content: '### Billing ###\n', expected: 'Billing' },
    { name: 'setext heading', content: 'Setup\n=====\n\nbody', expected: 'Setup' },
    { name: 'setext heading of level 2', content: 'Some line\n---\n', expected: 'Some line' },
    { name: 'a heading inside a code fence is not one', content: '```sh\n# install\nnpm i\n```\n\nRun it once. Then restart.', expected: 'Run it once' },
    { name: 'first sentence keeps a question mark', content: 'How do I reset my password? Go to settings.', expected: 'How do I reset my password?' },
    { name: 'first sentence drops its period', content: 'Lore stores records. More text.', expected: 'Lore stores records' },
    { name: 'a Q: prefix is dropped', content: 'Q: Can I pay by card?\nA: Yes.', expected: 'Can I pay by card?' },
    { name: 'list markers and links reduced to text', content: '- first item with [a link](http://x.example) and `code`.\n- second', expected: 'first item with a link and code' },
    { name: 'blockquote marker and Markdown escapes removed', content: '> quoted snake\\_case text. more', expected: 'quoted snake_case text' },
    { name: 'a version number is not a sentence end', content: 'Version 1.2 adds hybrid search. Upgrade soon.', expected: 'Version 1.2 adds hybrid search' },
    { name: '#hashtag is not a heading', content: '#hashtag not heading. ok', expected: '#hashtag not heading' },
    { name: 'an empty heading is skipped', content: '#\n\nEmpty heading then text.', expected: 'Empty heading then text' },
    { name: 'code only: its first words', content: '```js\nconst a = 1;\n```', expected: 'const a = 1;' },
    { name: 'table only: its cell texts', content: '| Plan | Price |\n| --- | --- |\n| Basic | $5 |', expected: 'Plan Price Basic $5' },
    { name: 'empty content: the fallback', content: '', expected: 'rec-1' },
    { name: 'blank content: the fallback', content: ' \n\t ', expected: 'rec-1' },
    {
      name: 'a long sentence cut at a word boundary with an ellipsis',
      content: `${'word '.repeat(60).trim()}.`,
      expected: `${'word '.repeat(23).trim()}…`,
    },
    { name: 'a single long word cut inside it', content: 'a'.repeat(300), expected: `${'a'.repeat(119)}…` },
  ];
  for (const { name, content, expected } of cases) {
    test(name, () => {
      const title = deriveTitle(content, 'rec-1');
      assert.equal(title, expected);
      assert.ok(title.length <= 120, `${title.length} characters`);
    });
  }

  test('without a fallback, empty content is "Untitled"', () => {
    assert.equal(deriveTitle(''), 'Untitled');
  });

  test('a long fallback is shortened too', () => {
    assert.equal(deriveTitle('', 'x'.repeat(500)), `${'x'.repeat(119)}…`);
  });
});

describe('shortenText', () => {
  const cases: Array<[string, number, string]> = [
    ['short enough', 120, 'short enough'],
    ['exactly ten', 11, 'exactly ten'],
    ['one two three four five', 12, 'one two…'],
    ['one two, three four', 13, 'one two…'],
    ['abcdefghijklmnop', 8, 'abcdefg…'],
  ];
  for (const [text, maxLength, expected] of cases) {
    test(`${JSON.stringify(text)} to ${maxLength}`, () => {
      assert.equal(shortenText(text, maxLength), expected);
      assert.ok(shortenText(text, maxLength).length <= maxLength);
    });
  }
});

describe('plainInline', () => {
  const cases: Array<[string, string]> = [
    ['**bold** and __strong__', 'bold and strong'],
    ['_em_ and *em* and ~~gone~~', 'em and em and gone'],
    ['snake_case_name stays', 'snake_case_name stays'],
    ['![diagram](a.png) [docs](https://x.example "t")', 'diagram docs'],
    ['`npm i` <b>html</b>', 'npm i html'],
    ['a\\*b\\_c', 'a*b_c'],
  ];
  for (const [markdown, expected] of cases) {
    test(JSON.stringify(markdown), () => assert.equal(plainInline(markdown), expected));
  }
});
