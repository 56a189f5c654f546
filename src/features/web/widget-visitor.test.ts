/**
 * What a visitor sees of an experience's widget settings, in Chromium at a desktop (1280×800) and
 * a phone (390×844) size, against a real lore service: the assistant's name and avatar, the
 * greeting and starter questions, a handover button before any question, images of the listed
 * hosts only, the full-screen panel on phones, the open panel kept across a reload, and a comment
 * after a thumbs down that reaches the database. Answers come from the fake OpenAI-compatible
 * server, so their text is the test's; the image hosts are answered by the browser context.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { crc32, deflateSync } from 'node:zlib';
import type { BrowserContext, Page } from 'playwright-core';
import type { TestBrowser } from '../../../test/browser.ts';
import type { FakeOpenAi } from '../../../test/fake-openai.ts';
import { startTestServer, type TestServer } from '../../../test/harness.ts';
import { shopArticles } from '../../../test/query-experience.ts';
import { startWidgetService, type WidgetService } from '../../../test/widget-service.ts';

const SIZES = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];

const widgetSettings = {
  assistantName: 'Aria',
  avatarUrl: 'https://cdn.shop.example/aria.png',
  greeting: 'Hi, I am Aria. Ask me about refunds, shipping or your order.',
  starterQuestions: ['How long do refunds take?', 'How long does delivery take?'],
  imageHosts: ['images.shop.example', '*.media.example'],
};
const handoverAction = { id: 'human', label: 'Talk to a person', action: { type: 'trigger_handover', agentType: 'support' }, visibility: { when: 'always' } };

/** A solid grey PNG, larger than the widget shows an image. */
function png(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bits per channel
  header[9] = 2; // RGB
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3, 0x90)]);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk('IHDR', header), chunk('IDAT', deflateSync(Buffer.concat(Array<Buffer>(height).fill(row)))), chunk('IEND', Buffer.alloc(0))]);
}
const PICTURE = png(900, 600);

let service: WidgetService | undefined;
let fake: FakeOpenAi;
let server: TestServer;
let browser: TestBrowser;
let token: string;
let experienceId: string;

before(async () => {
  service = await startWidgetService(shopArticles, { name: 'shop', actions: [handoverAction], settings: { llmProvider: 'openai', minScore: 0, widget: widgetSettings } }, startTestServer);
  ({ fake, server, browser, token, experienceId } = service);
});

after(() => service?.close());

/** What the visitor's browser asked of the outside world (answered here: there is no network). */
type Fetched = { url: string; referer: string | undefined };

/** A fresh visitor at one size on the demo page, panel closed; remote images are served or refused here. */
async function visitor(size: (typeof SIZES)[number]): Promise<{ context: BrowserContext; page: Page; fetched: Fetched[] }> {
  const context = await browser.browser.newContext({ viewport: { width: size.width, height: size.height } });
  const fetched: Fetched[] = [];
  await context.route(/^https:\/\//, async (route) => {
    const request = route.request();
    fetched.push({ url: request.url(), referer: request.headers().referer });
    const host = new URL(request.url()).hostname;
    if (host === 'cdn.shop.example' || host === 'images.shop.example' || host.endsWith('.media.example')) {
      await route.fulfill({ status: 200, contentType: 'image/png', body: PICTURE });
    } else await route.abort();
  });
  const page = await context.newPage();
  await page.goto(`${server.url}/demo?experienceId=${experienceId}`);
  await page.locator('lore-chat .launcher').waitFor();
  return { context, page, fetched };
}

/** Runs `steps` as a fresh visitor at `size`, then closes the visitor's browser context. */
async function visit(size: (typeof SIZES)[number], steps: (visitor: { context: BrowserContext; page: Page; fetched: Fetched[] }) => Promise<void>): Promise<void> {
  const started = await visitor(size);
  try {
    await steps(started);
  } finally {
    await started.context.close();
  }
}

