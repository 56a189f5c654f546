/**
 * Issue 34, item 3: the widget showed an answer holding `--jobs=<n>` as `--jobs=:`. Answers quote
 * manual pages, full of `<commit>`, `<file>`, `<n>`; what is not an allowed tag shows as the text
 * it is, while the allowed markup, code and the sanitizing keep working. In Chromium at a desktop
 * (1280×800) and a phone (390×844) size; the answers come from the fake OpenAI-compatible server,
 * so their text is the test's. The page is the subject, not the database: the service runs on the
 * embedded engine, and the file runs once (scripts/test-files.js).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { viewports } from '../../../test/console-steps.ts';
import { startEmbeddedTestServer } from '../../../test/test-server.ts';
import { askWidget, openWidget, startWidgetService, type WidgetService } from '../../../test/widget-service.ts';

const records = [
  { id: 'git-gc', title: 'git gc', content: 'git gc --jobs=<n> packs loose objects with n threads.' },
  { id: 'git-checkout', title: 'git checkout', content: 'git checkout <commit> checks out the commit; <file> names a path.' },
];

const QUESTION = 'How do I run git gc with threads and check out a commit?';

/** What each answer shows: the Markdown the fake model answers, and its exact text on the page. */
const cases: { name: string; answer: string; shown: string }[] = [
  { name: '`<n>` inline', answer: 'Run git gc with --jobs=<n>: <n> is the number of threads.', shown: 'Run git gc with --jobs=<n>: <n> is the number of threads.' },
  {
    name: '`<commit>` at a line start, alone on its line and before text',
    answer: '<commit>\nThe commit to check out.\n\n<file> names a path, as in git checkout <commit> -- <file>.',
    shown: '<commit>\nThe commit to check out.\n\n<file> names a path, as in git checkout <commit> -- <file>.',
  },
  {
    name: '`a <b>c`: an allowed tag that is never closed is text; a closed one is bold',
    answer: 'Compare a <b>c with git diff <a> <b>.\n\nThe <b>bold</b> word stays bold.',
    shown: 'Compare a <b>c with git diff <a> <b>.\n\nThe bold word stays bold.',
  },
  {
    name: 'placeholders in code spans and fences',
    answer: 'Use `git log -n <n>`:\n\n```\ngit show <commit>:<file>\n```',
    // (a <pre>'s text ends with its last line's end)
    shown: 'Use git log -n <n>:\n\ngit show <commit>:<file>\n',
  },
  {
    name: 'a closed comment is hidden, an unclosed one is text',
    answer: 'Before<!-- a note for editors --> after.\n\nA comment starts with <!-- and ends later.',
    shown: 'Before after.\n\nA comment starts with <!-- and ends later.',
  },
  {
    name: '`<script>` shows as text and runs nothing',
    answer: '<script>window.__pwned = "block"</script>\n\nInline: <script>window.__pwned = "inline"</script> after.',
    shown: '<script>window.__pwned = "block"</script>\n\nInline: <script>window.__pwned = "inline"</script> after.',
  },
];

let service: WidgetService | undefined;

before(async () => {
  service = await startWidgetService(records, { name: 'git help', settings: { llmProvider: 'openai', minScore: 0 } }, startEmbeddedTestServer);
});

after(() => service?.close());

for (const viewport of viewports) {
  describe(`the widget's answers with placeholders at ${viewport.width}×${viewport.height} (${viewport.name})`, () => {
    let context: BrowserContext;
    let page: Page;
    const pageErrors: string[] = [];
    before(async () => {
      ({ context, page } = await openWidget(service!, viewport));
      page.on('pageerror', (error) => pageErrors.push(error.message));
    });
    after(() => context?.close());

    for (const { name, answer, shown } of cases) {
      test(name, async () => {
        service!.fake.chat.replies = [{ answer }];
        await askWidget(page, QUESTION);
        const markdown = page.locator('lore-chat article.assistant').last().locator('.markdown');
        assert.equal(await markdown.innerText(), shown);
      });
    }

    test('the allowed markup stays markup and nothing ran', async () => {
      const answers = page.locator('lore-chat article.assistant .markdown');
      // Of the third case: the closed <b> is an element, the unclosed one is not.
      assert.deepEqual(await answers.nth(2).locator('b').allInnerTexts(), ['bold']);
      assert.deepEqual(await answers.nth(3).locator('code').allInnerTexts(), ['git log -n <n>', 'git show <commit>:<file>\n']);
      assert.equal(await answers.locator('script, n, commit, file, a').count(), 0);
      assert.equal(await page.evaluate(() => (window as { __pwned?: string }).__pwned), undefined);
      assert.deepEqual(pageErrors, []);
    });
  });
}
