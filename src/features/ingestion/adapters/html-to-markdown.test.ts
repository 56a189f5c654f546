import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import he from 'he';
import { entityEncodedHtmlToMarkdown, HTML_MAX_DEPTH, HtmlNestingError, nestsDeeper } from './html-to-markdown.ts';

/** Encodes HTML the way content-hub exports it. */
const encoded = (html: string) => he.escape(html);

describe('entityEncodedHtmlToMarkdown', () => {
  const cases: Array<{ name: string; data: string; expected: string }> = [
    { name: 'headings become ATX headings', data: encoded('<h1>Title</h1><h3>Sub</h3><p>Text</p>'), expected: '# Title\n\n### Sub\n\nText' },
    {
      name: 'a table becomes a GFM table',
      data: encoded('<table><thead><tr><th>Plan</th><th>Price</th></tr></thead><tbody><tr><td>Basic</td><td>$5</td></tr></tbody></table>'),
      expected: '| Plan | Price |\n| --- | --- |\n| Basic | $5  |',
    },
    {
      name: 'nested lists keep their nesting',
      data: encoded('<ul><li>One<ul><li>One.a</li></ul></li><li>Two</li></ul><ol><li>First</li><li>Second</li></ol>'),
      expected: '-   One\n    -   One.a\n-   Two\n\n1.  First\n2.  Second',
    },
    {
      name: 'links keep their target, with its encoded ampersand decoded',
      data: encoded('<p>See <a href="https://x.example/a?b=1&amp;c=2">the guide</a>.</p>'),
      expected: 'See [the guide](https://x.example/a?b=1&c=2).',
    },
    {
      name: 'inline code and a fenced block with its language',
      data: encoded('<p>Run <code>npm i</code>:</p><pre><code class="language-js">if (a &lt; b &amp;&amp; c) {\n  go();\n}</code></pre>'),
      expected: 'Run `npm i`:\n\n```js\nif (a < b && c) {\n  go();\n}\n```',
    },
    {
      name: 'double encoding: &amp;nbsp; is a space, &amp;lt; a literal <',
      data: 'A&amp;nbsp;B &amp;amp; C &amp;lt;tag&amp;gt;',
      expected: 'A B & C <tag>',
    },
    {
      name: 'numeric and named entities of the outer encoding',
      data: '&#x3C;p&#x3E;caf&eacute; &#8211; &quot;ok&quot;&#x3C;/p&#x3E;',
      expected: 'café – "ok"',
    },
    { name: 'script, style and noscript are dropped', data: encoded('<p>Kept</p><script>track()</script><style>p{}</style><noscript>no js</noscript>'), expected: 'Kept' },
    {
      name: 'an inline data image becomes its alt text, a linked image stays',
      data: encoded('<p><img src="data:image/png;base64,AAAA" alt="Diagram"> <img src="https://x.example/a.png" alt="Photo"></p>'),
      expected: 'Diagram ![Photo](https://x.example/a.png)',
    },
    { name: 'emphasis and strikethrough', data: encoded('<p><strong>b</strong> <em>i</em> <del>gone</del></p>'), expected: '**b** _i_ ~~gone~~' },
    {
      name: 'raw (never encoded) HTML is not decoded again, so encoded markup inside stays text',
      data: '<p>Type &lt;script&gt; literally</p>',
      expected: 'Type <script> literally',
    },
    { name: 'plain text without markup', data: 'Just text &amp; more', expected: 'Just text & more' },
    {
      name: 'a bare <pre> with highlighting spans (Sphinx, DocBook) is a fenced code block, not escaped prose',
      data: encoded('<div class="highlight"><pre><span class="k">def</span> f(n):\n    <span class="k">return</span> n * f(n-1)\n&gt;&gt;&gt; f(3)</pre></div>'),
      expected: '```\ndef f(n):\n    return n * f(n-1)\n>>> f(3)\n```',
    },
    {
      name: 'links within the page or to a relative path keep their text only; link titles are dropped',
      data: encoded('<p>See <a href="#module-x" title="x: the x module">x</a>, <a href="os.html#os.sep" title="os.sep">os.sep</a> and <a href="https://peps.python.org/pep-0412/" title="PEP">PEP 412</a>.</p>'),
      expected: 'See x, os.sep and [PEP 412](https://peps.python.org/pep-0412/).',
    },
    {
      name: 'definition terms become headings of their descriptions, one level deeper when nested',
      data: encoded('<dl><dt>work_mem (<code>integer</code>)</dt><dd><p>Sets memory.</p><dl><dt>Note</dt><dd>Per operation.</dd></dl></dd></dl>'),
      expected: '##### work_mem (`integer`)\n\nSets memory.\n\n###### Note\n\nPer operation.',
    },
    {
      name: 'an underscore inside a word is not escaped; one that could open emphasis, and other markup characters, are',
      data: encoded('<p>Call cached_property or _private and 2*3 [x]</p>'),
      expected: 'Call cached_property or \\_private and 2\\*3 \\[x\\]',
    },
    { name: 'empty data', data: '', expected: '' },
  ];
  for (const { name, data, expected } of cases) {
    test(name, () => assert.equal(entityEncodedHtmlToMarkdown(data), expected));
  }
});

describe('the nesting bound of HTML (issue 34, item 10)', () => {
  const nested = (depth: number, open = '<div>', close = '</div>') => `${open.repeat(depth)}Deep inside.${close.repeat(depth)}`;
  const cases: Array<{ name: string; html: string; deeper: boolean }> = [
    { name: `${HTML_MAX_DEPTH} nested divs are within it`, html: nested(HTML_MAX_DEPTH), deeper: false },
    { name: `${HTML_MAX_DEPTH + 1} nested divs are past it`, html: nested(HTML_MAX_DEPTH + 1), deeper: true },
    { name: 'unclosed spans nest, as in the parser', html: '<span>a'.repeat(HTML_MAX_DEPTH + 1), deeper: true },
    { name: 'an end tag closes what is left open inside its element', html: '<div><span>a</div>'.repeat(1000), deeper: false },
    { name: 'paragraphs and list items whose end tags are left out do not nest', html: `${'<p>para'.repeat(1000)}<ul>${'<li>item'.repeat(1000)}</ul>`, deeper: false },
    { name: 'void and self-closed elements do not nest', html: '<br><img src="x"><input>'.repeat(1000) + '<x-icon/>'.repeat(1000), deeper: false },
    { name: 'tags inside a script, a style or a comment are text', html: `<script>${'<div>'.repeat(1000)}</script><style>${'<b>'.repeat(1000)}</style><!--${'<div>'.repeat(1000)}-->`, deeper: false },
  ];
  for (const { name, html, deeper } of cases) {
    test(name, () => {
      assert.equal(nestsDeeper(html), deeper);
      assert.equal(nestsDeeper(encoded(html), 'encoded'), deeper, 'entity-encoded');
    });
  }

  test('HTML nested 100,000 deep fails in milliseconds, before it is decoded or parsed', () => {
    const data = encoded(nested(100_000));
    const started = performance.now();
    assert.throws(() => entityEncodedHtmlToMarkdown(data), (error) => {
      assert.ok(error instanceof HtmlNestingError);
      assert.equal(error.message, 'its elements nest more than 512 levels deep (the bound of nesting)');
      return true;
    });
    const elapsed = performance.now() - started;
    assert.ok(elapsed < 200, `took ${Math.round(elapsed)} ms`);
  });

  test('HTML nested to the bound still converts', () => {
    assert.equal(entityEncodedHtmlToMarkdown(nested(HTML_MAX_DEPTH)), 'Deep inside.');
  });
});
