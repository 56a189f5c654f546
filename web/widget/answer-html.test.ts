import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import he from 'he';
import { ALLOWED_TAGS, answerHtml, MEDIA } from './answer-html.ts';

test('answer HTML: placeholders that are not allowed tags are text, inline, at a line start and in HTML blocks', () => {
  const cases: [markdown: string, html: string][] = [
    ['Run with --jobs=<n>: the count.', '<p>Run with --jobs=&lt;n>: the count.</p>\n'],
    ['<commit> is the commit to check out.', '<p>&lt;commit> is the commit to check out.</p>\n'],
    // Alone on its line, `<commit>` opened a block of HTML that ran to the blank line.
    ['<commit>\nThe commit.', '<p>&lt;commit&gt;<br>The commit.</p>\n'],
    ['> <commit>\n> quoted', '<blockquote>\n<p>&lt;commit&gt;<br>quoted</p>\n</blockquote>\n'],
    ['- <file>\n- two', '<ul>\n<li>&lt;file&gt;</li>\n<li>two</li>\n</ul>\n'],
    ['- <file>\n\n- two', '<ul>\n<li><p>&lt;file&gt;</p>\n</li>\n<li><p>two</p>\n</li>\n</ul>\n'],
    ['<div>\n<n> inside\n</div>', '<div>\n&lt;n> inside\n</div>'],
    ['<div>\n<div>\nx', '<p>&lt;div&gt;<br>&lt;div&gt;<br>x</p>\n'],
    ['<?xml version="1.0"?>', '<p>&lt;?xml version=&quot;1.0&quot;?&gt;</p>\n'],
    ['a < b and c > d', '<p>a &lt; b and c &gt; d</p>\n'],
  ];
  for (const [markdown, html] of cases) assert.equal(answerHtml(markdown), html, markdown);
});

test('answer HTML: an allowed tag is markup when it is closed (or void), text when it is not', () => {
  const cases: [markdown: string, html: string][] = [
    ['a <b>c', '<p>a &lt;b>c</p>\n'],
    ['git diff <a> <b>', '<p>git diff &lt;a> &lt;b></p>\n'],
    ['a <b>c</b> d', '<p>a <b>c</b> d</p>\n'],
    ['a </b> c', '<p>a &lt;/b> c</p>\n'],
    ['one<br>two', '<p>one<br>two</p>\n'],
    ['<p> para', '<p>&lt;p&gt; para</p>\n'],
    ['<details>\n<summary>More</summary>\n\nBody *x*\n\n</details>', '<details>\n<summary>More</summary><p>Body <em>x</em></p>\n</details>'],
    ['<kbd>a <n</kbd>', '<p><kbd>a &lt;n</kbd></p>\n'],
    // What a media element holds goes with it (the sanitizer turns it into a link).
    ['<picture><source srcset="x"><img src="y" alt="a"></picture>', '<p><picture><source srcset="x"><img src="y" alt="a"></picture></p>\n'],
    // A tag quoted inside a code span does not close one outside it.
    ['<b>bold `</b>`', '<p>&lt;b>bold <code>&lt;/b&gt;</code></p>\n'],
  ];
  for (const [markdown, html] of cases) assert.equal(answerHtml(markdown), html, markdown);
});

test('answer HTML: code keeps its placeholders, a closed comment stays hidden markup, <script> is text', () => {
  const cases: [markdown: string, html: string][] = [
    ['x `<n>` y', '<p>x <code>&lt;n&gt;</code> y</p>\n'],
    ['```\ngit show <commit>\n```', '<pre><code>git show &lt;commit&gt;\n</code></pre>\n'],
    ['a <!-- note --> b', '<p>a <!-- note --> b</p>\n'],
    ['x <!-- unterminated', '<p>x &lt;!-- unterminated</p>\n'],
    ['<!-- unterminated\n\nmore', '<p>&lt;!-- unterminated</p>\n<p>more</p>\n'],
    ['<script>alert(1)</script>', '<p>&lt;script&gt;alert(1)&lt;/script></p>\n'],
    ['x <script>alert(1)</script>', '<p>x &lt;script>alert(1)&lt;/script></p>\n'],
    ['<script>\n\n    code\n</script>', '<p>&lt;script&gt;</p>\n<pre><code>code\n</code></pre>\n<p>&lt;/script&gt;</p>\n'],
  ];
  for (const [markdown, html] of cases) assert.equal(answerHtml(markdown), html, markdown);
});

test('answer HTML: a line of words and placeholders reads as it was written, with no tag left', () => {
  const markup = new Set([...ALLOWED_TAGS, ...Object.keys(MEDIA)]);
  const word = fc.stringMatching(/^[a-z][a-z0-9=.:,-]{0,7}$/);
  const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/).filter((tag) => !markup.has(tag));
  const placeholder = fc.tuple(fc.constantFrom('<', '</'), name, fc.constantFrom('>', '/>')).map((parts) => parts.join(''));
  fc.assert(
    fc.property(fc.array(fc.oneof(word, placeholder), { minLength: 1, maxLength: 12 }), (parts) => {
      const line = parts.join(' ');
      const inner = /^<p>(.*)<\/p>\n$/.exec(answerHtml(line))?.[1];
      assert.ok(inner !== undefined && !inner.includes('<'), `${line}: ${answerHtml(line)}`);
      assert.equal(he.decode(inner), line);
    }),
  );
});

test('answer HTML: 1,000 lines of an unclosed <div> take one pass, not one a line', () => {
  const started = performance.now();
  const html = answerHtml(Array.from({ length: 1000 }, () => '<div>').join('\n'));
  // (ok rather than equal: the diff of 5,000 lines would bury the failure)
  assert.ok(html === `<p>${Array.from({ length: 1000 }, () => '&lt;div&gt;').join('<br>')}</p>\n`, `${html.slice(0, 120)}…`);
  // 1.4 s when each pass freed one line; about 20 ms in one pass (2 shared cores, 2026-12).
  assert.ok(performance.now() - started < 500, `${Math.round(performance.now() - started)} ms`);
});
