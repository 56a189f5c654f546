import { STATUS_CODES } from 'node:http';

/**
 * Every error lore answers, once: its HTTP status and default message. Routes throw `AppError`s
 * built from these codes; one error handler turns them into the spec's body
 * `{statusCode, error, message, timestamp, path}`.
 */
export const errorTable = {
  VALIDATION_FAILED: { status: 400, message: 'The request is invalid.' },
  MALFORMED_JSON: { status: 400, message: 'The request body is not valid JSON.' },
  MALFORMED_MULTIPART: { status: 400, message: 'The multipart/form-data body cannot be read.' },
  WORKSPACE_INACTIVE: { status: 400, message: 'The workspace is not active.' },
  UNSUPPORTED_GRANT_TYPE: { status: 400, message: 'Only grant_type=client_credentials is supported.' },
  INVALID_SCOPE: { status: 400, message: 'The requested scope exceeds the client\'s scopes.' },
  UNAUTHENTICATED: { status: 401, message: 'An Authorization header with a bearer token is required.' },
  INVALID_TOKEN: { status: 401, message: 'The access token is malformed, expired or has an invalid signature.' },
  INVALID_CLIENT: { status: 401, message: 'The client credentials are invalid.' },
  INVALID_ADMIN_KEY: { status: 401, message: 'A valid admin API key is required.' },
  INSUFFICIENT_SCOPE: { status: 403, message: 'The access token lacks a required scope.' },
  FORBIDDEN: { status: 403, message: 'This operation is not allowed.' },
  WORKSPACE_SUSPENDED: { status: 403, message: 'The workspace is suspended.' },
  NOT_FOUND: { status: 404, message: 'The resource does not exist.' },
  ROUTE_NOT_FOUND: { status: 404, message: 'No route matches this method and path.' },
  CONFLICT: { status: 409, message: 'The resource is in a state that does not allow this operation.' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'This content type is not supported here.' },
  RATE_LIMITED: { status: 429, message: 'Too many requests; retry later.' },
  // nginx's non-standard status: logged as what it is, a client leaving, not as a server fault.
  CLIENT_CLOSED: { status: 499, message: 'The client closed the connection before the answer was complete.' },
  INTERNAL: { status: 500, message: 'An unexpected error occurred.' },
  BAD_GATEWAY: { status: 502, message: 'An upstream provider failed.' },
  SERVICE_UNAVAILABLE: { status: 503, message: 'The service is not ready.' },
  DATABASE_UNAVAILABLE: { status: 503, message: 'The database is not reachable; retry in a few seconds.' },
  DATABASE_TOO_MANY_CLIENTS: {
    status: 503,
    message: 'The database refused the connection: too many clients (max_connections, or a connection limit of the role or database, is reached); retry in a few seconds.',
  },
  GATEWAY_TIMEOUT: { status: 504, message: 'An upstream provider did not answer in time.' },
  // WebDAV's status (RFC 4918, 11.5), registered for HTTP: the server cannot store what the
  // request needs. Not a 503: no retry succeeds until an operator frees space.
  DISK_FULL: { status: 507, message: 'The disk holding DATA_DIR is full: nothing more can be stored until space is freed.' },
  DATABASE_DISK_FULL: { status: 507, message: "The database server's disk is full: nothing more can be stored until space is freed on it." },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof errorTable;

/** One entry of a 400's `errors` array: a JSON pointer into the input and what is wrong there. */
export type FieldError = { path: string; message: string };

/** Extra fields some errors carry in their body (the spec's `errors`, `required`, `missing`). */
export type ErrorDetails = {
  errors?: FieldError[];
  required?: string[];
  missing?: string[];
  headers?: Record<string, string>;
};

/** An error with a known code; the error handler answers it with its status and message. */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string = errorTable[code].message,
    readonly details: ErrorDetails = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.status = errorTable[code].status;
  }
}

/** `AppError('NOT_FOUND')` with the resource named, e.g. "Knowledge base 123 does not exist." */
export function notFound(resource: string, id: string): AppError {
  return new AppError('NOT_FOUND', `${resource} ${id} does not exist.`);
}

/** The spec's error body. */
export type ErrorBody = {
  statusCode: number;
  error: string;
  message: string;
  timestamp: string;
  path: string;
} & Omit<ErrorDetails, 'headers'>;

/** The request path as the spec shows it: without the query string and without the `/api` prefix. */
export function publicPath(url: string): string {
  const path = url.split('?', 1)[0] ?? '/';
  return path.startsWith('/api/') ? path.slice(4) : path;
}

/** Builds the spec's error body for a status. */
export function errorBody(status: number, message: string, url: string, details: ErrorDetails = {}): ErrorBody {
  const { headers: _headers, ...extra } = details;
  return {
    statusCode: status,
    error: STATUS_CODES[status] ?? 'Error',
    message,
    timestamp: new Date().toISOString(),
    path: publicPath(url),
    ...extra,
  };
}
