import { errorTable, type ErrorCode } from '../errors.ts';
import { DiskFullError, isDiskFull } from './disk-full.ts';

/**
 * The database could not be reached, or dropped the connection mid-statement (restart, failover,
 * network loss). Nothing is wrong with the request: the HTTP layer answers 503 with Retry-After,
 * and an ingestion worker leaves its job to be resumed once the database is back.
 */
export class DatabaseUnavailableError extends Error {
  /** What the HTTP layer says: the database is away, or it refused this connection for want of a slot. */
  readonly code: UnavailableCode;
  constructor(cause: unknown) {
    const code = connectionFailureCode(cause);
    super(code === 'DATABASE_TOO_MANY_CLIENTS' ? 'The database refused the connection: too many clients.' : 'The database is not reachable.', { cause });
    this.name = 'DatabaseUnavailableError';
    this.code = code;
  }
}

type UnavailableCode = Extract<ErrorCode, 'DATABASE_UNAVAILABLE' | 'DATABASE_TOO_MANY_CLIENTS'>;

// SQLSTATE class 08 is "connection exception"; 57P01-57P03 are the server shutting down, crashing
// or still starting; 53300 is "too many connections" (max_connections, or a role's or database's
// CONNECTION LIMIT). Each clears by itself: retrying is right.
const unavailableStates = /^(08...|57P0[123]|53300)$/;

function isTooManyConnections(error: unknown): boolean {
  if (error instanceof AggregateError) return error.errors.some(isTooManyConnections);
  return error instanceof Error && (error as { code?: unknown }).code === '53300';
}

/** Which of the error table's entries a connection failure is: too many clients (53300), or the database away. */
export function connectionFailureCode(error: unknown): UnavailableCode {
  if (error instanceof DatabaseUnavailableError) return error.code;
  return isTooManyConnections(error) ? 'DATABASE_TOO_MANY_CLIENTS' : 'DATABASE_UNAVAILABLE';
}

// What Node's socket layer reports when a connection is refused, dropped or times out.
const socketCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED']);

// node-postgres reports a lost or unobtainable connection by message only.
const driverMessages = /Connection terminated|timeout exceeded when trying to connect|connection error and is not queryable|not queryable/i;

/** Whether `error` means the database is out of reach, rather than that the statement is wrong. */
export function isConnectionFailure(error: unknown): boolean {
  if (error instanceof DatabaseUnavailableError) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (unavailableStates.test(code) || socketCodes.has(code))) return true;
  if (error instanceof AggregateError && error.errors.some(isConnectionFailure)) return true;
  return driverMessages.test(error.message);
}

/**
 * The PostgreSQL adapter's errors: a connection failure as `DatabaseUnavailableError`, the
 * server's full disk (53100) as `DiskFullError`, anything else as it is.
 */
export function translateDbError(error: unknown): never {
  if (error instanceof DatabaseUnavailableError || error instanceof DiskFullError) throw error;
  if (isConnectionFailure(error)) throw new DatabaseUnavailableError(error);
  if (isDiskFull(error)) throw new DiskFullError('DATABASE_DISK_FULL', errorTable.DATABASE_DISK_FULL.message, { cause: error });
  throw error;
}
