/**
 * Turns a generated request into bytes and sends them over a plain TCP socket (node:net): fetch
 * and node:http refuse what the fuzz needs to send (NUL or raw bytes in the path and headers, bad
 * percent-encodings, bodies that end early, contradictory Content-Length headers). Then reads the
 * one HTTP/1.1 answer back, while still writing, so that an early 413 is read rather than lost.
 */
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { jsonText, Ref, resolvedText, type ResolveRef } from './json-text.ts';
import type { ResourceKind } from './operations.ts';
import type { BodySpec, Framing, FuzzRequest, TargetPart } from './requests.ts';
import { compactJwt, type TokenSpec } from './tokens.ts';

/** Ids and credentials of the fixture, which generated requests refer to. */
export type FuzzFixture = {
  /** The caller's own resources, and the same kind in another workspace where one exists. */
  ids: Record<ResourceKind, { own: string; foreign?: string }>;
  tokens: { own: string; lowScope: string; foreign: string };
  adminKey: string;
  /** The server's token-signing secret, to forge tokens that pass the signature check. */
  tokenSecret: Uint8Array;
};

/** A request as bytes: the target and header values are latin1 strings (one char per byte). */
export type RawRequest = { method: string; target: string; headers: [string, string][]; body: Buffer | undefined; framing: Framing };

/** The answer as read from the socket; `complete` when its body was read to the end. */
export type RawAnswer = { status: number; headers: Record<string, string>; body: Buffer; complete: boolean };

/** What happened to one request: the answer, a socket error, or both (an error after the answer). */
export type Exchange = {
  answer: RawAnswer | undefined;
  error: string | undefined;
  /** Set when the connection failed before the whole request was written (EPIPE, ECONNRESET). */
  uploadError: string | undefined;
  durationMs: number;
};

// Any fixed id that names nothing, for a `foreign` reference the fixture has no resource for.
const NOWHERE = '00000000-0000-4000-8000-000000000000';
const otherSecret = randomBytes(32);

function resolver(fixture: FuzzFixture): ResolveRef {
  return (ref: Ref) => (ref.owner === 'own' ? fixture.ids[ref.resource].own : (fixture.ids[ref.resource].foreign ?? NOWHERE));
}

function targetText(parts: TargetPart[], resolve: ResolveRef): string {
  return parts.map((part) => (part instanceof Ref ? resolve(part) : part)).join('');
}

function authorization(token: TokenSpec, fixture: FuzzFixture, resolve: ResolveRef): string | undefined {
  switch (token.kind) {
    case 'none':
      return undefined;
    case 'raw':
      return token.value;
    case 'admin':
      return `Bearer ${fixture.adminKey}`;
    case 'jwt': {
      const claims = JSON.parse(jsonText(token.claims, resolve)) as Record<string, unknown>;
      const secret = token.secret === 'server' ? fixture.tokenSecret : token.secret === 'other' ? otherSecret : undefined;
      return `Bearer ${compactJwt(token.header, claims, secret)}`;
    }
    default:
      return `Bearer ${fixture.tokens[token.kind]}`;
  }
}

function formBody(spec: BodySpec & { kind: 'form' }, resolve: ResolveRef): Buffer {
  const boundary = spec.boundary ?? 'x';
  const parts = spec.parts.map((part) => {
    const disposition = `Content-Disposition: form-data; name="${part.name}"${part.filename ? `; filename="${part.filename}"` : ''}`;
    const type = part.filename ? '\r\nContent-Type: application/json' : '';
    return `--${boundary}\r\n${disposition}${type}\r\n\r\n${resolvedText(part.value, resolve)}\r\n`;
  });
  const whole = Buffer.from(`${parts.join('')}--${boundary}--\r\n`, 'utf8');
  if (spec.cut === 'all') return Buffer.alloc(0);
  if (spec.cut === 'half') return whole.subarray(0, Math.floor(whole.length / 2));
  return spec.cut === 'closing' ? Buffer.from(parts.join(''), 'utf8') : whole;
}

function body(spec: BodySpec, resolve: ResolveRef): { bytes: Buffer; contentType: string | undefined } {
  switch (spec.kind) {
    case 'json':
      return { bytes: Buffer.from(jsonText(spec.value, resolve), 'utf8'), contentType: spec.contentType };
    case 'text':
      return { bytes: Buffer.from(spec.text, 'utf8'), contentType: spec.contentType };
    case 'padded':
      // 14 bytes of `{"padding":""}` around the x's: exactly `bytes` in all.
      return { bytes: Buffer.from(`{"padding":"${'x'.repeat(Math.max(0, spec.bytes - 14))}"}`), contentType: spec.contentType };
    case 'form':
      return { bytes: formBody(spec, resolve), contentType: spec.boundary === undefined ? 'multipart/form-data' : `multipart/form-data; boundary=${spec.boundary}` };
  }
}

