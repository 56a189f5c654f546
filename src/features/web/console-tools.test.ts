/**
 * The tools editor of the operator console (issue 37), in headless Chromium against the real
 * server and a loopback orders API: a tool added in the experience form is saved and read back
 * exactly, its header reaches the API when a question is answered, and reads back masked (an
 * empty field saying the stored value is kept, sent back as "***"); a parameters text that is not
 * JSON shows its error as it is typed; "Test this tool" shows the call and the filled answer, and
 * the API's refusal of bad arguments; a refused URL shows the API's message beside the URL field;
 * the session's transcript shows the call; the page never holds the header value.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { assertFits, type ConsoleSession, openSection, startConsoleSession, viewports, waitForText } from '../../../test/console-page.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { ORDERS_API_KEY, orderStatusTool, startOrdersApi, type OrdersApi } from '../../../test/orders-api.ts';

describe(`console: an experience's tools in Chromium (${engine})`, () => {
  let orders: OrdersApi;
  let session: ConsoleSession;
  let server: TestServer;
  let page: Page;
  let token: string;
  let experienceId: string;

  before(async () => {
    orders = await startOrdersApi();
    // The orders API listens on plain http on loopback, which tools may call only with these two.
    session = await startConsoleSession('console-tools', (overrides) => startTestServer({ ...overrides, TOOLS_ALLOW_HTTP: 'true', TOOLS_ALLOW_PRIVATE_TARGETS: 'true' }));
    ({ server, page, token } = session);
    await page.setViewportSize(viewports[0]!);
    const created = await server.request('POST', '/api/v2/experiences', { token, body: { name: 'Shop' } });
    assert.equal(created.status, 201, created.text);
    experienceId = created.body.id;
  });

  after(async () => {
    await session?.close();
    await orders?.close();
  });

  const experiencePath = () => `/api/v2/experiences/${experienceId}`;
  const stored = async () => (await server.request('GET', experiencePath(), { token })).body;
  const form = () => page.locator('form.experience-form');
  const tool = (number: number) => form().getByRole('group', { name: new RegExp(`^Tool ${number}`) });
  const fieldOf = (scope: Locator, path: string) => scope.locator(`.field[data-path="${path}"]`);
  const ask = async (text: string) => {
    const answer = await server.request('POST', '/api/v2/query', { body: { text, experienceId } });
    assert.equal(answer.status, 200, answer.text);
    return answer.body;
  };
  const openExperience = async () => {
    await openSection(page, 'Experiences');
    await page.locator(`article[data-experience-id="${experienceId}"]`).getByRole('link', { name: 'Edit' }).click();
    await form().getByRole('region', { name: 'Tools' }).waitFor();
  };
  /** Saves, and waits for the form the saved experience is read back into (a new element); gives the PATCH sent. */
  const save = async () => {
    const previous = await form().elementHandle();
    const response = page.waitForResponse((answer) => answer.request().method() === 'PATCH' && answer.url().endsWith(experiencePath()));
    await form().getByRole('button', { name: 'Save' }).click();
    assert.equal((await response).status(), 200);
    await page.waitForFunction((element) => !element?.isConnected, previous);
    await waitForText(page.getByRole('status').filter({ hasText: 'Saved.' }), 'Saved.');
    return (await response).request();
  };

  test('add a tool, save it, read it back; its header reaches the API and reads back masked', async () => {
    await openExperience();
    await waitForText(form().getByRole('region', { name: 'Tools' }), 'No tools');
    await form().getByRole('button', { name: 'Add tool' }).click();
    await waitForText(tool(1), 'Save the experience to test this tool.');
    const expected = orderStatusTool(orders);
    await tool(1).getByLabel('Tool name').fill(expected.name);
    await tool(1).getByLabel('Description').fill(expected.description);
    await tool(1).getByLabel('Method').selectOption('GET');
    await tool(1).getByLabel('URL').fill(expected.http.url);
    // Not JSON: the message shows beside the field as it is typed, and Save refuses to send it.
    const parameters = tool(1).getByLabel('Parameters (JSON Schema)');
    await parameters.fill('{"type": "object",');
    await waitForText(fieldOf(tool(1), '/tools/0/parameters').locator('.field-error'), 'is not valid JSON');
    await parameters.fill('["orderId"]');
    await waitForText(fieldOf(tool(1), '/tools/0/parameters').locator('.field-error'), 'must be a JSON object');
    await form().getByRole('button', { name: 'Save' }).click();
    await waitForText(form().locator('.notice.error'), 'Some actions or tools hold JSON that cannot be read; nothing was saved.');
    assert.deepEqual((await stored()).tools, []);
    await parameters.fill(JSON.stringify(expected.parameters));
    assert.equal(await fieldOf(tool(1), '/tools/0/parameters').locator('.field-error').count(), 0);
    await tool(1).getByRole('button', { name: 'Add header' }).click();
    await tool(1).getByLabel('Header 1 name').fill('X-Api-Key');
    await tool(1).getByLabel('Header 1 value').fill(ORDERS_API_KEY);
    await tool(1).getByLabel('Timeout (ms)').fill(String(expected.http.timeoutMs));
    await tool(1).getByLabel('Examples').fill(expected.examples.join('\n'));
    await tool(1).getByLabel('Answer template').fill(expected.answerTemplate);
    await assertFits(page, 'the tools editor');
    await save();

    const masked = { ...expected, http: { ...expected.http, headers: { 'X-Api-Key': '***' } } };
    const read = await server.request('GET', experiencePath(), { token });
    assert.deepEqual(read.body.tools, [masked]);
    assert.ok(!read.text.includes(ORDERS_API_KEY), 'reads never hold the header value');
    orders.requests.length = 0;
    assert.equal((await ask('Where is my order 12345?')).answer, 'Your order 12345 is shipped, expected on 2026-12-05.');
    assert.equal(orders.requests.at(-1)?.headers['x-api-key'], ORDERS_API_KEY, 'the stored header reached the API');

    // The saved form: the header value is an empty masked field that says the stored value is kept.
    const value = tool(1).getByLabel('Header 1 value');
    await waitForText(tool(1), 'Sample arguments');
    assert.equal(await value.inputValue(), '');
    assert.equal(await value.getAttribute('type'), 'password');
    assert.equal(await value.getAttribute('placeholder'), 'stored value — leave to keep');

    // A change elsewhere sends the header back as "***", and the stored value stays.
    await tool(1).getByLabel('Description').fill('Order lookup by number.');
    const sent = await save();
    assert.deepEqual(sent.postDataJSON(), { tools: [{ ...masked, description: 'Order lookup by number.' }] });
    orders.requests.length = 0;
    assert.equal((await ask('Where is my order 12345?')).answer, 'Your order 12345 is shipped, expected on 2026-12-05.');
    assert.equal(orders.requests.at(-1)?.headers['x-api-key'], ORDERS_API_KEY, 'the kept header reached the API');
  });

  test('"Test this tool" calls the saved tool and shows the call, the response and the answer', async () => {
    const panel = tool(1).getByRole('region', { name: 'Test order_status' });
    const sample = panel.getByLabel('Sample arguments (JSON)');
    // One key per required parameter to start from.
    assert.equal(await sample.inputValue(), JSON.stringify({ orderId: '' }, null, 2));
    await sample.fill('{"orderId": "12345"}');
    await panel.getByRole('button', { name: 'Test this tool' }).click();
    const result = panel.getByRole('status');
    await waitForText(result, 'Your order 12345 is shipped, expected on 2026-12-05.');
    const text = await result.innerText();
    for (const part of ['succeeded', 'HTTP status\n200', '{"orderId":"12345"}', '{"orderId":"12345","status":"shipped","eta":"2026-12-05"}']) {
      assert.ok(text.includes(part), `${part} in ${JSON.stringify(text)}`);
    }
    assert.match(text, /Latency\n\d+ ms/);

    // Arguments the parameters refuse: the API's message beside the sample.
    await sample.fill('{"orderId": "abc"}');
    await panel.getByRole('button', { name: 'Test this tool' }).click();
    const refused = await server.request('POST', `${experiencePath()}/tools/order_status/test`, { token, body: { arguments: { orderId: 'abc' } } });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.errors[0].path, '/arguments/orderId');
    await waitForText(fieldOf(panel, '/arguments').locator('.field-error'), `orderId: ${refused.body.errors[0].message}`);
    await sample.fill('{"orderId": ');
    await waitForText(fieldOf(panel, '/arguments').locator('.field-error'), 'is not valid JSON');
    assert.equal(await panel.getByRole('button', { name: 'Test this tool' }).isDisabled(), true);

    // A new header value typed in replaces the stored one: the API refuses it, and the test says so.
    await tool(1).getByLabel('Header 1 value').fill('a-wrong-key');
    await save();
    await sample.fill('{"orderId": "12345"}');
    await panel.getByRole('button', { name: 'Test this tool' }).click();
    await waitForText(panel.getByRole('status'), 'The API answered 401: {"error":"bad key"}');
    assert.match(await panel.getByRole('status').innerText(), /failed[\s\S]*HTTP status\n401/);
    await tool(1).getByLabel('Header 1 value').fill(ORDERS_API_KEY);
    await save();
  });

  test('a refused URL shows the API message beside the URL field and saves nothing', async () => {
    const before = await stored();
    await tool(1).getByLabel('URL').fill('ftp://orders.example.com/orders/{orderId}');
    await form().getByRole('button', { name: 'Save' }).click();
    const refused = await server.request('PATCH', experiencePath(), {
      token,
      body: { tools: [{ ...before.tools[0], http: { ...before.tools[0].http, url: 'ftp://orders.example.com/orders/{orderId}' } }] },
    });
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body.errors.map((error: { path: string }) => error.path), ['/tools/0/http/url']);
    await waitForText(fieldOf(tool(1), '/tools/0/http/url').locator('.field-error'), refused.body.errors[0].message);
    assert.deepEqual(await stored(), before);
    await assertFits(page, 'the tools editor with a refused URL');
  });

  test("the session's transcript shows the tool call; the page never holds the header value", async () => {
    const answer = await ask('Where is my order 12345?');
    await page.goto(`${server.url}/console#/sessions/${answer.sessionId}`);
    const calls = page.locator('.tool-calls');
    await waitForText(calls, 'Tool calls (1)');
    const text = await calls.innerText();
    for (const part of ['order_status', 'succeeded', 'HTTP status\n200', '{"orderId":"12345"}']) assert.ok(text.includes(part), `${part} in ${JSON.stringify(text)}`);
    await page.setViewportSize(viewports[1]!);
    await assertFits(page, 'a transcript with a tool call');
    await page.setViewportSize(viewports[0]!);

    await page.goto(`${server.url}/console#/experiences/${experienceId}`);
    await page.reload();
    await tool(1).getByLabel('Header 1 value').waitFor();
    assert.ok(!(await page.content()).includes(ORDERS_API_KEY), 'the page never holds the header value');
    await page.setViewportSize(viewports[1]!);
    await assertFits(page, 'the tools editor on a phone');
    await page.setViewportSize(viewports[0]!);

    // Remove the tool: the experience has none again.
    await tool(1).getByRole('button', { name: 'Remove tool 1' }).click();
    await save();
    assert.deepEqual((await stored()).tools, []);
    // Chromium logs each refused request (the 400s above); no script errors.
    assert.deepEqual(session.browser.pageErrors.filter((message) => !message.includes('the server responded with a status of')), []);
  });
});
