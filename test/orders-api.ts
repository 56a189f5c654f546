/**
 * A loopback "orders" API for tool tests: `GET /orders/{id}` answers the order as JSON when the
 * request carries `X-Api-Key: <key>` (401 otherwise, 404 for an unknown order); `mode` makes every
 * answer fail instead (503, a stall, invalid JSON, a redirect). It records each request.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export const ORDERS_API_KEY = 'orders-key-7f3a9c1e5b';

export type OrdersApi = {
  url: string;
  requests: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[];
  mode: 'normal' | 'unavailable' | 'stall' | 'invalid-json' | 'redirect';
  close(): Promise<void>;
};

const orders: Record<string, { status: string; eta: string }> = {
  '12345': { status: 'shipped', eta: '2026-12-05' },
  '555555': { status: 'being packed', eta: '2026-12-09' },
};

export async function startOrdersApi(): Promise<OrdersApi> {
  const api: OrdersApi = { url: '', requests: [], mode: 'normal', close: async () => {} };
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      api.requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      const json = (status: number, value: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      if (api.mode === 'stall') return;
      if (api.mode === 'unavailable') return json(503, { error: 'maintenance' });
      if (api.mode === 'invalid-json') return response.writeHead(200, { 'content-type': 'application/json' }).end('{"status": ');
      if (api.mode === 'redirect') return response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      if (request.headers['x-api-key'] !== ORDERS_API_KEY) return json(401, { error: 'bad key' });
      const id = /^\/orders\/([^/?]+)/.exec(request.url ?? '')?.[1];
      const order = id === undefined ? undefined : orders[decodeURIComponent(id)];
      if (!order) return json(404, { error: 'no such order' });
      json(200, { orderId: decodeURIComponent(id!), ...order });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  api.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  api.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return api;
}

/** The tool of the example, pointed at `api`. */
export function orderStatusTool(api: OrdersApi, extra: Record<string, unknown> = {}) {
  return {
    name: 'order_status',
    description: 'Look up the shipping status of an order by its number.',
    parameters: {
      type: 'object',
      properties: { orderId: { type: 'string', pattern: '^[0-9]{4,10}$', description: 'the order number' } },
      required: ['orderId'],
    },
    http: { method: 'GET', url: `${api.url}/orders/{orderId}`, headers: { 'X-Api-Key': ORDERS_API_KEY }, timeoutMs: 1000 },
    examples: ['Where is my order 12345?', 'What is the status of order 555555?', 'Has my order shipped yet?'],
    answerTemplate: 'Your order {orderId} is {status}, expected on {eta}.',
    ...extra,
  };
}