/** The request's bytes-to-be, fixture ids and tokens filled in. */
export function materialize(request: FuzzRequest, fixture: FuzzFixture, host: string): RawRequest {
  const resolve = resolver(fixture);
  const query = targetText(request.query, resolve);
  const target = targetText(request.path, resolve) + (query ? `?${query}` : '');
  const headers: [string, string][] = [];
  if (!request.noHost) headers.push(['host', host]);
  const auth = authorization(request.token, fixture, resolve);
  if (auth !== undefined) headers.push(['authorization', auth]);
  const built = request.body ? body(request.body, resolve) : undefined;
  if (built?.contentType !== undefined) headers.push(['content-type', built.contentType]);
  headers.push(...request.headers, ['connection', 'close']);
  return { method: request.method, target, headers, body: built?.bytes, framing: request.framing };
}

function chunked(bytes: Buffer): Buffer {
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < bytes.length; offset += 65536) {
    const chunk = bytes.subarray(offset, offset + 65536);
    chunks.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(chunks);
}

/** The bytes to write: request line, headers with the framing's length headers, and the body. */
function wireBytes(request: RawRequest): Buffer {
  const headers = [...request.headers];
  let payload = request.body ?? Buffer.alloc(0);
  if (request.body !== undefined) {
    const length = payload.length;
    switch (request.framing) {
      case 'length':
        headers.push(['content-length', String(length)]);
        break;
      case 'chunked':
        headers.push(['transfer-encoding', 'chunked']);
        payload = chunked(payload);
        break;
      case 'ends-early':
        headers.push(['content-length', String(length + 100)]);
        break;
      case 'length-short':
        headers.push(['content-length', String(Math.max(1, Math.floor(length / 2)))]);
        break;
      case 'duplicate-length':
        headers.push(['content-length', String(length)], ['content-length', String(length + 1)]);
        break;
      case 'length-and-chunked':
        headers.push(['content-length', String(length)], ['transfer-encoding', 'chunked']);
        payload = chunked(payload);
        break;
      case 'bad-chunk':
        headers.push(['transfer-encoding', 'chunked']);
        payload = Buffer.concat([Buffer.from('zz\r\n'), payload, Buffer.from('\r\n0\r\n\r\n')]);
        break;
    }
  }
  const head = `${request.method} ${request.target} HTTP/1.1\r\n${headers.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), payload]);
}

/** Parses one HTTP/1.1 response from `data`; undefined until its head has arrived. */
export function parseAnswer(data: Buffer, closed: boolean): RawAnswer | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const lines = data.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rest = data.subarray(end + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const parts: Buffer[] = [];
    let offset = 0;
    for (;;) {
      const lineEnd = rest.indexOf('\r\n', offset);
      if (lineEnd < 0) return { status, headers, body: Buffer.concat(parts), complete: false };
      const size = parseInt(rest.subarray(offset, lineEnd).toString('latin1'), 16);
      if (Number.isNaN(size)) return { status, headers, body: Buffer.concat(parts), complete: false };
      if (size === 0) return { status, headers, body: Buffer.concat(parts), complete: true };
      if (rest.length < lineEnd + 2 + size) return { status, headers, body: Buffer.concat(parts), complete: false };
      parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      offset = lineEnd + 2 + size + 2;
    }
  }
  const length = headers['content-length'];
  if (length !== undefined) {
    const wanted = Number(length);
    return { status, headers, body: rest.subarray(0, wanted), complete: rest.length >= wanted };
  }
  // No length and no chunks: the body runs to the end of the connection (or there is none, for 204/304).
  return { status, headers, body: rest, complete: closed || status === 204 || status === 304 };
}

/** Sends one request on a new connection and reads the answer; gives up after `timeoutMs`. */
export function send(port: number, request: RawRequest, timeoutMs = 20_000): Promise<Exchange> {
  const started = performance.now();
  return new Promise((resolve) => {
    const received: Buffer[] = [];
    let error: string | undefined;
    let uploadError: string | undefined;
    let written = false;
    let settled = false;
    const socket = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
    const finish = (closed: boolean) => {
      if (settled) return;
      const answer = parseAnswer(Buffer.concat(received), closed);
      // An answer before the body is out is not the end: the upload must still complete (or fail).
      if (!closed && !(answer?.complete && written)) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ answer, error, uploadError, durationMs: performance.now() - started });
    };
    const timer = setTimeout(() => {
      error ??= `no complete answer within ${timeoutMs} ms`;
      finish(true);
    }, timeoutMs);
    socket.on('connect', () => {
      socket.write(wireBytes(request), (failure) => {
        if (failure) return;
        written = true;
        finish(false);
      });
      // A body that ends early only ends when the client says it has nothing more to send.
      if (request.framing === 'ends-early' && request.body !== undefined) socket.end();
    });
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      finish(false);
    });
    socket.on('error', (cause: NodeJS.ErrnoException) => {
      error ??= cause.code ?? cause.message;
      if (!written) uploadError ??= error;
    });
    socket.on('close', () => finish(true));
  });
}
