/**
 * The console's Webhooks page in headless Chromium against the real server and a receiver on
 * loopback (http and private targets allowed for the test), at a desktop (1280×800) and a phone
 * (390×844) width: an endpoint is created and its secret shown once, a job's delivery is listed
 * and redelivered, the endpoint is edited, disabled and enabled, its secret rotated, and it is
 * deleted after a confirmation; the page never scrolls sideways on the phone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { launchBrowser, type TestBrowser } from '../../../test/browser.ts';
import { assertFits, docsScreenshot, openSection, signInConsole, viewports, waitForText } from '../../../test/console-page.ts';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../test/fake-openai.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { createKnowledgeBase, submit } from '../../../test/ingestion.ts';
import { WebhookReceiver } from '../../../test/webhook-receiver.ts';


describe(`console Webhooks page in Chromium (${engine})`, () => {
  let server: TestServer;
  let fake: FakeOpenAi;
  let receiver: WebhookReceiver;
  let browser: TestBrowser;
  let page: Page;
  let token: string;
  let knowledgeBaseId: string;

  before(async () => {
    fake = await startFakeOpenAi();
    receiver = await WebhookReceiver.start();
    server = await startTestServer({ ...fakeEmbeddingsEnv(fake), WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' });
    const bundle = await server.request('GET', '/console.js');
    assert.equal(bundle.status, 200, 'dist/web/console.js is missing: run `npm run build` first');
    const workspaceId = await server.createWorkspace('console-webhooks');
    const credentials = await server.createClient(workspaceId, ['*']);
    token = await server.token(workspaceId, ['*']);
    knowledgeBaseId = await createKnowledgeBase(server, token, { name: 'Help center' });
    browser = await launchBrowser({ permissions: ['clipboard-read', 'clipboard-write'] });
    page = browser.page;
    await signInConsole(page, server.url, credentials);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await receiver?.close();
    await fake?.close();
  });

  for (const viewport of viewports) {
    test(`creates an endpoint (secret shown once), lists and redelivers a delivery, disables, enables, rotates and deletes it (${viewport.width}×${viewport.height})`, async () => {
      await page.setViewportSize(viewport);
      const url = `${receiver.url}?from=${viewport.name}`;
      await openSection(page, 'Webhooks');
      await page.getByRole('button', { name: 'New endpoint' }).click();
      if (viewport.name === 'desktop') {
        // The service's refusal is shown with its message.
        await page.getByLabel('URL').fill('ftp://example.com/hook');
        await page.getByRole('button', { name: 'Create endpoint' }).click();
        await waitForText(page.getByRole('alert'), '400 Bad Request.');
      }
      await page.getByLabel('URL').fill(url);
      await page.getByRole('checkbox', { name: 'job.started' }).check();
      assert.equal(await page.getByRole('checkbox', { name: 'job.completed' }).isChecked(), true, 'job.completed is checked by default');
      await page.getByLabel('Description').fill(`Receiver on the ${viewport.name}`);
      await page.getByRole('button', { name: 'Create endpoint' }).click();

      // The secret, once, with a copy button.
      const panel = page.getByRole('region', { name: 'Signing secret' });
      await waitForText(panel, 'you will not see it again');
      const secret = await panel.locator('code.secret').innerText();
      assert.match(secret, /^whsec_/);
      await panel.getByRole('button', { name: 'Copy' }).click();
      await waitForText(panel.getByRole('button', { name: 'Copied' }), 'Copied');
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
      receiver.secret = secret;
      const listed = await server.request('GET', '/api/v2/webhooks', { token });
      const endpoint = listed.body.webhooks.find((item: { url: string }) => item.url === url);
      assert.ok(endpoint, 'the endpoint was created');
      assert.deepEqual([...endpoint.events].sort(), ['job.completed', 'job.failed', 'job.started']);
      assert.equal(endpoint.secret, undefined);
      const row = page.locator(`tr[data-webhook-id="${endpoint.id}"]`);
      await waitForText(row, `Receiver on the ${viewport.name}`);
      await waitForText(row, 'enabled');
      await assertFits(page, 'the list with the secret');

      await page.reload();
      await waitForText(row, url);
      assert.equal(await page.getByRole('region', { name: 'Signing secret' }).count(), 0);
      assert.ok(!(await page.content()).includes(secret), 'the secret is gone after a reload');
      assert.ok(!JSON.stringify(await page.evaluate(() => ({ ...sessionStorage }))).includes(secret), 'and was never stored');

      // A job's events reach the receiver; the delivery is listed, then redelivered with the same webhook-id.
      const jobId = await submit(server, token, knowledgeBaseId, [{ id: `${viewport.name}-1`, content: 'An article about webhooks and retries.' }]);
      await receiver.event('job.completed', jobId);
      await row.getByRole('link', { name: url }).click();
      const delivery = page.locator('tr[data-delivery-id]').filter({ hasText: 'job.completed' });
      await waitForText(delivery, 'delivered');
      assert.match(await delivery.innerText(), new RegExp(`${jobId.slice(0, 8)}[\\s\\S]*delivered[\\s\\S]*\\b1\\b[\\s\\S]*204[\\s\\S]*\\d+ ms`));
      await waitForText(page.locator('tr[data-delivery-id]').filter({ hasText: 'job.started' }), 'delivered');
      await assertFits(page, 'the endpoint with its deliveries');
      // docs/console.md's picture of the page.
      if (viewport.name === 'desktop') await docsScreenshot(page, 'console-webhooks.png', { x: 0, y: 0, width: viewport.width, height: 540 });
      const webhookId = receiver.received.find((item) => item.payload?.type === 'job.completed' && item.payload.data.id === jobId)!.headers['webhook-id'];
      await delivery.getByRole('button', { name: 'Redeliver' }).click();
      await waitForText(delivery, 'queued');
      await receiver.waitFor('the redelivery', (received) => (received.filter((item) => item.headers['webhook-id'] === webhookId && item.payload).length === 2 ? true : undefined));
      await waitForText(delivery, /delivered[\s\S]*\b2\b/);
      // Its attempts and the body sent, read when opened.
      await delivery.locator('.attempt-log summary').click();
      await waitForText(delivery.locator('ol.attempts'), /204, \d+ ms[\s\S]*204, \d+ ms/);
      assert.match(await delivery.locator('pre.json').innerText(), new RegExp(`"type": "job.completed"[\\s\\S]*"id": "${jobId}"`));
      await assertFits(page, 'a delivery with its attempts and body');

      // Edit, disable, enable.
      await page.getByRole('button', { name: 'Edit' }).click();
      await page.getByLabel('Description').fill('Edited in the console');
      await page.getByRole('button', { name: 'Save' }).click();
      const facts = page.locator('dl.facts');
      await waitForText(facts, 'Edited in the console');
      await page.getByRole('button', { name: 'Disable' }).click();
      await waitForText(facts, 'disabled');
      assert.equal((await server.request('GET', `/api/v2/webhooks/${endpoint.id}`, { token })).body.enabled, false);
      await page.getByRole('button', { name: 'Enable' }).click();
      await waitForText(facts, 'enabled');
      assert.equal((await server.request('GET', `/api/v2/webhooks/${endpoint.id}`, { token })).body.enabled, true);

      // Rotate: asked first, then the new secret once.
      await page.getByRole('button', { name: 'Rotate secret' }).click();
      const rotate = page.getByRole('alertdialog', { name: 'Rotate secret' });
      await waitForText(rotate, 'Rotate the signing secret?');
      await rotate.getByRole('button', { name: 'Rotate' }).click();
      const rotated = page.getByRole('region', { name: 'Signing secret' });
      await waitForText(rotated, 'you will not see it again');
      const newSecret = await rotated.locator('code.secret').innerText();
      assert.match(newSecret, /^whsec_/);
      assert.notEqual(newSecret, secret);
      await rotated.getByRole('button', { name: 'Done, hide it' }).click();
      assert.equal(await page.getByRole('region', { name: 'Signing secret' }).count(), 0);

      // Delete: "Keep it" keeps it; confirming deletes it.
      await page.getByRole('button', { name: 'Delete' }).click();
      await page.getByRole('alertdialog', { name: 'Delete' }).getByRole('button', { name: 'Keep it' }).click();
      assert.equal((await server.request('GET', `/api/v2/webhooks/${endpoint.id}`, { token })).status, 200);
      await page.getByRole('button', { name: 'Delete' }).click();
      await page.getByRole('alertdialog', { name: 'Delete' }).getByRole('button', { name: 'Delete endpoint' }).click();
      await page.getByRole('heading', { name: 'Webhooks', level: 2 }).waitFor();
      await waitForText(page.locator('main'), 'No webhook endpoints yet.');
      assert.equal((await server.request('GET', `/api/v2/webhooks/${endpoint.id}`, { token })).status, 404);
      await assertFits(page, 'the empty list');
      // Chromium logs every 4xx answer (the refused URL; a poll of the endpoint in flight while it was deleted); no script errors.
      assert.deepEqual(browser.pageErrors.filter((message) => !message.includes('the server responded with a status of')), []);
    });
  }
});