async function openPanel(page: Page): Promise<void> {
  await page.locator('lore-chat .launcher').click();
  await panel(page).waitFor();
  // The heading turns from data-title into the assistant's name once the configuration is read.
  await page.locator('lore-chat .header h2', { hasText: 'Aria' }).waitFor();
}

const panel = (page: Page) => page.locator('lore-chat .panel');
const answers = (page: Page) => page.locator('lore-chat article.assistant');

/** Waits until the `count`-th answer is complete. */
async function answered(page: Page, count: number): Promise<void> {
  await page.locator(`lore-chat article.assistant[aria-busy="false"] >> nth=${count - 1}`).waitFor();
}

async function ask(page: Page, text: string): Promise<void> {
  const count = await answers(page).count();
  await page.getByRole('textbox', { name: 'Your question' }).fill(text);
  await page.getByRole('textbox', { name: 'Your question' }).press('Enter');
  await answered(page, count + 1);
}

/** The conversation the widget keeps in localStorage. */
function stored(page: Page): Promise<any> {
  return page.evaluate((key) => JSON.parse(localStorage.getItem(key) ?? 'null'), `lore-widget:${experienceId}`);
}

/** Collects the lore:handover events of the page, as JSON (undefined fields left out). */
async function listenForHandovers(page: Page): Promise<() => Promise<unknown[]>> {
  await page.evaluate(`(() => {
    window.handovers_ = [];
    window.addEventListener('lore:handover', (event) => window.handovers_.push(JSON.parse(JSON.stringify(event.detail))));
  })()`);
  return async () => (await page.evaluate('window.handovers_')) as unknown[];
}

type Box = { x: number; y: number; width: number; height: number };

