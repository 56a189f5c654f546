/**
 * Creating, editing and deleting knowledge bases and experiences in the operator console, in
 * headless Chromium against the real server, at a desktop (1280×800) and a phone (390×844) width:
 * every field goes through the forms and is read back through the API exactly; a refused origin
 * shows the API's message beside its field and saves nothing; settings and action fields the form
 * does not show survive an edit; Save is disabled while saving; deleting asks first, then the API
 * answers 404; the embed snippet holds the experience id and Copy puts it on the clipboard; no
 * page scrolls sideways on the phone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { launchBrowser, type TestBrowser } from '../../../test/browser.ts';
import { assertFits, openSection, signInConsole, viewports, WAIT_MS, waitForText } from '../../../test/console-page.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';

const uuid = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/** The stored fields of an experience, without its id, workspace and times. */
function editable(experience: Record<string, unknown>) {
  const { id: _id, workspaceId: _workspace, createdAt: _created, updatedAt: _updated, ...fields } = experience;
  return fields;
}

/** Waits until the focused element is the field labelled `label` (or the button reading it): focus moves after a render. */
async function waitForFocus(page: Page, label: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  let last: string | undefined;
  while (Date.now() < deadline) {
    last = await page.evaluate(() => {
      const element = document.activeElement as HTMLInputElement | null;
      return element?.labels?.[0]?.textContent ?? (element?.tagName === 'BUTTON' ? element.textContent : element?.tagName) ?? undefined;
    });
    if (last === label) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`expected the focus on ${label}; it is on ${last}`);
}

