import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { toolRequest } from './tool-request.ts';
import type { Tool } from './tool.schema.ts';

const tool = (method: 'GET' | 'POST', url: string) => ({ name: 't', http: { method, url } }) as Tool;

describe('the HTTP request of a call', () => {
  test('GET: placeholders URL-encoded, the other arguments in the query string, arrays repeated', () => {
    const { url, body } = toolRequest(tool('GET', 'https://api.example.com/orders/{orderId}?v=2'), { orderId: 'a/b c?', lang: 'de', tags: ['x', 'y'], limit: 5 });
    assert.equal(url.toString(), 'https://api.example.com/orders/a%2Fb%20c%3F?v=2&lang=de&tags=x&tags=y&limit=5');
    assert.equal(body, undefined);
  });

  test('POST: placeholders in the URL, the other arguments as a JSON body with their types', () => {
    const { url, body } = toolRequest(tool('POST', 'https://api.example.com/customers/{customer}/lookup'), { customer: '42', orderId: '12345', express: true });
    assert.equal(url.toString(), 'https://api.example.com/customers/42/lookup');
    assert.equal(body, '{"orderId":"12345","express":true}');
  });

  test('a placeholder cannot reach another path or host: its value is one encoded segment', () => {
    const { url } = toolRequest(tool('GET', 'https://api.example.com/orders/{orderId}'), { orderId: '../../admin?x=1#y' });
    assert.equal(url.host, 'api.example.com');
    assert.equal(url.pathname, '/orders/..%2F..%2Fadmin%3Fx%3D1%23y');
  });
});