for (const size of SIZES) {
  describe(`the widget's experience settings at ${size.width}×${size.height} (${size.name})`, () => {
    test('before any question: the name as heading, the greeting with the avatar, the starter questions and a handover button', () =>
      visit(size, async ({ page }) => {
        const reads: string[] = [];
        page.on('request', (request) => {
          if (request.url().endsWith(`/api/v2/experiences/${experienceId}/widget`)) reads.push(request.method());
        });
        await page.waitForTimeout(200);
        assert.deepEqual(reads, [], 'the configuration is not read before the panel opens');
        await openPanel(page);
        assert.deepEqual(reads, ['GET']);

        assert.equal(await page.getByRole('dialog', { name: 'Aria' }).isVisible(), true, 'the dialog is named after the assistant');
        const greeting = page.locator('lore-chat .greeting');
        assert.equal(await greeting.innerText(), widgetSettings.greeting);
        const avatar = greeting.locator('img.avatar');
        assert.equal(await avatar.getAttribute('src'), widgetSettings.avatarUrl);
        assert.equal(await avatar.getAttribute('referrerpolicy'), 'no-referrer');
        await page.waitForFunction(() => {
          const image = document.querySelector('lore-chat')!.shadowRoot!.querySelector<HTMLImageElement>('.greeting img.avatar');
          return image !== null && image.complete && image.naturalWidth > 0;
        });
        const avatarBox = (await avatar.boundingBox())!;
        const bubbleBox = (await greeting.boundingBox())!;
        assert.ok(avatarBox.x + avatarBox.width <= bubbleBox.x && avatarBox.width <= 32, `the avatar is beside the greeting: ${JSON.stringify([avatarBox, bubbleBox])}`);

        const starters = page.getByRole('group', { name: 'Suggested questions' }).getByRole('button');
        assert.deepEqual(await starters.allInnerTexts(), widgetSettings.starterQuestions);

        const handover = panel(page).locator('.header').getByRole('button', { name: 'Talk to a person' });
        assert.equal(await handover.isVisible(), true);
        const box = (await handover.boundingBox())!;
        assert.ok(box.x >= 0 && box.x + box.width <= size.width && box.y >= 0 && box.y + box.height <= size.height, `the button is on screen: ${JSON.stringify(box)}`);
        assert.equal(await answers(page).count(), 0, 'no question was asked');
      }));

    test('a starter question is asked with one click, the starters vanish, and the answer has the avatar beside it', () =>
      visit(size, async ({ page }) => {
        await openPanel(page);
        fake.chat.replies = [{ answer: 'Refunds take 5 business days [1].' }];
        await page.getByRole('group', { name: 'Suggested questions' }).getByRole('button', { name: 'How long do refunds take?' }).click();
        await answered(page, 1);
        assert.deepEqual(await page.locator('lore-chat .message.user').allInnerTexts(), ['How long do refunds take?']);
        assert.equal(await answers(page).first().locator('.markdown').innerText(), 'Refunds take 5 business days [1].');
        assert.equal(await page.getByRole('group', { name: 'Suggested questions' }).count(), 0, 'the starters are gone');
        assert.equal(await answers(page).first().locator('img.avatar').getAttribute('src'), widgetSettings.avatarUrl);
        // The greeting stays the conversation's first message.
        assert.equal(await page.locator('lore-chat .log > :first-child').innerText(), widgetSettings.greeting);

        await panel(page).getByRole('button', { name: 'New conversation' }).click();
        assert.deepEqual(await page.getByRole('group', { name: 'Suggested questions' }).getByRole('button').allInnerTexts(), widgetSettings.starterQuestions, 'a new conversation offers them again');
      }));

    test('the handover button dispatches lore:handover as the answer\'s handover action does, before and after a question', () =>
      visit(size, async ({ page }) => {
        await openPanel(page);
        const handovers = await listenForHandovers(page);
        const headerButton = panel(page).locator('.header').getByRole('button', { name: 'Talk to a person' });
        await headerButton.click();
        const common = { type: 'trigger_handover', agentType: 'support', actionId: 'human', label: 'Talk to a person', experienceId };
        assert.deepEqual(await handovers(), [common], 'before any question: no session or query yet');

        fake.chat.replies = [{ answer: 'Delivery takes 2 to 4 days [1].' }];
        await ask(page, 'How long does delivery take?');
        await answers(page).last().getByRole('button', { name: 'Talk to a person' }).click();
        await headerButton.click();
        const { sessionId, messages } = await stored(page);
        const latest = { ...common, sessionId, queryId: messages.at(-1).queryId };
        assert.deepEqual((await handovers()).slice(1), [latest, latest], 'the same detail from the answer\'s button and the panel\'s');
        assert.equal(await page.locator('#events li').count(), 3, 'the demo page saw each one');
      }));

    test('an image from a listed host shows, constrained and without a Referer; one from another host, or an SVG, is a link', () =>
      visit(size, async ({ page, fetched }) => {
        await openPanel(page);
        fake.chat.replies = [
          {
            answer: [
              'The label looks like this [1]:',
              '![return label](https://images.shop.example/label.png)',
              '<img src="https://eu.media.example/box.png" alt="the box" srcset="https://tracker.example/2x.png 2x">',
              '![tracking pixel](https://tracker.example/pixel.png)',
              '![shop logo](https://images.shop.example/logo.svg)',
              '![plain http](http://images.shop.example/http.png)',
              '<svg width="300" height="150"><rect width="300" height="150" /></svg>',
            ].join('\n\n'),
          },
        ];
        await ask(page, 'What does the return label look like?');
        const markdown = answers(page).last().locator('.markdown');
        const images = markdown.locator('img');
        assert.deepEqual(await images.evaluateAll((elements) => elements.map((element) => [element.getAttribute('src'), element.getAttribute('alt'), element.getAttribute('referrerpolicy'), element.getAttribute('loading'), element.getAttribute('srcset')])), [
          ['https://images.shop.example/label.png', 'return label', 'no-referrer', 'lazy', null],
          ['https://eu.media.example/box.png', 'the box', 'no-referrer', 'lazy', null],
        ]);
        await page.waitForFunction(() =>
          Array.from(document.querySelector('lore-chat')!.shadowRoot!.querySelectorAll<HTMLImageElement>('article.assistant .markdown img')).every((image) => image.complete && image.naturalWidth > 0),
        );
        const markdownBox = (await markdown.boundingBox())!;
        for (const box of await images.evaluateAll((elements) => elements.map((element) => element.getBoundingClientRect().toJSON() as Box))) {
          assert.ok(box.height <= 240 && box.width <= markdownBox.width + 0.5 && box.height > 0, `the 900×600 picture is scaled down: ${JSON.stringify(box)}`);
        }
        const links = await markdown.getByRole('link').evaluateAll((elements) => elements.map((element) => [element.textContent, element.getAttribute('href')]));
        for (const expected of [
          ['tracking pixel', 'https://tracker.example/pixel.png'],
          ['shop logo', 'https://images.shop.example/logo.svg'],
          ['plain http', 'http://images.shop.example/http.png'],
        ]) {
          assert.ok(links.some((link) => link[0] === expected[0] && link[1] === expected[1]), `${expected} among ${JSON.stringify(links)}`);
        }
        assert.equal(await markdown.locator('svg').count(), 0, 'no inline SVG');
        const pictures = fetched.filter((request) => !request.url.endsWith('/aria.png'));
        assert.deepEqual(pictures.map((request) => request.url).sort(), ['https://eu.media.example/box.png', 'https://images.shop.example/label.png']);
        assert.deepEqual(
          pictures.map((request) => request.referer),
          [undefined, undefined],
          'the image hosts do not learn the page',
        );
      }));

    test(size.name === 'phone' ? 'the open panel covers the screen, ends above a keyboard, and closes from its header' : 'the open panel floats at the bottom right', () =>
      visit(size, async ({ context, page }) => {
        await openPanel(page);
        const box = (await panel(page).boundingBox())!;
        const launcher = page.locator('lore-chat .launcher');
        if (size.name === 'desktop') {
          assert.deepEqual(box, { x: size.width - 16 - 380, y: size.height - 84 - 600, width: 380, height: 600 });
          assert.equal(await launcher.isVisible(), true);
          return;
        }
        assert.deepEqual(box, { x: 0, y: 0, width: size.width, height: size.height }, 'the panel is the viewport');
        assert.equal(await launcher.isVisible(), false, 'no launcher over the panel');
        // An on-screen keyboard shrinks the visual viewport, not the layout viewport the panel is
        // placed in. Headless Chromium has no keyboard; a page scale of 2 shrinks the visual
        // viewport the same way (to 422 px): the panel and its question field stay inside it.
        const cdp = await context.newCDPSession(page);
        await cdp.send('Emulation.setPageScaleFactor', { pageScaleFactor: 2 });
        await page.waitForFunction(() => document.querySelector('lore-chat')!.shadowRoot!.querySelector('.panel')!.getBoundingClientRect().height === visualViewport!.height);
        const visible = await page.evaluate(() => ({ top: visualViewport!.offsetTop, bottom: visualViewport!.offsetTop + visualViewport!.height, height: visualViewport!.height }));
        assert.equal(visible.height, size.height / 2);
        const fieldBox = async () => (await page.getByRole('textbox', { name: 'Your question' }).boundingBox())!;
        let field = await fieldBox();
        assert.ok(field.y >= visible.top && field.y + field.height <= visible.bottom, `the field is in the visible part: ${JSON.stringify({ field, visible })}`);
        await cdp.send('Emulation.setPageScaleFactor', { pageScaleFactor: 1 });
        // A browser that shrinks the layout viewport instead (iOS with resizes-content): the same.
        await page.setViewportSize({ width: size.width, height: 500 });
        await page.waitForFunction(() => document.querySelector('lore-chat')!.shadowRoot!.querySelector('.panel')!.getBoundingClientRect().height === 500);
        field = await fieldBox();
        assert.ok(field.y >= 0 && field.y + field.height <= 500, `the field is in view: ${JSON.stringify(field)}`);
        const close = panel(page).locator('.header').getByRole('button', { name: 'Close chat' });
        await close.click();
        assert.equal(await panel(page).isVisible(), false);
        assert.equal(await launcher.isVisible(), true, 'the launcher is back');
      }));

    test('the open panel stays open across a reload, in this tab only; a closed one stays closed', () =>
      visit(size, async ({ context, page }) => {
        await openPanel(page);
        await page.reload();
        await page.locator('lore-chat .greeting').waitFor();
        assert.equal(await panel(page).isVisible(), true, 'open after the reload, without a click');
        assert.equal(await page.locator('lore-chat .header h2').innerText(), 'Aria');

        // A new tab of the same visitor starts with the launcher.
        const other = await context.newPage();
        await other.goto(`${server.url}/demo?experienceId=${experienceId}`);
        await other.locator('lore-chat .launcher').waitFor();
        assert.equal(await panel(other).isVisible(), false);

        await panel(page).locator('.header').getByRole('button', { name: 'Close chat' }).click();
        await page.reload();
        await page.locator('lore-chat .launcher').waitFor();
        assert.equal(await panel(page).isVisible(), false, 'closed after the reload');
      }));

    test('after a thumbs down the visitor may add a comment, which is stored with the rating', () =>
      visit(size, async ({ page }) => {
        await openPanel(page);
        // An answer taller than the panel, so that the comment field opens at the bottom of the view.
        const countries = ['Austria', 'Belgium', 'Denmark', 'Finland', 'France', 'Germany', 'Italy', 'Poland', 'Portugal', 'Spain', 'Sweden'];
        fake.chat.replies = [{ answer: ['Delivery takes 2 to 4 days in Europe [1]:', ...countries.map((country, index) => `- ${country}: ${2 + (index % 3)} days`)].join('\n') }];
        await ask(page, 'How long does delivery take to Norway?');
        const answer = answers(page).last();
        const comment = answer.getByRole('textbox', { name: 'What was wrong? (optional)' });
        assert.equal(await comment.count(), 0, 'no comment field before a thumbs down');
        await answer.getByRole('button', { name: 'Not helpful' }).click();
        await comment.waitFor();
        const text = 'Norway is not in the EU; the answer is about Europe in general, and Norway is not even in its list.';
        await comment.pressSequentially(text);
        // The field grows with the comment (up to six lines), so the visitor sees all of it.
        const field = await comment.evaluate((element) => ({ scrollHeight: element.scrollHeight, clientHeight: element.clientHeight }));
        assert.ok(field.scrollHeight <= field.clientHeight, `the whole comment is in view: ${JSON.stringify(field)}`);
        const [grown, log] = [(await comment.boundingBox())!, (await page.locator('lore-chat .log').boundingBox())!];
        assert.ok(grown.y >= log.y && grown.y + grown.height <= log.y + log.height, `the conversation follows the growing field: ${JSON.stringify({ grown, log })}`);
        const sent = page.waitForResponse((response) => response.url().endsWith('/feedback') && response.request().postDataJSON()?.comment !== undefined);
        await answer.getByRole('button', { name: 'Send' }).click();
        assert.equal((await sent).status(), 204);
        assert.equal(await answer.getByRole('status').innerText(), 'Thanks, your comment was sent.');
        assert.equal(await comment.count(), 0, 'the field is gone');

        const { sessionId } = await stored(page);
        const session = await server.request('GET', `/api/v2/sessions/${sessionId}`, { token });
        assert.equal(session.status, 200, session.text);
        const { rating, comment: storedComment } = session.body.messages[0].feedback;
        assert.deepEqual({ rating, comment: storedComment }, { rating: 'down', comment: text });
      }));
  });
}
