import { request as httpRequest, type Agent } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import type { AttemptOutcome } from './retry-schedule.ts';

// A non-2xx answer's body is kept only as a short excerpt in the attempt's error: enough to tell
// a proxy's error page from the application's, never the receiver's data.
const EXCERPT_BYTES = 200;

/** The HTTP agents of webhook requests, which check every address a target resolves to. */
export type TargetAgents = { http: Agent; https: Agent };

/**
 * Agents that refuse, at connection time, any DNS answer (or literal address) that is loopback,
 * private, link-local, metadata or reserved, unless `allowPrivateTargets`: a name that resolved to
 * a public address when the endpoint was created may point inside the network later. Keep-alive
 * is off: a reused connection would skip the check of a name whose answer changed.
 */
export function targetAgents(allowPrivateTargets: boolean): TargetAgents {
  const options = { allowPrivateIPAddress: allowPrivateTargets, allowMetaIPAddress: allowPrivateTargets, keepAlive: false };
  return { http: new RequestFilteringHttpAgent(options), https: new RequestFilteringHttpsAgent(options) };
}

/** The error of a failed attempt, in words an operator can act on. */
function describe(error: Error): string {
  if (/is not allowed/.test(error.message)) {
    return `Refused to connect: ${error.message} (WEBHOOKS_ALLOW_PRIVATE_TARGETS is off)`;
  }
  const code = (error as NodeJS.ErrnoException).code;
  return code && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
}

/**
 * POSTs one signed body and reports the outcome; never throws. A redirect is a failure like any
 * non-2xx answer (following it would leave the checked target). The whole attempt, answer
 * included, is bounded by `timeoutMs`; `signal` aborts it (a dispatcher stopping).
 */
export function sendWebhook(
  target: { url: string; body: string; headers: Record<string, string> },
  options: { agents: TargetAgents; timeoutMs: number; signal: AbortSignal },
): Promise<AttemptOutcome> {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: Omit<AttemptOutcome, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...outcome, latencyMs: latency() });
    };
    const url = new URL(target.url);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(url, {
      method: 'POST',
      agent: url.protocol === 'https:' ? options.agents.https : options.agents.http,
      headers: { ...target.headers, 'content-length': Buffer.byteLength(target.body) },
      signal: options.signal,
    });
    const timer = setTimeout(() => request.destroy(new Error(`No answer within ${options.timeoutMs} ms.`)), options.timeoutMs);
    request.on('error', (error) => finish({ statusCode: null, error: describe(error) }));
    request.on('response', (response) => {
      const statusCode = response.statusCode ?? 0;
      const ok = statusCode >= 200 && statusCode < 300;
      let excerpt = Buffer.alloc(0);
      response.on('data', (chunk: Buffer) => {
        if (excerpt.length < EXCERPT_BYTES) excerpt = Buffer.concat([excerpt, chunk]).subarray(0, EXCERPT_BYTES);
      });
      const done = () => {
        const text = excerpt.toString('utf8').replace(/\s+/g, ' ').trim();
        finish({ statusCode, error: ok ? null : `The endpoint answered ${statusCode}${text ? `: ${text}` : '.'}` });
      };
      response.on('end', done);
      // A body cut short after the status arrived still tells the outcome.
      response.on('error', done);
    });
    request.end(target.body);
  });
}