describe(`console: create, edit and delete knowledge bases and experiences in Chromium (${engine})`, () => {
  let server: TestServer;
  let browser: TestBrowser;
  let page: Page;
  let token: string;

  before(async () => {
    server = await startTestServer({ INGESTION_WORKERS: '0' });
    const bundle = await server.request('GET', '/console.js');
    assert.equal(bundle.status, 200, 'dist/web/console.js is missing: run `npm run build` first');
    const workspaceId = await server.createWorkspace('console-edit');
    const credentials = await server.createClient(workspaceId, ['*']);
    token = await server.token(workspaceId, ['*']);
    browser = await launchBrowser({ viewport: viewports[0], permissions: ['clipboard-read', 'clipboard-write'] });
    page = browser.page;
    await signInConsole(page, server.url, credentials);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const get = async (path: string) => server.request('GET', path, { token });
  const fieldOf = (form: Locator, path: string) => form.locator(`.field[data-path="${path}"]`);

  for (const viewport of viewports) {
    const suffix = viewport.name;

    test(`knowledge base: create, edit (the API's refusal beside the field), delete after asking (${viewport.width}×${viewport.height})`, async () => {
      await page.setViewportSize(viewport);
      await openSection(page, 'Knowledge bases');
      // With the keyboard alone: the form opens in its name field, Tab walks the labelled fields to the button.
      await page.getByRole('button', { name: 'New knowledge base' }).press('Enter');
      const form = page.locator('form.edit-form');
      for (const [label, text] of [
        ['Name', `Handbook ${suffix}`],
        ['Description', 'Policies and how-tos'],
        ['Chunk size', '1200'],
        ['Chunk overlap', '150'],
      ]) {
        await waitForFocus(page, label!);
        await page.keyboard.type(text!);
        await page.keyboard.press('Tab');
      }
      await waitForFocus(page, 'Create knowledge base');
      await assertFits(page, 'the new knowledge base form');
      await page.keyboard.press('Enter');
      const row = page.locator('tr[data-knowledge-base-id]').filter({ hasText: `Handbook ${suffix}` });
      await waitForText(row, '1200 chars, 150 overlap');
      const knowledgeBaseId = (await row.getAttribute('data-knowledge-base-id'))!;
      const created = (await get(`/api/v2/knowledge-bases/${knowledgeBaseId}`)).body;
      assert.deepEqual(
        { name: created.name, description: created.description, chunkSize: created.chunkSize, chunkOverlap: created.chunkOverlap },
        { name: `Handbook ${suffix}`, description: 'Policies and how-tos', chunkSize: 1200, chunkOverlap: 150 },
      );

      await row.getByRole('link', { name: `Handbook ${suffix}` }).click();
      await page.getByRole('button', { name: 'Edit', exact: true }).click();
      await form.getByLabel('Name').fill(`Handbook ${suffix} (edited)`);
      await form.getByLabel('Description').fill('');
      await form.getByLabel('Chunk size').fill('600');
      await form.getByLabel('Chunk overlap').fill('700');
      await form.getByRole('button', { name: 'Save' }).click();
      // The service's own check (overlap below size), shown beside the overlap field; nothing is saved.
      await waitForText(fieldOf(form, '/chunkOverlap').locator('.field-error'), 'must be smaller than chunkSize (600)');
      assert.equal((await get(`/api/v2/knowledge-bases/${knowledgeBaseId}`)).body.name, `Handbook ${suffix}`);
      await assertFits(page, 'the knowledge base form with an error');
      await form.getByLabel('Chunk overlap').fill('50');
      await form.getByRole('button', { name: 'Save' }).click();
      await waitForText(page.getByRole('heading', { level: 2 }), `Entries of Handbook ${suffix} (edited)`);
      const edited = (await get(`/api/v2/knowledge-bases/${knowledgeBaseId}`)).body;
      assert.deepEqual(
        { name: edited.name, description: edited.description, chunkSize: edited.chunkSize, chunkOverlap: edited.chunkOverlap },
        { name: `Handbook ${suffix} (edited)`, description: '', chunkSize: 600, chunkOverlap: 50 },
      );

      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      const dialog = page.getByRole('alertdialog', { name: 'Delete' });
      await waitForText(dialog, 'This cannot be undone.');
      await assertFits(page, 'the delete question');
      await dialog.getByRole('button', { name: 'Keep it' }).click();
      assert.equal((await get(`/api/v2/knowledge-bases/${knowledgeBaseId}`)).status, 200);
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      await dialog.getByRole('button', { name: 'Delete knowledge base' }).click();
      await page.getByRole('heading', { name: 'Knowledge bases', level: 2 }).waitFor();
      assert.equal((await get(`/api/v2/knowledge-bases/${knowledgeBaseId}`)).status, 404);
    });

    test(`experience: create with every field, refuse a bad origin, edit each group, embed snippet, delete (${viewport.width}×${viewport.height})`, async () => {
      await page.setViewportSize(viewport);
      const kbName = `Support articles ${suffix}`;
      const kb = await server.request('POST', '/api/v2/knowledge-bases', { token, body: { name: kbName } });
      const other = await server.request('POST', '/api/v2/knowledge-bases', { token, body: { name: `Release notes ${suffix}` } });
      await openSection(page, 'Experiences');
      await page.getByRole('link', { name: 'New experience' }).click();
      const form = page.locator('form.experience-form');
      await waitForFocus(page, 'Name');
      await form.getByLabel('Name', { exact: true }).fill(`Help desk ${suffix}`);
      await form.getByLabel('Instructions').fill('Answer briefly.');
      await form.getByLabel('Fallback message').fill('Ask our team instead.');
      await form.getByRole('group', { name: 'Knowledge bases' }).getByRole('checkbox', { name: kbName }).check();
      await form.getByLabel('Allowed origins').fill('https://www.example.com\n\nhttps://*.example.org');
      await form.getByLabel('Require a token').check();
      await form.getByLabel('Queries per minute per IP').fill('30');
      await form.getByLabel('Queries per minute per session').fill('10');
      await form.getByLabel('Chunks per answer (topK)').fill('7');
      await form.getByLabel('Minimum score').fill('0.25');
      await form.getByLabel('Generator').selectOption('extractive');
      await form.getByLabel('Model', { exact: true }).fill('gpt-4o-mini');
      await form.getByLabel('Assistant name').fill('Ada');
      await form.getByLabel('Avatar URL').fill('https://cdn.example.com/ada.png');
      await form.getByLabel('Greeting').fill('Hi! Ask me anything.');
      await form.getByLabel('Starter question 1').fill('How do I reset my password?');
      await form.getByLabel('Starter question 3').fill('Where is my invoice?');
      await form.getByLabel('Image hosts').fill('images.example.com\n*.cdn.example.com');
      for (let index = 0; index < 4; index += 1) await form.getByRole('button', { name: 'Add action' }).click();
      const action = (number: number) => form.getByRole('group', { name: new RegExp(`^Action ${number}`) });
      await action(1).getByLabel('Button label').fill('Talk to a person');
      await action(1).getByLabel('Agent type').fill('support');
      await action(2).getByLabel('Button label').fill('Status page');
      await action(2).getByLabel('Type', { exact: true }).selectOption('open_url');
      await action(2).getByLabel('URL').fill('https://status.example.com');
      await action(2).getByLabel('Opens in').selectOption('_blank');
      await action(3).getByLabel('Id').fill('upgrade');
      await action(3).getByLabel('Button label').fill('Upgrade');
      await action(3).getByLabel('Type', { exact: true }).selectOption('send_event');
      await action(3).getByLabel('Event name').fill('upgrade_clicked');
      await action(3).getByLabel('Payload (JSON object)').fill('{"plan": "pro"}');
      await action(3).getByLabel('Icon, style, behavior, visibility (JSON)').fill('{"icon": {"type": "emoji", "content": "⭐"}, "style": {"variant": "primary"}}');
      await action(4).getByLabel('Button label').fill('Reset password');
      await action(4).getByLabel('Type', { exact: true }).selectOption('send_query');
      await action(4).getByLabel('Question').fill('How do I reset my password?');
      await assertFits(page, 'the new experience form');
      await form.getByRole('button', { name: 'Create experience' }).click();
      await page.waitForURL(new RegExp(`#/experiences/${uuid}$`));
      const experienceId = new URL(page.url()).hash.split('/')[2]!;

      const expected = {
        name: `Help desk ${suffix}`,
        knowledgeBaseIds: [kb.body.id],
        requireAuth: true,
        allowedOrigins: ['https://www.example.com', 'https://*.example.org'],
        instructions: 'Answer briefly.',
        fallbackMessage: 'Ask our team instead.',
        actions: [
          { id: 'action-1', label: 'Talk to a person', action: { type: 'trigger_handover', agentType: 'support' } },
          { id: 'action-2', label: 'Status page', action: { type: 'open_url', url: 'https://status.example.com', target: '_blank' } },
          {
            id: 'upgrade',
            label: 'Upgrade',
            action: { type: 'send_event', event: 'upgrade_clicked', payload: { plan: 'pro' } },
            icon: { type: 'emoji', content: '⭐' },
            style: { variant: 'primary' },
          },
          { id: 'action-4', label: 'Reset password', action: { type: 'send_query', query: 'How do I reset my password?' } },
        ],
        settings: {
          topK: 7,
          minScore: 0.25,
          llmProvider: 'extractive',
          llmModel: 'gpt-4o-mini',
          rateLimit: { ipPerMinute: 30, sessionPerMinute: 10 },
          widget: {
            assistantName: 'Ada',
            avatarUrl: 'https://cdn.example.com/ada.png',
            greeting: 'Hi! Ask me anything.',
            starterQuestions: ['How do I reset my password?', 'Where is my invoice?'],
            imageHosts: ['images.example.com', '*.cdn.example.com'],
          },
        },
        tools: [],
      };
      assert.deepEqual(editable((await get(`/api/v2/experiences/${experienceId}`)).body), expected);

      // The embed code: the widget tag with this id, copied to the clipboard; a note while a token is required.
      const embed = page.getByRole('region', { name: `Embed code for Help desk ${suffix}` });
      const snippet = `<script src="${server.url}/widget.js" data-experience-id="${experienceId}" async></script>`;
      await waitForText(embed, snippet);
      await waitForText(embed, 'This experience requires a token');
      await embed.getByRole('button', { name: 'Copy' }).click();
      await waitForText(embed.getByRole('button', { name: 'Copied' }), 'Copied');
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), snippet);
      await assertFits(page, 'the experience page');

      // A bad origin: the API's message beside the field, and nothing saved.
      await form.getByLabel('Name', { exact: true }).fill('Not saved');
      await form.getByLabel('Allowed origins').fill('https://www.example.com\nftp://files.example.com');
      await form.getByRole('button', { name: 'Save' }).click();
      const refused = await server.request('PATCH', `/api/v2/experiences/${experienceId}`, {
        token,
        body: { allowedOrigins: ['https://www.example.com', 'ftp://files.example.com'] },
      });
      assert.equal(refused.status, 400);
      assert.equal(refused.body.errors[0].path, '/allowedOrigins/1');
      await waitForText(fieldOf(form, '/allowedOrigins').locator('.field-error'), `ftp://files.example.com: ${refused.body.errors[0].message}`);
      assert.deepEqual(editable((await get(`/api/v2/experiences/${experienceId}`)).body), expected);
      await assertFits(page, 'the experience form with a refused origin');

      // Edit every group; the request waits, so Save is seen disabled while it is under way.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      await page.route(`**/api/v2/experiences/${experienceId}`, async (route) => {
        if (route.request().method() === 'PATCH') await held;
        await route.continue();
      });
      await form.getByLabel('Name', { exact: true }).fill(`Help desk ${suffix} v2`);
      await form.getByLabel('Instructions').fill('');
      await form.getByLabel('Fallback message').fill('No answer yet.');
      const kbs = form.getByRole('group', { name: 'Knowledge bases' });
      await kbs.getByRole('checkbox', { name: kbName }).uncheck();
      await kbs.getByRole('checkbox', { name: `Release notes ${suffix}` }).check();
      await form.getByLabel('Allowed origins').fill('');
      await form.getByLabel('Require a token').uncheck();
      await form.getByLabel('Queries per minute per IP').fill('');
      await form.getByLabel('Queries per minute per session').fill('5');
      await form.getByLabel('Chunks per answer (topK)').fill('3');
      await form.getByLabel('Minimum score').fill('');
      await form.getByLabel('Generator').selectOption('');
      await form.getByLabel('Model', { exact: true }).fill('');
      await form.getByLabel('Assistant name').fill('');
      await form.getByLabel('Greeting').fill('Hello again.');
      await form.getByLabel('Starter question 1').fill('');
      await form.getByLabel('Starter question 4').fill('Can I talk to a person?');
      await form.getByLabel('Image hosts').fill('');
      await action(4).getByRole('button', { name: 'Move up' }).click();
      await action(1).getByRole('button', { name: 'Remove action 1' }).click();
      await action(1).getByLabel('URL').fill('https://status.example.net');
      await form.getByRole('button', { name: 'Save' }).click();
      const saving = form.getByRole('button', { name: 'Saving…' });
      await saving.waitFor();
      assert.equal(await saving.isDisabled(), true, 'Save is disabled while saving');
      release();
      await waitForText(page.getByRole('status'), 'Saved.');
      await page.unroute(`**/api/v2/experiences/${experienceId}`);
      const second = { ...expected.actions[1]!, action: { type: 'open_url', url: 'https://status.example.net', target: '_blank' } };
      assert.deepEqual(editable((await get(`/api/v2/experiences/${experienceId}`)).body), {
        name: `Help desk ${suffix} v2`,
        knowledgeBaseIds: [other.body.id],
        requireAuth: false,
        allowedOrigins: [],
        instructions: '',
        fallbackMessage: 'No answer yet.',
        actions: [second, expected.actions[3], expected.actions[2]],
        settings: {
          topK: 3,
          rateLimit: { sessionPerMinute: 5 },
          widget: { avatarUrl: 'https://cdn.example.com/ada.png', greeting: 'Hello again.', starterQuestions: ['Where is my invoice?', 'Can I talk to a person?'] },
        },
        tools: [],
      });
      await page.getByRole('region', { name: `Embed code for Help desk ${suffix} v2` }).waitFor();
      assert.equal(await page.getByText('This experience requires a token').count(), 0, 'no token note once requireAuth is off');

      // Fields the form does not show survive: an action's own extra field, and (as a newer service
      // might answer) an unknown settings key, which is sent back with the changed one.
      const patched = await server.request('PATCH', `/api/v2/experiences/${experienceId}`, {
        token,
        body: { actions: [{ id: 'handover', label: 'Human', action: { type: 'trigger_handover', queue: 'tier-2' } }] },
      });
      assert.equal(patched.status, 200);
      await page.route(`**/api/v2/experiences/${experienceId}`, async (route) => {
        if (route.request().method() !== 'GET') return route.continue();
        const response = await route.fetch();
        const body = await response.json();
        await route.fulfill({ response, json: { ...body, settings: { ...body.settings, futureKey: { kept: true } } } });
      });
      await page.reload();
      await form.getByLabel('Chunks per answer (topK)').fill('4');
      const request = page.waitForRequest((sent) => sent.method() === 'PATCH');
      await form.getByRole('button', { name: 'Save' }).click();
      const sent = (await request).postDataJSON();
      assert.deepEqual(sent, { settings: { ...patched.body.settings, topK: 4, futureKey: { kept: true } } }, 'only settings changed, merged');
      // The real service does not know the key: its refusal is shown, and nothing is saved.
      await waitForText(page.locator('form.experience-form .notice.error'), '400');
      await page.unroute(`**/api/v2/experiences/${experienceId}`);
      await page.reload();
      await form.getByLabel('Name', { exact: true }).fill(`Help desk ${suffix} v3`);
      await form.getByRole('button', { name: 'Save' }).click();
      await waitForText(page.getByRole('status'), 'Saved.');
      const kept = (await get(`/api/v2/experiences/${experienceId}`)).body;
      assert.equal(kept.name, `Help desk ${suffix} v3`);
      assert.deepEqual(kept.actions, patched.body.actions);
      assert.deepEqual(kept.settings, patched.body.settings);

      // The list shows the snippet too; delete asks first, then the API answers 404.
      await openSection(page, 'Experiences');
      const card = page.locator(`article[data-experience-id="${experienceId}"]`);
      await waitForText(card, `data-experience-id="${experienceId}"`);
      await assertFits(page, 'the experience list');
      await card.getByRole('link', { name: 'Edit' }).click();
      await page.getByRole('button', { name: 'Delete experience' }).click();
      const dialog = page.getByRole('alertdialog', { name: 'Delete experience' });
      await dialog.getByRole('button', { name: 'Keep it' }).click();
      assert.equal((await get(`/api/v2/experiences/${experienceId}`)).status, 200);
      await page.getByRole('button', { name: 'Delete experience' }).click();
      await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
      await page.getByRole('heading', { name: 'Experiences', level: 2 }).waitFor();
      assert.equal((await get(`/api/v2/experiences/${experienceId}`)).status, 404);
      assert.equal(await page.locator(`article[data-experience-id="${experienceId}"]`).count(), 0);
      // Chromium logs each refused request (the 400s above); no script errors.
      assert.deepEqual(browser.pageErrors.filter((message) => !message.includes('the server responded with a status of')), []);
    });
  }
});
