/**
 * A webhook receiver on loopback: a real node:http server that verifies each request's Standard
 * Webhooks signature with the `standardwebhooks` verifier, the way a user's receiver would.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request as received. */
export type Received = {
  at: number;
  headers: Record<string, string>;
  body: string;
  /** The parsed payload when the signature verified with `secret`, else undefined. */
  payload: any;
  verifyError: string | undefined;
};

/** Answers a request: a status code, or 'hang' to hold it open until the receiver closes. */
export type Responder = (received: Received) => number | 'hang';

export class WebhookReceiver {
  readonly received: Received[] = [];
  /** The secret requests are verified with (set once the endpoint is created). */
  secret = '';
  respond: Responder = () => 204;
  private readonly hanging = new Set<ServerResponse>();
  private readonly listeners = new Set<() => void>();

  private constructor(private readonly server: ReturnType<typeof createServer>) {}

  static async start(): Promise<WebhookReceiver> {
    const server = createServer();
    const receiver = new WebhookReceiver(server);
    server.on('request', (request, response) => void receiver.handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  /** The URL to register, e.g. `http://127.0.0.1:1234/hook`. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  /** The verified payloads received so far, in arrival order. */
  get payloads(): any[] {
    return this.received.filter((item) => item.payload).map((item) => item.payload);
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));
    let payload: any;
    let verifyError: string | undefined;
    try {
      payload = new Webhook(this.secret).verify(body, headers);
    } catch (error) {
      verifyError = (error as Error).message;
    }
    const received: Received = { at: Date.now(), headers, body, payload, verifyError };
    this.received.push(received);
    for (const listener of this.listeners) listener();
    const answer = this.respond(received);
    if (answer === 'hang') {
      this.hanging.add(response);
      return;
    }
    response.writeHead(answer, { 'content-type': 'text/plain' }).end(answer >= 300 ? 'receiver says no' : '');
  }

  /** Resolves once `find` finds something in what was received, or fails after `timeoutMs`. */
  waitFor<T>(what: string, find: (received: Received[]) => T | undefined, timeoutMs = 20_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = find(this.received);
        if (found === undefined) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve(found);
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`${what}: not received within ${timeoutMs} ms; got ${JSON.stringify(this.received.map((item) => item.payload?.type ?? item.verifyError))}`));
      }, timeoutMs);
      this.listeners.add(check);
      check();
    });
  }

  /** Waits for a verified event of `type` (of job `jobId` when given). */
  event(type: string, jobId?: string, timeoutMs?: number): Promise<any> {
    return this.waitFor(
      `${type} ${jobId ?? ''}`,
      () => this.payloads.find((payload) => payload.type === type && (!jobId || payload.data.id === jobId)),
      timeoutMs,
    );
  }

  async close(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
