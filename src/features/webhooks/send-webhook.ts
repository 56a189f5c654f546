import { lookup as dnsLookup } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { AttemptOutcome } from './retry-schedule.ts';
import { privateAddress } from './target-url.ts';

// A non-2xx answer's body is kept only as a short excerpt in the attempt's error: enough to tell
// a proxy's error page from the application's, never the receiver's data.
const EXCERPT_BYTES = 200;

const REFUSED = 'a loopback, private, link-local or metadata address';

/** A connection not made because of where it would go. */
export class RefusedTarget extends Error {}

/**
 * dns.lookup, failing instead of answering when any address a name resolves to is one that
 * webhooks must not reach, as target-url.ts judges literal addresses at creation: a name that
 * resolved to a public address when the endpoint was created may point inside the network later.
 */
export const screenedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const refused = addresses.map(({ address }) => privateAddress(address)).find((named) => named !== undefined);
    if (refused) return callback(new RefusedTarget(`${hostname} resolves to ${REFUSED} (${refused})`), []);
    if (options.all) callback(null, addresses);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  });
};

/** The HTTP agents of webhook requests, and whether they screen the addresses they connect to. */
export type TargetAgents = { http: HttpAgent; https: HttpsAgent; screened: boolean };

/**
 * Agents that resolve names through `screenedLookup`, unless `allowPrivateTargets`. Keep-alive
 * is off: a reused connection would skip the check of a name whose answer changed.
 */
export function targetAgents(allowPrivateTargets: boolean): TargetAgents {
  const options = allowPrivateTargets ? { keepAlive: false } : { keepAlive: false, lookup: screenedLookup };
  return { http: new HttpAgent(options), https: new HttpsAgent(options), screened: !allowPrivateTargets };
}

/** The error of a failed attempt, in words an operator can act on. */
function describe(error: Error): string {
  if (error instanceof RefusedTarget) return `Refused to connect: ${error.message}; WEBHOOKS_ALLOW_PRIVATE_TARGETS is off`;
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
  const url = new URL(target.url);
  // A literal address is connected to without a lookup. Creation refused private ones, but an
  // endpoint stored while WEBHOOKS_ALLOW_PRIVATE_TARGETS was on, or by an older version, may name one.
  const refused = options.agents.screened ? privateAddress(url.hostname.replace(/^\[|\]$/g, '')) : undefined;
  if (refused) return Promise.resolve({ statusCode: null, error: describe(new RefusedTarget(`the target's address is ${REFUSED} (${refused})`)), latencyMs: 0 });
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
