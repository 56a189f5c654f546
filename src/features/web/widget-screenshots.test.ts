/**
 * The pictures of the chat widget in docs/widget.md and the README, with the content a real
 * customer would have: a thermostat maker's help articles, an assistant with a name, an avatar, a
 * greeting and starter questions, and answers that cite their articles. Each test asserts that
 * what its picture shows is on screen; with LORE_SCREENSHOTS=1, on the embedded engine only, it
 * also retakes the picture into docs/images/ (a normal test run leaves the checkout clean).
 * Answers come from the fake OpenAI-compatible server; the avatar is answered by the browser.
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import type { TestBrowser } from '../../../test/browser.ts';
import type { FakeOpenAi } from '../../../test/fake-openai.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import type { GenericRecord } from '../../../test/ingestion.ts';
import { startWidgetService, type WidgetService } from '../../../test/widget-service.ts';

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const shooting = engine === 'pglite' && process.env.LORE_SCREENSHOTS === '1';

const help = 'https://help.hearth.example';
const articles: GenericRecord[] = [
  {
    id: 'compatibility',
    title: 'Will Hearth work with my boiler?',
    url: `${help}/install/compatibility`,
    contentType: 'markdown',
    content:
      'Hearth works with gas and oil combi boilers, system boilers and heat pumps that take an on/off (volt-free) or OpenTherm thermostat. ' +
      'Look for terminals marked RT, TT or OT in your boiler manual. Electric underfloor heating on 230 V needs the Hearth Relay.',
  },
  {
    id: 'wifi',
    title: 'How do I connect Hearth to Wi-Fi?',
    url: `${help}/setup/wifi`,
    contentType: 'markdown',
    content:
      'Hearth connects to 2.4 GHz Wi-Fi networks only. Open the Hearth app, tap Add device, and hold the dial for 5 seconds until its ring pulses blue. ' +
      'Then pick your network and enter its password.',
  },
  {
    id: 'reset',
    title: 'How do I reset the thermostat?',
    url: `${help}/troubleshooting/reset`,
    contentType: 'markdown',
    content:
      'If Hearth does not connect to Wi-Fi, or keeps dropping off, reset its network settings: hold the dial for 15 seconds until the ring turns white. ' +
      'Your heating schedule is kept.',
  },
  {
    id: 'schedules',
    title: 'How do I set a heating schedule?',
    url: `${help}/using/schedules`,
    contentType: 'markdown',
    content:
      'In the Hearth app open Schedule and drag the blocks of each day to the times you want the heating on. ' +
      'Copy a day to the rest of the week with the copy button. Eco mode lowers the temperature by 3 °C while nobody is home.',
  },
  {
    id: 'warranty',
    title: 'What does the warranty cover?',
    url: `${help}/support/warranty`,
    contentType: 'markdown',
    content: 'Every Hearth thermostat has a 2-year warranty covering faults in materials and workmanship. Installation by a registered engineer extends it to 5 years.',
  },
];

const widgetSettings = {
  assistantName: 'Juno',
  avatarUrl: 'https://cdn.hearth.example/juno.svg',
  greeting: 'Hi, I am Juno. Ask me about installing, connecting or scheduling your Hearth thermostat.',
  starterQuestions: ['Will Hearth work with my boiler?', 'How do I connect it to Wi-Fi?', 'How do I set a heating schedule?', 'What does the warranty cover?'],
};
const handoverAction = { id: 'support', label: 'Talk to a person', action: { type: 'trigger_handover', agentType: 'support' } };

/** Juno's avatar: a warm disc with a J, as a designer's SVG would be. */
const AVATAR = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 56 56">
<defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#fb923c"/><stop offset="1" stop-color="#e11d48"/></linearGradient></defs>
<circle cx="28" cy="28" r="28" fill="url(#g)"/><text x="28" y="38" text-anchor="middle" font-family="sans-serif" font-weight="700" font-size="28" fill="#fff">J</text></svg>`;

const wifiAnswer = [
  'Hearth connects to **2.4 GHz** networks only [1]:',
  '',
  '1. In the Hearth app, tap **Add device**.',
  '2. Hold the dial until its ring pulses blue.',
  '3. Pick your network and enter its password.',
  '',
  'Still offline? Hold the dial for 15 seconds to reset its network settings [2].',
].join('\n');

let service: WidgetService | undefined;
let fake: FakeOpenAi;
let server: TestServer;
let browser: TestBrowser;
let experienceId: string;

before(async () => {
  // The default minScore, as a customer would leave it: an answer lists what clears it.
  service = await startWidgetService(articles, { name: 'Hearth help', actions: [handoverAction], settings: { llmProvider: 'openai', widget: widgetSettings } }, startTestServer);
  ({ fake, server, browser, experienceId } = service);
});

after(() => service?.close());

/** Runs `steps` as a fresh visitor of the demo page at `size` with the panel open and configured. */
async function visit(size: { width: number; height: number }, steps: (page: Page) => Promise<void>): Promise<void> {
  const context: BrowserContext = await browser.browser.newContext({ viewport: size });
  try {
    await context.route('https://cdn.hearth.example/juno.svg', (route) => route.fulfill({ status: 200, contentType: 'image/svg+xml', body: AVATAR }));
    const page = await context.newPage();
    await page.goto(`${server.url}/demo?experienceId=${experienceId}`);
    await page.locator('lore-chat .launcher').click();
    await page.getByRole('dialog', { name: widgetSettings.assistantName }).waitFor();
    await steps(page);
  } finally {
    await context.close();
  }
}

const panel = (page: Page) => page.locator('lore-chat .panel');

/** Asks `question` by typing it and returns its answer once it is complete. */
async function ask(page: Page, question: string, answer: string): Promise<Locator> {
  fake.chat.replies = [{ answer }];
  await page.getByRole('textbox', { name: 'Your question' }).fill(question);
  await page.getByRole('textbox', { name: 'Your question' }).press('Enter');
  const done = page.locator('lore-chat article.assistant[aria-busy="false"]').last();
  await done.waitFor();
  return done;
}

/** Waits until every avatar in the panel has loaded, so that none is pictured as a broken image. */
async function avatarsLoaded(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const images = Array.from(document.querySelector('lore-chat')!.shadowRoot!.querySelectorAll<HTMLImageElement>('img.avatar'));
    return images.length > 0 && images.every((image) => image.complete && image.naturalWidth > 0);
  });
}

/** The cited sources' chips under an answer, as their titles. */
function chips(answer: Locator): Promise<string[]> {
  return answer.getByRole('list', { name: 'Sources' }).getByRole('link').allInnerTexts();
}

/**
 * Retakes docs/images/<name> when shooting: the whole page, or the floating panel and launcher
 * with a margin for the shadow, the host page's text hidden so that no cut-off line shows in it.
 */
async function picture(page: Page, name: string, area: 'panel' | 'page'): Promise<void> {
  if (!shooting) return;
  const path = fileURLToPath(new URL(`../../../docs/images/${name}`, import.meta.url));
  if (area === 'page') {
    await page.screenshot({ path });
    return;
  }
  const viewport = page.viewportSize()!;
  const box = (await panel(page).boundingBox())!;
  const margin = 24;
  const hostText = await page.addStyleTag({ content: 'body > :not(lore-chat) { visibility: hidden; }' });
  await page.screenshot({ path, clip: { x: box.x - margin, y: box.y - margin, width: viewport.width - box.x + margin, height: viewport.height - box.y + margin } });
  await hostText.evaluate((element) => (element as HTMLStyleElement).remove());
}

describe('the widget as pictured in docs/widget.md', () => {
  test('a new conversation on a desktop: the assistant named in the header with the handover button, the greeting with the avatar, four starter questions', () =>
    visit(DESKTOP, async (page) => {
      const header = panel(page).locator('.header');
      assert.equal(await header.locator('h2').innerText(), widgetSettings.assistantName);
      assert.equal(await header.getByRole('button', { name: 'Talk to a person' }).isVisible(), true);
      const greeting = page.locator('lore-chat .greeting');
      assert.equal(await greeting.innerText(), widgetSettings.greeting);
      assert.deepEqual(await page.getByRole('group', { name: 'Suggested questions' }).getByRole('button').allInnerTexts(), widgetSettings.starterQuestions);
      await avatarsLoaded(page);
      assert.equal(await greeting.locator('img.avatar').isVisible(), true);
      await picture(page, 'widget-greeting.png', 'panel');
    }));

  test('an answer on a desktop: Markdown steps, the cited articles as chips, a follow-up and the thumbs', () =>
    visit(DESKTOP, async (page) => {
      const answer = await ask(page, 'How do I connect it to Wi-Fi?', wifiAnswer);
      assert.match(await answer.locator('.markdown').innerText(), /^Hearth connects to 2\.4 GHz networks only \[1\]:\n+In the Hearth app, tap Add device\./);
      assert.equal(await answer.locator('.markdown ol li').count(), 3);
      assert.deepEqual(await chips(answer), ['How do I connect Hearth to Wi-Fi?', 'How do I reset the thermostat?']);
      const feedback = answer.getByRole('group', { name: 'Was this answer helpful?' });
      assert.equal(await feedback.getByRole('button', { name: 'Helpful', exact: true }).isVisible(), true);
      assert.equal(await feedback.getByRole('button', { name: 'Not helpful' }).isVisible(), true);
      await avatarsLoaded(page);
      await picture(page, 'widget-answer.png', 'panel');
      // The README's picture: the same conversation on the host page.
      await picture(page, 'widget.png', 'page');
    }));

  test('on a phone the panel covers the screen, with the answer to a starter question', () =>
    visit(PHONE, async (page) => {
      fake.chat.replies = [
        {
          answer:
            'Yes, if it is a gas or oil combi or system boiler, or a heat pump, with an on/off or OpenTherm thermostat connection [1]. ' +
            'Look for terminals marked **RT**, **TT** or **OT** in its manual. Electric underfloor heating needs the Hearth Relay [1].',
        },
      ];
      await page.getByRole('group', { name: 'Suggested questions' }).getByRole('button', { name: 'Will Hearth work with my boiler?' }).click();
      const answer = page.locator('lore-chat article.assistant[aria-busy="false"]').last();
      await answer.waitFor();
      assert.deepEqual(await chips(answer), ['Will Hearth work with my boiler?']);
      assert.deepEqual(await panel(page).boundingBox(), { x: 0, y: 0, ...PHONE }, 'the panel is the screen');
      const field = (await page.getByRole('textbox', { name: 'Your question' }).boundingBox())!;
      assert.ok(field.y + field.height <= PHONE.height, `the question field is on screen: ${JSON.stringify(field)}`);
      await avatarsLoaded(page);
      await picture(page, 'widget-phone.png', 'page');
    }));

  test('after a thumbs down, the comment field; the comment sent is thanked', () =>
    visit(DESKTOP, async (page) => {
      const answer = await ask(
        page,
        'Does my schedule still work when the Wi-Fi is down?',
        'Hearth connects to 2.4 GHz Wi-Fi networks only. To reconnect it, tap **Add device** in the Hearth app and hold the dial until its ring pulses blue [1].',
      );
      assert.deepEqual(await chips(answer), ['How do I connect Hearth to Wi-Fi?']);
      await answer.getByRole('button', { name: 'Not helpful' }).click();
      const comment = answer.getByRole('textbox', { name: 'What was wrong? (optional)' });
      // Typed as a visitor types: the field grows, and the conversation keeps what is typed in view.
      await comment.pressSequentially('I asked whether the heating still follows my schedule without Wi-Fi, not how to reconnect it.');
      const [field, log] = [(await comment.boundingBox())!, (await page.locator('lore-chat .log').boundingBox())!];
      assert.ok(field.y >= log.y && field.y + field.height <= log.y + log.height, `the whole field is in view: ${JSON.stringify({ field, log })}`);
      assert.equal(await answer.getByRole('button', { name: 'Send' }).isEnabled(), true);
      await avatarsLoaded(page);
      await picture(page, 'widget-comment.png', 'panel');
      const sent = page.waitForResponse((response) => response.url().endsWith('/feedback') && response.request().postDataJSON()?.comment !== undefined);
      await answer.getByRole('button', { name: 'Send' }).click();
      assert.equal((await sent).status(), 204);
      assert.equal(await answer.getByRole('status').innerText(), 'Thanks, your comment was sent.');
    }));
});
