/**
 * How the widget shows an answer, in Chromium at a desktop (1280×800) and a phone (390×844) size:
 * the start of a long answer stays in view, only the cited sources are listed (once), remote media
 * quoted from ingested content is never loaded, and a slow stream shows its progress and types in.
 * The answers come from the fake OpenAI-compatible server, so their length and pace are the test's.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import type { FakeOpenAi } from '../../../test/fake-openai.ts';
import { startTestServer } from '../../../test/harness.ts';
import { askWidget, openWidget, startWidgetService, type WidgetService } from '../../../test/widget-service.ts';

const SIZES = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];

/** Five distinct articles sharing the question's words, so an answer about parcels has five sources. */
const articles: [string, string][] = [
  ['Returning a parcel', 'A parcel return starts on your order page, where you choose the items to send back.'],
  ['Parcel labels', 'Print the return label at home or show the QR code at the post office counter.'],
  ['Parcel tracking', 'The tracking number of a return parcel appears in your account once the carrier scans it.'],
  ['Damaged parcels', 'Photograph a damaged parcel before you open it; we replace the contents at no cost.'],
  ['Parcel lockers', 'A parcel locker keeps your return for three days and accepts parcels up to 20 kg.'],
];
const records = articles.map(([title, content], index) => ({ id: `parcel-${index + 1}`, title, url: `https://shop.example/help/parcel-${index + 1}`, content }));

const actions = [
  { id: 'delivery', label: 'Delivery times', action: { type: 'send_query', query: 'How long does delivery take?' } },
  { id: 'human', label: 'Talk to a person', action: { type: 'trigger_handover', agentType: 'support' }, visibility: { when: 'always' } },
  { id: 'coupon', label: 'Get a coupon', action: { type: 'send_event', event: 'coupon_requested' } },
];

const QUESTION = 'How does a parcel return work with the label and tracking?';

/**
 * An answer taller than the panel, even full-screen on a phone: seven paragraphs citing the five
 * sources, the first of which starts with FIRST_LINE.
 */
const FIRST_LINE = 'Start here: a parcel return takes three steps.';
const LONG_ANSWER = [
  `${FIRST_LINE} Print the return label from your order page and stick it on the parcel [1].`,
  ...[2, 3, 4, 5, 6, 7].map(
    (number) => `Step ${number}: the parcel tracking number shows where the parcel is, the locker keeps it for three days, and a damaged parcel is replaced at no cost [${Math.min(number, 5)}].`,
  ),
].join('\n\n');

let service: WidgetService | undefined;
let fake: FakeOpenAi;
/** A loopback server standing for a tracker: the answers' media point at it, and it counts what it is asked. */
let tracker: Server;
const trackerHits: string[] = [];
let trackerUrl: string;

