/**
 * Judges one answer against the spec: no 5xx, every 4xx in the error shape
 * `{statusCode, error, message, timestamp, path}` (plus `errors`, `required`, `missing`), an
 * answer at all rather than a reset, and no success for a request that changes state while
 * breaking a rule. Describes failures so that they can be replayed by hand.
 */
import { STATUS_CODES } from 'node:http';
import type { FuzzRequest } from './requests.ts';
import type { Exchange, RawRequest } from './wire.ts';

/** What went wrong: a 5xx, a 4xx out of shape, no answer, or an invalid change accepted. */
export type ProblemKind = 'status5xx' | 'shape' | 'socket' | 'accepted';

/** One failed expectation about one answer. */
export type Problem = { kind: ProblemKind; message: string };

const ALLOWED_FIELDS = new Set(['statusCode', 'error', 'message', 'timestamp', 'path', 'errors', 'required', 'missing']);
const READ_ONLY_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The `path` an error body must carry: the request path without its query string and `/api`
 * prefix. A raw space ends the request target (RFC 9112 3.2), whatever follows it.
 */
export function expectedPath(target: string): string {
  const path = target.split(' ', 1)[0]!.split('?', 1)[0] ?? '';
  return path.startsWith('/api/') ? path.slice(4) : path;
}

/**
 * Whether `actual` is the path the spec asks for. A 431 answers a head too large to read whole,
 * so the server may only know the path's beginning: a prefix of it is accepted there.
 */
function pathMatches(status: number, actual: unknown, expected: string): boolean {
  if (actual === expected) return true;
  return status === 431 && typeof actual === 'string' && actual.startsWith('/') && expected.startsWith(actual);
}

function isStringArray(value: unknown): boolean {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

/** Every way the body of an error answer departs from the spec's error shape. */
export function errorShapeProblems(status: number, contentType: string, text: string, path: string): string[] {
  if (!/^application\/json\b/i.test(contentType)) return [`content-type is ${JSON.stringify(contentType)}, not application/json`];
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return ['the body is not JSON'];
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return ['the body is not an object'];
  const problems: string[] = [];
  if (body.statusCode !== status) problems.push(`statusCode is ${JSON.stringify(body.statusCode)}`);
  if (body.error !== STATUS_CODES[status]) problems.push(`error is ${JSON.stringify(body.error)}, not ${JSON.stringify(STATUS_CODES[status])}`);
  if (typeof body.message !== 'string') problems.push('message is not a string');
  if (typeof body.timestamp !== 'string' || Number.isNaN(Date.parse(body.timestamp)) || new Date(body.timestamp).toISOString() !== body.timestamp) {
    problems.push(`timestamp is ${JSON.stringify(body.timestamp)}`);
  }
  if (!pathMatches(status, body.path, path)) problems.push(`path is ${JSON.stringify(body.path)?.slice(0, 120)}, not ${JSON.stringify(path).slice(0, 120)}`);
  const unknown = Object.keys(body).filter((key) => !ALLOWED_FIELDS.has(key));
  if (unknown.length > 0) problems.push(`unknown fields ${unknown.join(', ')}`);
  if ('errors' in body && !(Array.isArray(body.errors) && body.errors.every((item: any) => typeof item?.path === 'string' && typeof item?.message === 'string'))) {
    problems.push('errors is not an array of {path, message}');
  }
  for (const key of ['required', 'missing']) if (key in body && !isStringArray(body[key])) problems.push(`${key} is not an array of strings`);
  return problems;
}

/** The problems of one exchange; empty when the server answered as the spec says. */
export function judge(request: FuzzRequest, raw: RawRequest, exchange: Exchange): Problem[] {
  const { answer } = exchange;
  if (!answer || !answer.complete) {
    const got = answer ? `a partial ${answer.status} answer` : 'no answer';
    return [{ kind: 'socket', message: `${got} (${exchange.error ?? 'connection closed'})` }];
  }
  // fetch and most clients write the whole body before reading: a reset during the upload loses
  // the answer for them, even when this client, which reads while it writes, got it.
  if (exchange.uploadError && !request.malformedHttp) {
    return [{ kind: 'socket', message: `the connection failed while the body was being sent (${exchange.uploadError}); the answer was ${answer.status}` }];
  }
  const { status } = answer;
  if (status >= 500) return [{ kind: 'status5xx', message: `status ${status}` }];
  if (status >= 400) {
    if (raw.method === 'HEAD') return [];
    const problems = errorShapeProblems(status, answer.headers['content-type'] ?? '', answer.body.toString('utf8'), expectedPath(raw.target));
    return problems.length > 0 ? [{ kind: 'shape', message: `${status} answer out of shape: ${problems.join('; ')}` }] : [];
  }
  if (request.rules.length > 0 && !READ_ONLY_METHODS.has(raw.method)) {
    return [{ kind: 'accepted', message: `status ${status} for a request that breaks ${request.rules.join(', ')}` }];
  }
  return [];
}

function shown(text: string, limit: number): string {
  const escaped = JSON.stringify(text.length > limit ? text.slice(0, limit) : text);
  return text.length > limit ? `${escaped}... (${text.length} chars)` : escaped;
}

/** A request as it went out and its answer, readable and replayable (long values truncated). */
export function describeExchange(request: FuzzRequest, raw: RawRequest, exchange: Exchange): string {
  const lines = [
    `operation ${request.operation}; breaks: ${request.rules.join(', ') || '(nothing: noise only)'}`,
    `> ${raw.method} ${shown(raw.target, 300)} HTTP/1.1 (framing: ${raw.framing})`,
    ...raw.headers.map(([name, value]) => `> ${name}: ${shown(value, 200)}`),
  ];
  if (raw.body) lines.push(`> body (${raw.body.length} bytes): ${shown(raw.body.toString('utf8'), 400)}`);
  const { answer } = exchange;
  if (answer) {
    lines.push(`< ${answer.status} ${answer.complete ? '' : '(incomplete) '}content-type: ${answer.headers['content-type'] ?? '(none)'}`);
    lines.push(`< ${shown(answer.body.toString('utf8'), 600)}`);
  }
  if (exchange.error) lines.push(`! socket: ${exchange.error}`);
  return lines.join('\n');
}

/** A short key that groups failures of one cause: kind, status, operation and the rule broken. */
export function failureClass(request: FuzzRequest, exchange: Exchange, problem: Problem): string {
  const status = exchange.answer?.status ?? 'no answer';
  // The rule without its concrete value (`query: limit=1e20` and `query: limit=NaN` are one class of input, one route).
  const rule = (request.rules[0] ?? 'noise').replace(/=.*$/, '=…').replace(/\d{4,}/g, 'N');
  return `${problem.kind} ${status} ${request.operation} [${rule}]`;
}
