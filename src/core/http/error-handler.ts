import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ErrorObject } from 'ajv';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DiskFullError, isDiskFull } from '../db/disk-full.ts';
import { connectionFailureCode, isConnectionFailure } from '../db/unavailable.ts';
import { AppError, errorBody, errorTable, type ErrorDetails, type FieldError } from '../errors.ts';
import { describeSchemaErrors, summarize, unsupportedMediaTypeMessage } from './validation-messages.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What a 413 of this route tells the caller to do instead (e.g. use multipart, split the payload). */
    tooLargeMessage?: string;
  }
}

// How long a client should wait before retrying while the database is away: PostgreSQL restarts
// in a few seconds, and the pool opens a fresh connection on the next request.
const DATABASE_RETRY_AFTER_SECONDS = 5;

// A payload of 10,000 bad records would otherwise answer 10,000 errors; the first hundred say
// enough to fix the input.
const MAX_FIELD_ERRORS = 100;

/** ajv's errors of one part of a request as field errors; outside the body, each path names its part. */
function fieldErrors(error: FastifyError): FieldError[] {
  const context = error.validationContext;
  // Querystring and path errors name their part so that `/limit` cannot be mistaken for a body field.
  const prefix = context && context !== 'body' ? `${context}:` : '';
  const errors = describeSchemaErrors(error.validation as ErrorObject[]).slice(0, MAX_FIELD_ERRORS);
  return errors.map(({ path, message }) => ({ path: `${prefix}${path || '/'}`, message }));
}

function megabytes(bytes: number | undefined): string {
  return `${Math.round(((bytes ?? 1024 * 1024) / (1024 * 1024)) * 10) / 10} MB`;
}

/**
 * Maps any error to a status, a message and details in the spec's shape: lore's own, Fastify's,
 * a lost database (503), a full disk (507). Also used where an error ends a response already
 * under way (a stream).
 */
export function classifyError(error: FastifyError, request: FastifyRequest): { status: number; message: string; details?: ErrorDetails } {
  if (error instanceof AppError) return { status: error.status, message: error.message, details: error.details };
  if (isConnectionFailure(error)) {
    const code = connectionFailureCode(error);
    return {
      status: errorTable[code].status,
      message: errorTable[code].message,
      details: { headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) } },
    };
  }
  if (isDiskFull(error)) {
    const { status, message } = errorTable[error instanceof DiskFullError ? error.code : 'DISK_FULL'];
    return { status, message };
  }
  if (error.validation) {
    const errors = fieldErrors(error);
    return { status: 400, message: summarize(errors), details: { errors } };
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_PARTS_LIMIT':
    case 'FST_FILES_LIMIT':
    case 'FST_FIELDS_LIMIT': {
      // A route that takes large bodies says in its config what to do instead.
      const advice = request.routeOptions.config?.tooLargeMessage ?? `This route takes ${megabytes(request.routeOptions.bodyLimit)} at most.`;
      return { status: 413, message: `${errorTable.PAYLOAD_TOO_LARGE.message} ${advice}` };
    }
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': {
      const takesMultipart = Boolean((request.routeOptions.schema as { multipartBody?: unknown } | undefined)?.multipartBody);
      return { status: 415, message: unsupportedMediaTypeMessage(request.headers['content-type'], takesMultipart) };
    }
  }
  // Other client errors raised by Fastify and its plugins keep their status and message.
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return { status: error.statusCode, message: error.message };
  }
  return { status: 500, message: errorTable.INTERNAL.message };
}

// A client still sending its body when the answer comes (a 413 decided from Content-Length, a
// 401 before an upload is read) only reads that answer once its upload is done: closing the
// connection first ends its request in EPIPE. So the rest of the body is read and dropped first,
// up to this much in all; a larger upload is cut off after the answer. 64 MB is twice the largest
// body lore accepts, and takes about 0.1 s on a local network.
const MAX_DRAINED_BYTES = 64 * 1024 * 1024;
// A client that stalls mid-upload is not waited for longer than this.
const DRAIN_TIMEOUT_MS = 30_000;

/** Reads and drops what is left of a request's body, within the limits above. */
function drainBody(raw: IncomingMessage): Promise<void> {
  if (raw.complete || raw.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let received = 0;
    const finish = () => {
      clearTimeout(timer);
      raw.removeListener('data', onData);
      raw.removeListener('end', finish);
      raw.removeListener('error', finish);
      raw.removeListener('close', finish);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > MAX_DRAINED_BYTES) finish();
    };
    const timer = setTimeout(finish, DRAIN_TIMEOUT_MS);
    raw.on('data', onData);
    raw.once('end', finish);
    raw.once('error', finish);
    raw.once('close', finish);
    raw.resume();
  });
}