before(async () => {
  tracker = createServer((request, response) => {
    trackerHits.push(request.url ?? '');
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => tracker.listen(0, '127.0.0.1', resolve));
  trackerUrl = `http://127.0.0.1:${(tracker.address() as { port: number }).port}`;
  service = await startWidgetService(records, { name: 'parcels', settings: { llmProvider: 'openai', minScore: 0 }, actions }, startTestServer);
  ({ fake } = service);
});

after(async () => {
  await service?.close();
  tracker?.closeAllConnections();
  await new Promise((resolve) => tracker?.close(resolve));
});

type Box = { top: number; bottom: number };

/** The log's visible box, and the boxes of the newest question, its answer and the answer's first block. */
function layout(page: Page) {
  // No named helpers inside: the test's TypeScript loader would wrap them in a __name() the page lacks.
  return page.evaluate(() => {
    const root = document.querySelector('lore-chat')!.shadowRoot!;
    const log = root.querySelector('.log')!;
    const question = Array.from(root.querySelectorAll('.message.user')).at(-1)!;
    const answer = root.querySelector('article.assistant:last-of-type')!;
    const firstBlock = answer.querySelector('.markdown')!.firstElementChild!;
    const [logBox, questionBox, answerBox, firstLine] = [log, question, answer, firstBlock].map((element): Box => {
      const rect = element.getBoundingClientRect();
      return { top: rect.top, bottom: rect.bottom };
    });
    return {
      log: logBox!,
      question: questionBox!,
      answer: answerBox!,
      firstLine: firstLine!,
      firstLineText: firstBlock.textContent,
      atBottom: Math.abs(log.scrollHeight - log.clientHeight - log.scrollTop) <= 1,
    };
  });
}

for (const size of SIZES) {
  describe(`the widget at ${size.width}×${size.height} (${size.name})`, () => {
    let context: BrowserContext;
    let page: Page;
    before(async () => {
      ({ context, page } = await openWidget(service!, size));
    });
    after(async () => {
      await context?.close();
    });

    test('an answer taller than the panel keeps its question and first line in view; a short one is followed to the end', async () => {
      fake.chat.replies = [{ answer: LONG_ANSWER }];
      await askWidget(page, QUESTION);
      const answer = page.locator('lore-chat article.assistant').last();
      assert.equal(await answer.getByRole('list', { name: 'Sources' }).getByRole('link').count(), 5, 'the answer lists five sources');
      assert.ok((await answer.locator('.actions button').count()) >= 3, 'the answer has several buttons');
      const long = await layout(page);
      assert.ok(long.answer.bottom - long.answer.top > long.log.bottom - long.log.top, `the answer is taller than the view: ${JSON.stringify(long)}`);
      assert.ok(long.firstLineText!.startsWith(FIRST_LINE), long.firstLineText!);
      assert.ok(long.question.top >= long.log.top - 1, `the question is not above the view: ${JSON.stringify(long)}`);
      assert.ok(long.firstLine.top >= long.log.top && long.firstLine.top + 20 <= long.log.bottom, `the answer's first line is in view: ${JSON.stringify(long)}`);

      fake.chat.replies = [{ answer: 'Lockers keep a parcel for three days [1].' }];
      await askWidget(page, 'How long does a parcel locker keep it?');
      const short = await layout(page);
      assert.ok(short.atBottom, `a short answer is followed to the bottom: ${JSON.stringify(short)}`);
      assert.ok(short.question.top >= short.log.top - 1, `its question is in view: ${JSON.stringify(short)}`);
    });

    test('only the cited sources are listed, once: no "Open …" button repeats one; follow-ups read as questions', async () => {
      const query = page.waitForResponse((response) => response.url().endsWith('/api/v2/query'));
      fake.chat.replies = [{ answer: 'Print the return label from your order page [1]. The tracking number follows the parcel.' }];
      await askWidget(page, QUESTION);
      // What the service sent: five sources, an "Open …" button for the cited one, follow-ups.
      const done = JSON.parse(/event: done\ndata: (.*)\n/.exec(await (await query).text())![1]!);
      assert.equal(done.sources.length, 5, JSON.stringify(done.sources));
      const cited = done.sources.find((source: { number: number }) => source.number === 1);
      assert.ok(done.actions.some((action: any) => action.action.type === 'open_url' && action.action.url === cited.url), JSON.stringify(done.actions));

      const answer = page.locator('lore-chat article.assistant').last();
      const listed = answer.getByRole('list', { name: 'Sources' }).getByRole('link');
      assert.deepEqual(await listed.allInnerTexts(), [cited.title]);
      assert.equal(await listed.getAttribute('href'), cited.url);
      const buttons = await answer.locator('.actions button').allInnerTexts();
      const templates = actions.map((action) => action.label);
      assert.deepEqual(buttons.filter((label) => label.startsWith('Open ')), [], `no button repeats a source: ${buttons}`);
      const followUps = buttons.filter((label) => !templates.includes(label));
      assert.ok(followUps.length > 0, `there are follow-ups: ${buttons}`);
      for (const label of followUps) assert.match(label, /\?$/, `a follow-up reads as a question: ${buttons}`);

      // Asking a follow-up sends its question as it reads.
      fake.chat.replies = [{ answer: 'The locker keeps a parcel for three days.' }];
      const count = await page.locator('lore-chat article.assistant').count();
      await answer.getByRole('button', { name: followUps[0] }).click();
      await page.locator(`lore-chat article.assistant[aria-busy="false"] >> nth=${count}`).waitFor();
      assert.equal(await page.locator('lore-chat .message.user').last().innerText(), followUps[0]);
      // That answer cites nothing, so it lists no source.
      assert.equal(await page.locator('lore-chat article.assistant').last().getByRole('list', { name: 'Sources' }).count(), 0);
    });

    test('adjacent citations "[1][2]" and a citation before a colon are linked and listed, as the service counts them; a reference definition is not', async () => {
      const query = page.waitForResponse((response) => response.url().endsWith('/api/v2/query'));
      fake.chat.replies = [{ answer: 'Print the return label from your order page [1][2]. It comes in two forms [3]: a PDF and a QR code.\n\n[4]: https://shop.example/help' }];
      await askWidget(page, QUESTION);
      const done = JSON.parse(/event: done\ndata: (.*)\n/.exec(await (await query).text())![1]!);
      const expected = [1, 2, 3].map((number) => done.sources.find((source: { number: number }) => source.number === number));
      const answer = page.locator('lore-chat article.assistant').last();
      assert.deepEqual(await answer.getByRole('list', { name: 'Sources' }).getByRole('link').allInnerTexts(), expected.map((source) => source.title));
      const citations = await answer.locator('.markdown a').evaluateAll((links) => links.map((link) => [link.textContent, link.getAttribute('href')]));
      assert.deepEqual(citations, expected.map((source) => [`[${source.number}]`, source.url]));
    });

    test('images, SVG and other media quoted in an answer load nothing: an image is a link to it', async () => {
      trackerHits.length = 0;
      const media = [
        `![parcel label](${trackerUrl}/markdown.png) [1]`,
        `<img src="${trackerUrl}/raw.png" width="1" height="1">`,
        `<svg width="300" height="150"><image href="${trackerUrl}/svg-image.png" /><rect fill="url(${trackerUrl}/fill.svg)" /></svg>`,
        `<picture><source srcset="${trackerUrl}/source.png"><img src="${trackerUrl}/picture.png" alt="a parcel"></picture>`,
        `<video src="${trackerUrl}/clip.mp4" poster="${trackerUrl}/poster.png"></video><audio src="${trackerUrl}/sound.mp3"></audio>`,
        `<iframe src="${trackerUrl}/frame.html"></iframe><object data="${trackerUrl}/object.swf"></object><embed src="${trackerUrl}/embed.swf">`,
        `<div style="background-image: url(${trackerUrl}/style.png)">styled</div><table background="${trackerUrl}/table.png"><tr><td>cell</td></tr></table>`,
      ];
      fake.chat.replies = [{ answer: media.join('\n\n') }];
      await askWidget(page, QUESTION);
      const markdown = page.locator('lore-chat article.assistant').last().locator('.markdown');
      // Time for any fetch the browser would have started.
      await page.waitForTimeout(500);
      assert.deepEqual(trackerHits, [], 'the browser fetched nothing from the tracker');
      assert.equal(await markdown.locator('img, svg, picture, source, video, audio, iframe, object, embed, [style], [background]').count(), 0);
      const links = await markdown.getByRole('link').evaluateAll((elements) => elements.map((element) => [element.textContent, element.getAttribute('href')]));
      const host = new URL(trackerUrl).host;
      for (const expected of [
        ['parcel label', `${trackerUrl}/markdown.png`],
        [`image (${host})`, `${trackerUrl}/raw.png`],
        ['a parcel', `${trackerUrl}/picture.png`],
        [`video (${host})`, `${trackerUrl}/clip.mp4`],
        [`embedded page (${host})`, `${trackerUrl}/frame.html`],
      ]) {
        assert.ok(links.some((link) => link[0] === expected[0] && link[1] === expected[1]), `${expected} among ${JSON.stringify(links)}`);
      }
    });

    test('a slow stream of whole paragraphs shows its progress from the sending to the end, and types in', async () => {
      // The extractive generator's pace: a paragraph of about 200 characters at a time, with pauses.
      const paragraphs = [1, 2, 3].map((number) => `${number === 1 ? '' : '\n\n'}Paragraph ${number}: ${'the parcel return label is printed at home, '.repeat(4)}and the tracking follows it [${number}].`);
      const full = paragraphs.join('').replace(/\n\n/g, '').length;
      fake.chat.replies = [{ deltas: paragraphs, deltaDelayMs: 700 }];
      const index = await page.locator('lore-chat article.assistant').count();
      // Every frame: whether the answer exists, how much of its text shows, and whether the indicator shows.
      // A string, so that the test's TypeScript loader adds nothing the page lacks.
      await page.evaluate(`(() => {
        const root = document.querySelector('lore-chat').shadowRoot;
        window.frames_ = [];
        const sample = () => {
          const article = root.querySelectorAll('article.assistant')[${index}];
          const markdown = article && article.querySelector('.markdown');
          const typing = article && article.querySelector('.typing');
          window.frames_.push({ exists: Boolean(article), length: markdown ? markdown.textContent.length : 0, typing: Boolean(typing && typing.getBoundingClientRect().width > 0) });
          if (!article || article.getAttribute('aria-busy') === 'true') requestAnimationFrame(sample);
          else window.framesDone_ = true;
        };
        requestAnimationFrame(sample);
      })()`);
      await askWidget(page, QUESTION);
      // The sampler's last frame may come after the answer stopped being busy.
      await page.waitForFunction('window.framesDone_ === true');
      const frames = (await page.evaluate('window.frames_')) as { exists: boolean; length: number; typing: boolean }[];
      const answering = frames.filter((frame) => frame.exists);
      const during = answering.slice(0, -1);
      assert.ok(during.length > 30, `sampled the stream: ${during.length} frames`);
      assert.equal(during[0]!.length, 0, `the first frame after sending has no text yet: ${JSON.stringify(during.slice(0, 3))}`);
      const without = during.flatMap((frame, position) => (frame.typing ? [] : [`${position}: ${frame.length}`]));
      assert.deepEqual(without, [], `the indicator shows from the sending until the text is complete (${during.length} frames)`);
      assert.ok(during.some((frame) => frame.length > 0 && frame.length < full / 2), 'the indicator still shows beside the text shown so far');
      const last = answering.at(-1)!;
      // (textContent also counts the line ends between paragraphs.)
      assert.ok(last.length >= full, `the whole answer shows at the end: ${last.length} of ${full} characters`);
      assert.equal(last.typing, false, 'the indicator is gone at the end');
      const steps = answering.slice(1).map((frame, position) => frame.length - answering[position]!.length);
      // A paragraph is about 220 characters; a frame shows at most a twelfth of the backlog, and a busy
      // machine may fit two such steps between two samples.
      assert.ok(Math.max(...steps) <= 100, `no paragraph appears at once (largest step ${Math.max(...steps)} of ${full} characters): ${steps}`);
      assert.ok(new Set(answering.map((frame) => frame.length)).size >= 20, 'the text grows in many small steps');
    });
  });
}
