/**
 * The chat widget in a real browser (Debian's Chromium through playwright-core) against the real
 * server: the demo page embeds it with one script tag, answers stream in over SSE, sources and
 * actions work, the conversation survives a reload, hostile answer content executes nothing, and
 * host-page CSS does not reach it. Also GET /widget.js and GET /demo over plain HTTP.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Fastify from 'fastify';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { assertExactError } from '../../../test/assert-error.ts';
import { launchBrowser, type TestBrowser } from '../../../test/browser.ts';
import { fakeChatEnv, fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../test/fake-openai.ts';
import { startTestServer, type TestServer } from '../../../test/harness.ts';
import { createKnowledgeBase, ingest } from '../../../test/ingestion.ts';
import { installErrorHandling } from '../../core/http/error-handler.ts';
import type { App } from '../../core/http/app-types.ts';
import { ErrorBodySchema } from '../../core/http/schemas.ts';
import { serveBundle, servePage } from './bundles.ts';
import { shopArticles } from '../../../test/query-experience.ts';

const records = [
  ...shopArticles,
  {
    // Content anyone feeding the knowledge base could write: the extractive answer quotes it.
    id: 'voucher',
    title: 'Voucher offer',
    contentType: 'markdown' as const,
    content: 'To redeem the voucher code <img src=x onerror="window.__pwned = \'img\'"> open [the voucher page](javascript:window.__pwned=\'link\') and enter the voucher code.',
  },
];

const actions = [
  { id: 'delivery', label: 'Delivery times', action: { type: 'send_query', query: 'How long does delivery take?' } },
  { id: 'human', label: 'Talk to a person', action: { type: 'trigger_handover', agentType: 'support' }, visibility: { when: 'always' } },
  { id: 'coupon', label: 'Get a coupon', action: { type: 'send_event', event: 'coupon_requested', payload: { campaign: 'spring' } } },
];

let fake: FakeOpenAi;
let server: TestServer;
let browser: TestBrowser;
let token: string;
let knowledgeBaseId: string;
let experienceId: string;

async function createExperience(extra: Record<string, unknown> = {}): Promise<string> {
  const answer = await server.request('POST', '/api/v2/experiences', {
    token,
    body: { name: 'shop assistant', knowledgeBaseIds: [knowledgeBaseId], settings: { llmProvider: 'extractive' }, actions, ...extra },
  });
  assert.equal(answer.status, 201, answer.text);
  return answer.body.id;
}

/** The widget's parts (playwright's CSS and role locators pierce its open shadow root). */
const widget = {
  launcher: (page: Page) => page.locator('lore-chat .launcher'),
  panel: (page: Page) => page.getByRole('dialog', { name: 'Ask a question' }),
  field: (page: Page) => page.getByRole('textbox', { name: 'Your question' }),
  answers: (page: Page) => page.locator('lore-chat article.assistant'),
  userMessages: (page: Page) => page.locator('lore-chat .message.user'),
};

/** Opens the demo page of an experience with the panel open. */
async function openDemo(page: Page, id = experienceId): Promise<void> {
  await page.goto(`${server.url}/demo?experienceId=${id}`);
  await widget.launcher(page).click();
  await widget.panel(page).waitFor();
}

/** Types a question, sends it with Enter, and waits until the answer (or its error) is complete. */
async function ask(page: Page, text: string): Promise<Locator> {
  const count = await widget.answers(page).count();
  await widget.field(page).fill(text);
  await widget.field(page).press('Enter');
  return finished(page, count + 1);
}

/** The `count`-th answer, once it is no longer streaming. */
async function finished(page: Page, count: number): Promise<Locator> {
  const answer = widget.answers(page).nth(count - 1);
  await page.locator(`lore-chat article.assistant[aria-busy="false"] >> nth=${count - 1}`).waitFor();
  return answer;
}