/** Answers every error, and every unknown route, in the spec's error shape. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler(async (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const { status, message, details } = classifyError(error, request);
    // The database away or the disk full: the operator's to fix, not a fault of lore's code.
    if (status === 503 || status === 507) {
      request.log.warn({ err: error, reqId: request.id }, message);
    } else if (status >= 500) {
      request.log.error({ err: error, reqId: request.id }, 'unexpected error');
    } else {
      request.log.info({ status, code: (error as AppError).code ?? error.code }, message);
    }
    if (details?.headers) void reply.headers(details.headers);
    await drainBody(request.raw);
    return reply.code(status).type('application/json').send(errorBody(status, message, request.url, details));
  });
  app.setNotFoundHandler(async (request, reply) => {
    const message = `${errorTable.ROUTE_NOT_FOUND.message} (${request.method} ${request.url.split('?', 1)[0]})`;
    await drainBody(request.raw);
    return reply.code(404).send(errorBody(404, message, request.url));
  });
}

/** HTTP/1.1 requires a Host header (RFC 9112, 3.2): refused here, in the spec's shape, rather than by Node. */
export function requireHostHeader(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      throw new AppError('VALIDATION_FAILED', 'An HTTP/1.1 request needs a Host header.');
    }
  });
}

/**
 * Fastify's `frameworkErrors`: the router refuses a URL before any route or hook runs (a bad
 * percent-encoding, a path parameter over `maxParamLength`). Answered in the spec's shape.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const status = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : 400;
  const message =
    status === 414 ? 'A path segment is longer than 100 characters; no identifier is that long.' : 'The URL is not valid: a percent-encoded sequence is malformed.';
  request.log.info({ status, code: error.code }, message);
  void reply.code(status).header('x-request-id', request.id).type('application/json').send(errorBody(status, message, request.url));
}

// Node's HTTP parser refuses these before Fastify sees a request; only their status differs.
const clientErrorStatus: Record<string, number> = {
  HPE_HEADER_OVERFLOW: 431,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
  ERR_HTTP_HEADERS_TIMEOUT: 408,
};

const clientErrorMessage: Record<number, string> = {
  400: 'The request is not valid HTTP (for example a control character or a raw byte in the path or in a header).',
  408: 'The request did not arrive in time.',
  431: 'The request\'s headers are too large (16 KB in all at most).',
};

/** The request path of a request line that Node could not parse, when its first line is readable. */
function rawRequestPath(packet: unknown): string {
  if (!Buffer.isBuffer(packet)) return '/';
  const line = packet.subarray(0, 8192).toString('latin1').split('\r\n', 1)[0] ?? '';
  const target = line.split(' ')[1];
  return target?.startsWith('/') ? target : '/';
}

/** The response a socket is still to finish, if any (Node keeps it there while a request is served). */
function pendingResponse(socket: Duplex): ServerResponse | undefined {
  const response = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
  return response && !response.writableFinished ? response : undefined;
}

/**
 * Fastify's `clientErrorHandler`: a request Node's parser rejects (a NUL in the path or a
 * header, a 100 KB header, a body cut short, a timeout) gets the spec's body on the raw socket,
 * then the socket is closed, as Node itself does. When the bytes at fault follow a complete
 * request still being answered (a Content-Length shorter than its body), that answer goes out
 * first: the client is owed it.
 */
export function answerClientError(error: NodeJS.ErrnoException & { rawPacket?: unknown }, socket: Duplex): void {
  // A reset connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const pending = pendingResponse(socket);
  const answer = (path: string) => {
    if (socket.destroyed) return;
    const status = clientErrorStatus[error.code ?? ''] ?? 400;
    const body = JSON.stringify(errorBody(status, clientErrorMessage[status]!, path));
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(error);
  };
  if (pending?.req.complete) {
    let answered = false;
    const afterPending = () => {
      if (answered) return;
      answered = true;
      answer(rawRequestPath(error.rawPacket));
    };
    pending.once('finish', afterPending);
    pending.once('close', afterPending);
    return;
  }
  // A request whose body broke off is the one at fault: its own path is known.
  answer(pending ? (pending.req.url ?? '/') : rawRequestPath(error.rawPacket));
}
