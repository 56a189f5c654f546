import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isConnectionFailure } from '../db/unavailable.ts';
import { AppError, errorBody, errorTable, type ErrorDetails, type FieldError } from '../errors.ts';

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

type ValidationIssue = NonNullable<FastifyError['validation']>[number];

/** ajv's error as `{path, message}`, the path a JSON pointer into the validated part. */
function fieldError(issue: ValidationIssue, context: string | undefined): FieldError {
  let path = issue.instancePath || '';
  const params = issue.params as Record<string, unknown>;
  if (issue.keyword === 'required' && typeof params.missingProperty === 'string') {
    path = `${path}/${params.missingProperty}`;
  }
  if (issue.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    path = `${path}/${params.additionalProperty}`;
  }
  let message = issue.message ?? 'is invalid';
  if (issue.keyword === 'enum' && Array.isArray(params.allowedValues)) {
    message = `must be one of: ${params.allowedValues.join(', ')}`;
  }
  if (issue.keyword === 'required') message = 'is required';
  if (issue.keyword === 'additionalProperties') message = 'is not a known property';
  // Querystring and path errors name their part so that `/limit` cannot be mistaken for a body field.
  const prefix = context && context !== 'body' ? `${context}:` : '';
  return { path: `${prefix}${path || '/'}`, message };
}

function describe(errors: FieldError[]): string {
  const [first] = errors;
  if (!first) return errorTable.VALIDATION_FAILED.message;
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  return `${first.path} ${first.message}${more}`;
}

/**
 * Maps any error to a status, a message and details in the spec's shape: lore's own, Fastify's,
 * a lost database (503). Also used where an error ends a response already under way (a stream).
 */
export function classifyError(error: FastifyError, request: FastifyRequest): { status: number; message: string; details?: ErrorDetails } {
  if (error instanceof AppError) return { status: error.status, message: error.message, details: error.details };
  if (isConnectionFailure(error)) {
    return {
      status: 503,
      message: errorTable.DATABASE_UNAVAILABLE.message,
      details: { headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) } },
    };
  }
  if (error.validation) {
    const errors = error.validation.slice(0, MAX_FIELD_ERRORS).map((issue) => fieldError(issue, error.validationContext));
    return { status: 400, message: describe(errors), details: { errors } };
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, message: `${errorTable.MALFORMED_JSON.message} ${error.message}` };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_PARTS_LIMIT':
    case 'FST_FILES_LIMIT':
    case 'FST_FIELDS_LIMIT': {
      // A route that takes large bodies says in its config what to do instead.
      const advice = request.routeOptions.config.tooLargeMessage;
      return { status: 413, message: advice ? `${errorTable.PAYLOAD_TOO_LARGE.message} ${advice}` : errorTable.PAYLOAD_TOO_LARGE.message };
    }
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, message: errorTable.UNSUPPORTED_MEDIA_TYPE.message };
  }
  if (error instanceof SyntaxError && error.statusCode === 400) {
    return { status: 400, message: `${errorTable.MALFORMED_JSON.message} ${error.message}` };
  }
  // Other client errors raised by Fastify and its plugins keep their status and message.
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return { status: error.statusCode, message: error.message };
  }
  return { status: 500, message: errorTable.INTERNAL.message };
}

/** Answers every error, and every unknown route, in the spec's error shape. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const { status, message, details } = classifyError(error, request);
    if (status === 503) {
      request.log.warn({ err: error, reqId: request.id }, message);
    } else if (status >= 500) {
      request.log.error({ err: error, reqId: request.id }, 'unexpected error');
    } else {
      request.log.info({ status, code: (error as AppError).code ?? error.code }, message);
    }
    if (details?.headers) void reply.headers(details.headers);
    void reply.code(status).type('application/json').send(errorBody(status, message, request.url, details));
  });
  app.setNotFoundHandler((request, reply) => {
    const message = `${errorTable.ROUTE_NOT_FOUND.message} (${request.method} ${request.url.split('?', 1)[0]})`;
    void reply.code(404).send(errorBody(404, message, request.url));
  });
}
