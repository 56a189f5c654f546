/**
 * A reverse proxy on loopback that appends the address it was reached from to X-Forwarded-For, as
 * nginx's `proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for` does, and connects to its
 * upstream from an address of its own (all of 127.0.0.0/8 is this host). With it a test tells the
 * client's address, the proxy's and one a client made up apart.
 */
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Answer } from './harness.ts';

export class ForwardingProxy {
  private constructor(private readonly server: Server) {}

  /** Listens on 127.0.0.1 and forwards everything to `upstream` from `localAddress`. */
  static async start(upstream: string, localAddress: string): Promise<ForwardingProxy> {
    const target = new URL(upstream);
    const server = createServer((incoming, outgoing) => {
      const forwarded = incoming.headers['x-forwarded-for'];
      const peer = incoming.socket.remoteAddress!;
      const headers = { ...incoming.headers, 'x-forwarded-for': forwarded ? `${forwarded}, ${peer}` : peer };
      const upstreamRequest = request({ host: target.hostname, port: target.port, localAddress, method: incoming.method, path: incoming.url, headers }, (answer) => {
        outgoing.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(outgoing);
      });
      upstreamRequest.on('error', () => outgoing.destroy());
      incoming.pipe(upstreamRequest);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new ForwardingProxy(server);
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

function toHeaders(headers: IncomingHttpHeaders): Headers {
  const result = new Headers();
  for (const [name, value] of Object.entries(headers)) for (const one of [value ?? []].flat()) result.append(name, one);
  return result;
}

/** A JSON POST from `localAddress`, with `headers` (an X-Forwarded-For of the client's choosing). */
export function postFrom(
  url: string,
  localAddress: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const outgoing = request(url, { method: 'POST', localAddress, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers } }, (answer) => {
      let received = '';
      answer.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
      answer.on('end', () => resolve({ status: answer.statusCode!, headers: toHeaders(answer.headers), body: JSON.parse(received), text: received }));
    });
    outgoing.on('error', reject);
    outgoing.end(text);
  });
}