/** The conversation the widget keeps in localStorage for an experience. */
function stored(page: Page, id = experienceId): Promise<any> {
  return page.evaluate((key) => JSON.parse(localStorage.getItem(key) ?? 'null'), `lore-widget:${id}`);
}

before(async () => {
  fake = await startFakeOpenAi();
  // The fake's chat model serves the one experience that must fail upstream (502); the others use
  // the extractive generator, whose answers quote the ingested records.
  server = await startTestServer({ ...fakeEmbeddingsEnv(fake), ...fakeChatEnv(fake, 1000) });
  ({ token } = await server.tenant());
  knowledgeBaseId = await createKnowledgeBase(server, token);
  const job = await ingest(server, token, knowledgeBaseId, records);
  assert.equal(job.status, 'completed', JSON.stringify(job));
  experienceId = await createExperience();
  browser = await launchBrowser({ viewport: { width: 1024, height: 768 } });
});

after(async () => {
  await browser?.close();
  await server?.close();
  await fake?.close();
});

describe('GET /widget.js and GET /demo', () => {
  test('the widget bundle is JavaScript with an ETag and a short, revalidated cache; a matching If-None-Match is a 304', async () => {
    const first = await server.request('GET', '/widget.js');
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(first.headers.get('cache-control'), 'public, max-age=300, must-revalidate');
    assert.equal(first.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(first.headers.get('cross-origin-resource-policy'), 'cross-origin');
    const etag = first.headers.get('etag');
    assert.match(etag ?? '', /^"[\w-]{27}"$/);
    assert.ok(first.text.includes('lore-chat'), 'the bundle is the widget');

    const again = await server.request('GET', '/widget.js', { headers: { 'if-none-match': etag! } });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
    assert.equal(again.headers.get('etag'), etag);
    const changed = await server.request('GET', '/widget.js', { headers: { 'if-none-match': '"another-version"' } });
    assert.equal(changed.status, 200);
    assert.equal(changed.text, first.text);
  });

  test('/demo embeds the widget for the experience named in ?experienceId=', async () => {
    const answer = await server.request('GET', `/demo?experienceId=${experienceId}`);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.ok(answer.text.includes(`<script src="/widget.js" data-experience-id="${experienceId}" async></script>`), answer.text);
    assert.ok(answer.text.includes(`&#60;script src=&#34;${server.url}/widget.js&#34;`), 'the snippet to copy names this server');
  });

  test('/demo without experienceId shows the first-start experience (workspace and experience "default"), else is a 404', async () => {
    assertExactError(await server.request('GET', '/demo'), 404, '/demo');
    const workspaceId = await server.createWorkspace('default');
    const ownToken = await server.token(workspaceId, ['*']);
    const created = await server.request('POST', '/api/v2/experiences', { token: ownToken, body: { name: 'default', knowledgeBaseIds: [] } });
    assert.equal(created.status, 201, created.text);
    const answer = await server.request('GET', '/demo');
    assert.equal(answer.status, 200);
    assert.ok(answer.text.includes(`data-experience-id="${created.body.id}"`));
  });

  test('/demo with an experienceId that is not a UUID is a 400', async () => {
    assertExactError(await server.request('GET', '/demo?experienceId=nope'), 400, '/demo', {
      errors: [{ path: 'querystring:/experienceId', message: 'must be a UUID' }],
    });
  });

  test('a bundle that was not built is a 503 naming `npm run build`, for the script and for its page', async () => {
    const app = Fastify() as unknown as App;
    installErrorHandling(app);
    app.addSchema(ErrorBodySchema);
    serveBundle(app, 'not-built');
    servePage(app, '/not-built-page', { title: 'Not built', bundle: 'not-built-either' });
    await app.ready();
    for (const [url, name] of [['/not-built.js', 'not-built'], ['/not-built-page', 'not-built-either']] as const) {
      const response = await app.inject({ method: 'GET', url });
      const body = JSON.parse(response.body);
      assertExactError({ status: response.statusCode, headers: new Headers(), body, text: response.body }, 503, url);
      assert.equal(body.message, `The ${name} bundle is not built; run \`npm run build\`.`);
    }
    await app.close();
  });
});

describe('the chat widget in Chromium', () => {
  let context: BrowserContext;
  let page: Page;

  before(async () => {
    // One visitor (one localStorage) for the whole conversation.
    context = await browser.browser.newContext({ viewport: { width: 1024, height: 768 } });
    page = await context.newPage();
  });
  after(async () => {
    await context?.close();
  });

  test('asks a question and streams the answer, with its numbered source as a link', async () => {
    await page.goto(`${server.url}/demo?experienceId=${experienceId}`);
    const launcher = widget.launcher(page);
    assert.equal(await launcher.getAttribute('aria-label'), 'Open chat');
    assert.equal(await launcher.getAttribute('aria-expanded'), 'false');
    assert.equal(await widget.panel(page).isVisible(), false, 'the panel starts closed');
    await launcher.click();
    await widget.panel(page).waitFor();
    assert.equal(await launcher.getAttribute('aria-expanded'), 'true');
    assert.equal(await page.evaluate(() => document.querySelector('lore-chat')!.shadowRoot!.activeElement?.id), 'lore-question', 'the question field has the focus');

    const response = page.waitForResponse((candidate) => candidate.url().endsWith('/api/v2/query'));
    const answer = await ask(page, 'How long do refunds take?');
    const query = await response;
    assert.equal(query.status(), 200, await query.text());
    assert.equal(query.request().headers().accept, 'text/event-stream');
    assert.equal(query.headers()['content-type'], 'text/event-stream; charset=utf-8');
    const events = (await query.text()).split('\n').filter((line) => line.startsWith('event: '));
    assert.deepEqual([...new Set(events)], ['event: meta', 'event: delta', 'event: sources', 'event: actions', 'event: done']);

    assert.match(await answer.locator('.markdown').innerText(), /^Refunds are paid back to the original payment method within 5 business days after the returned item arrives\. ?\[1\]$/);
    const citation = answer.locator('.markdown a');
    assert.equal(await citation.innerText(), '[1]');
    assert.equal(await citation.getAttribute('href'), 'https://shop.example/help/refunds');
    // The cited source comes first (a weaker one may follow it).
    const source = answer.getByRole('list', { name: 'Sources' }).getByRole('link').first();
    assert.equal(await source.innerText(), 'Refund policy');
    assert.equal(await source.getAttribute('href'), 'https://shop.example/help/refunds');
    assert.equal(await source.getAttribute('target'), '_blank');
    assert.equal(await source.getAttribute('rel'), 'noopener noreferrer');

    const conversation = await stored(page);
    const session = await server.request('GET', `/api/v2/sessions/${conversation.sessionId}`, { token });
    assert.equal(session.status, 200, session.text);
    assert.equal(session.body.experienceId, experienceId);
    assert.deepEqual(session.body.messages.map((message: any) => message.text), ['How long do refunds take?']);
    assert.equal(conversation.messages[1].text, session.body.messages[0].answer, 'the streamed text is the stored answer');
  });

  test('a send_query action asks its question; thumbs up rates the answer', async () => {
    await widget.answers(page).last().getByRole('button', { name: 'Delivery times' }).click();
    const answer = await finished(page, 2);
    assert.equal(await widget.userMessages(page).last().innerText(), 'How long does delivery take?');
    assert.match(await answer.locator('.markdown').innerText(), /Delivery takes 2 to 4 days in Europe\./);

    const helpful = answer.getByRole('button', { name: 'Helpful', exact: true });
    assert.equal(await helpful.getAttribute('aria-pressed'), 'false');
    const feedback = page.waitForResponse((candidate) => candidate.url().endsWith('/feedback'));
    await helpful.click();
    assert.equal((await feedback).status(), 204);
    await answer.locator('button[aria-label="Helpful"][aria-pressed="true"]').waitFor();
    const { sessionId } = await stored(page);
    const session = await server.request('GET', `/api/v2/sessions/${sessionId}`, { token });
    assert.deepEqual(
      session.body.messages.map((message: any) => [message.text, message.feedback?.rating ?? null]),
      [
        ['How long do refunds take?', null],
        ['How long does delivery take?', 'up'],
      ],
    );
  });

  test('a reload shows the conversation and continues its session', async () => {
    const before = await stored(page);
    await page.reload();
    // The panel was open before the reload, so it still is (widget-visitor.test.ts).
    await widget.panel(page).waitFor();
    assert.deepEqual(await widget.userMessages(page).allInnerTexts(), ['How long do refunds take?', 'How long does delivery take?']);
    assert.equal(await widget.answers(page).count(), 2);

    await ask(page, 'Where is my refund paid?');
    const after = await stored(page);
    assert.equal(after.sessionId, before.sessionId);
    const session = await server.request('GET', `/api/v2/sessions/${after.sessionId}`, { token });
    assert.equal(session.body.queryCount, 3);
    assert.equal(session.body.messages[2].text, 'Where is my refund paid?');
  });

  test('trigger_handover and send_event dispatch lore:handover and lore:event on window with the action', async () => {
    await page.evaluate(() => {
      const received: unknown[] = [];
      Object.assign(window, { received });
      for (const type of ['lore:handover', 'lore:event']) {
        window.addEventListener(type, (event) => received.push({ type: event.type, detail: (event as CustomEvent).detail }));
      }
    });
    const last = widget.answers(page).last();
    await last.getByRole('button', { name: 'Talk to a person' }).click();
    await last.getByRole('button', { name: 'Get a coupon' }).click();
    const { sessionId, messages } = await stored(page);
    const queryId = messages.at(-1).queryId;
    const common = { experienceId, sessionId, queryId };
    assert.deepEqual(await page.evaluate(() => (window as unknown as { received: unknown[] }).received), [
      { type: 'lore:handover', detail: { type: 'trigger_handover', agentType: 'support', actionId: 'human', label: 'Talk to a person', ...common } },
      {
        type: 'lore:event',
        detail: { type: 'send_event', event: 'coupon_requested', payload: { campaign: 'spring' }, actionId: 'coupon', label: 'Get a coupon', ...common },
      },
    ]);
    // The demo page, standing for the host site, reacts to them.
    assert.equal(await page.locator('#events li').count(), 2);
  });

  test('"New conversation" clears the panel and the next question starts a new session', async () => {
    const before = await stored(page);
    await widget.panel(page).getByRole('button', { name: 'New conversation' }).click();
    assert.equal(await widget.answers(page).count(), 0);
    assert.equal((await stored(page)).sessionId, undefined);
    await ask(page, 'How long do refunds take?');
    const after = await stored(page);
    assert.ok(after.sessionId && after.sessionId !== before.sessionId);
    assert.equal(after.messages.length, 2);
  });

  test('keyboard: Tab stays in the open panel, Escape closes it and gives the focus back to the launcher', async () => {
    // Where the focus is: inside the panel or not, and which control (its label, else its id).
    const focused = () =>
      page.evaluate(() => {
        const active = document.querySelector('lore-chat')!.shadowRoot!.activeElement as HTMLElement | null;
        if (!active) return 'outside the widget';
        return `${active.closest('.panel') ? 'panel' : 'outside the panel'}: ${active.getAttribute('aria-label') || active.id || active.textContent}`;
      });
    await widget.field(page).focus();
    // Around the panel once forward and once backward, and a little further each time.
    const stops = await page.locator('lore-chat .panel').locator('button:not([disabled]), a[href], textarea').count();
    const seen = new Set<string>();
    for (const key of ['Tab', 'Shift+Tab']) {
      for (let step = 0; step < stops + 2; step += 1) {
        await page.keyboard.press(key);
        seen.add(await focused());
      }
    }
    assert.deepEqual([...seen].filter((where) => !where.startsWith('panel: ')), [], 'the focus never left the panel');
    for (const control of ['New conversation', 'Close chat', 'lore-question', 'Helpful', 'Talk to a person', 'Refund policy']) assert.ok(seen.has(`panel: ${control}`), [...seen].join(', '));
    await page.keyboard.press('Escape');
    assert.equal(await widget.panel(page).isVisible(), false);
    assert.equal(await focused(), 'outside the panel: Open chat');
    await page.keyboard.press('Enter');
    await widget.panel(page).waitFor();
    assert.equal(await focused(), 'panel: lore-question');
  });
});

describe('options', () => {
  test('data-* options (here through window.LoreWidget.mount) set the title, placeholder, theme, accent color and open state', async () => {
    const page = await browser.context.newPage();
    try {
      await page.goto(`${server.url}/demo?experienceId=${experienceId}`);
      await widget.launcher(page).waitFor();
      await page.evaluate((id) => {
        document.querySelector('lore-chat')!.remove();
        const options = { experienceId: id, title: 'Shop help', placeholder: 'Your order question', theme: 'dark', accentColor: 'rgb(200, 0, 0)', open: 'true' };
        Object.assign(window, { mounted: window.LoreWidget!.mount(options) });
      }, experienceId);
      const panel = page.getByRole('dialog', { name: 'Shop help' });
      assert.equal(await panel.isVisible(), true, 'data-open="true" opens the panel');
      assert.equal(await widget.field(page).getAttribute('placeholder'), 'Your order question');
      assert.equal(await widget.launcher(page).evaluate((element) => getComputedStyle(element).backgroundColor), 'rgb(200, 0, 0)');
      assert.equal(await panel.evaluate((element) => getComputedStyle(element).backgroundColor), 'rgb(22, 27, 34)', 'the dark theme');
      assert.notEqual(await page.evaluate(() => document.querySelector('lore-chat')!.shadowRoot!.activeElement?.id), 'lore-question', 'opening on load does not take the focus');

      await page.evaluate(() => (window as unknown as { mounted: { unmount(): void } }).mounted.unmount());
      assert.equal(await page.locator('lore-chat').count(), 0);
    } finally {
      await page.close();
    }
  });
});

describe('hostile content and hostile host pages', () => {
  test('an answer quoting <img onerror> and a javascript: link executes nothing', async () => {
    const api = await server.request('POST', '/api/v2/query', { body: { experienceId, text: 'How do I redeem the voucher code?' } });
    assert.equal(api.status, 200, api.text);
    assert.ok(api.body.answer.includes('<img src=x onerror="window.__pwned = \'img\'">'), api.body.answer);
    assert.ok(api.body.answer.includes('(javascript:window.__pwned=\'link\')'), api.body.answer);

    const page = await browser.context.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    try {
      await openDemo(page);
      const answer = await ask(page, 'How do I redeem the voucher code?');
      const markdown = answer.locator('.markdown');
      // No image is rendered from an answer (widget-answers.test.ts); one without a web URL or alt text leaves nothing.
      assert.equal(await markdown.locator('img').count(), 0);
      const link = markdown.getByText('the voucher page');
      assert.equal(await link.getAttribute('href'), null, 'the javascript: URL is removed');
      await link.click();
      // Give an image error or a navigation the time to run what they would run.
      await page.waitForTimeout(300);
      assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned), undefined);
      assert.deepEqual(dialogs, []);
      assert.equal(await markdown.locator('[onerror], [onclick], script').count(), 0);
    } finally {
      await page.close();
    }
  });

  test('host-page CSS styling button, p and the root font size does not change the widget; it fits a 360 px screen', async () => {
    const page = await browser.context.newPage();
    await page.setViewportSize({ width: 360, height: 740 });
    try {
      await openDemo(page);
      await ask(page, 'How long do refunds take?');
      const measure = () =>
        page.evaluate(() => {
          const root = document.querySelector('lore-chat')!.shadowRoot!;
          const parts = ['.launcher', '.send', '.markdown p', '.header h2', '.panel', 'textarea', '.action'];
          return parts.map((selector) => {
            const element = root.querySelector(selector)!;
            const style = getComputedStyle(element);
            const box = element.getBoundingClientRect();
            return {
              selector,
              box: [box.x, box.y, box.width, box.height].map(Math.round),
              style: ['color', 'background-color', 'font-family', 'font-size', 'line-height', 'padding', 'margin', 'border', 'text-transform'].map((name) =>
                style.getPropertyValue(name),
              ),
            };
          });
        });
      const unstyled = await measure();
      const panel = unstyled.find((part) => part.selector === '.panel')!;
      assert.ok(panel.box[0]! >= 0 && panel.box[0]! + panel.box[2]! <= 360, `the panel fits 360 px: ${panel.box}`);

      await page.addStyleTag({
        content: `
          html { font-size: 40px !important; }
          * { font-family: "Comic Sans MS", cursive !important; color: #f0f !important; line-height: 4 !important; text-transform: uppercase !important; }
          button { background: red !important; color: yellow !important; padding: 40px !important; margin: 20px !important; border: 6px dashed lime !important; font-size: 30px !important; }
          p { font-size: 50px !important; margin: 100px !important; padding: 30px !important; background: black !important; }
          div, textarea { border: 5px solid orange !important; }`,
      });
      assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector('h1')!).textTransform), 'uppercase', 'the host CSS applies to the host page');
      assert.deepEqual(await measure(), unstyled);
    } finally {
      await page.close();
    }
  });
});

