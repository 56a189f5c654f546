/** GET / (issue 11): a page linking the console, the widget demo and the API reference, open to anyone. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { homeLinks } from './home.routes.ts';

describe(`GET / (${engine})`, () => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server?.close();
  });

  test('answers, without a token, an HTML page linking the console, the widget demo and the API reference', async () => {
    const answer = await server.request('GET', '/');
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('content-type'), 'text/html; charset=utf-8');
    const hrefs = [...answer.text.matchAll(/<a href="([^"]+)">/g)].map((match) => match[1]);
    assert.deepEqual(hrefs, ['/console', '/demo', '/docs']);
    assert.deepEqual(homeLinks.map((link) => link.path), hrefs);
  });

  test('the console and the API reference it links answer', async () => {
    assert.equal((await server.request('GET', '/console')).status, 200);
    assert.equal((await server.request('GET', '/docs')).status, 200);
    assert.equal((await server.request('GET', '/openapi.json')).status, 200);
  });
});