describe('errors are a friendly line in the panel', () => {
  async function errorLine(id: string): Promise<string> {
    const page = await browser.context.newPage();
    try {
      await openDemo(page, id);
      const answer = await ask(page, 'How long do refunds take?');
      return await answer.getByRole('alert').innerText();
    } finally {
      await page.close();
    }
  }

  test('401: the experience requires a token and the page has none', async () => {
    assert.equal(await errorLine(await createExperience({ requireAuth: true })), 'This assistant needs you to be signed in. Please sign in and try again.');
  });

  test('403: the page\'s origin is not allowed', async () => {
    assert.equal(await errorLine(await createExperience({ allowedOrigins: ['https://shop.example'] })), 'This assistant is not available on this site.');
  });

  test('404: the experience does not exist', async () => {
    assert.equal(await errorLine('00000000-0000-4000-8000-000000000000'), 'This assistant could not be found. It may have been removed.');
  });

  test('429: the visitor asked too often, with the wait from Retry-After', async () => {
    // A workspace of its own: the address budget is counted per workspace, and the others' tests spend theirs.
    const tenant = await server.tenant();
    const created = await server.request('POST', '/api/v2/experiences', {
      token: tenant.token,
      body: { name: 'busy', knowledgeBaseIds: [], fallbackMessage: 'No idea.', settings: { rateLimit: { ipPerMinute: 1 } } },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id;
    const page = await browser.context.newPage();
    try {
      await openDemo(page, id);
      assert.equal(await (await ask(page, 'How long do refunds take?')).locator('.markdown').innerText(), 'No idea.');
      const answer = await ask(page, 'How long does delivery take?');
      assert.match(await answer.getByRole('alert').innerText(), /^Too many questions at once\. Please wait \d+ seconds and try again\.$/);
    } finally {
      await page.close();
    }
  });

  test('502: the answer generator failed', async () => {
    const id = await createExperience({ settings: { llmProvider: 'openai' } });
    fake.chat.replies = [{ status: 500 }, { status: 500 }, { status: 500 }];
    assert.equal(await errorLine(id), 'The assistant is having trouble right now. Please try again in a moment.');
    fake.chat.replies = [];
  });
});
