/**
 * The database could not be reached, or dropped the connection mid-statement (restart, failover,
 * network loss). Nothing is wrong with the request: the HTTP layer answers 503 with Retry-After,
 * and an ingestion worker leaves its job to be resumed once the database is back.
 */
export class DatabaseUnavailableError extends Error {
  constructor(cause: unknown) {
    super('The database is not reachable.', { cause });
    this.name = 'DatabaseUnavailableError';
  }
}

// SQLSTATE class 08 is "connection exception"; 57P01-57P03 are the server shutting down, crashing
// or still starting; 53300 is "too many connections". Each clears by itself: retrying is right.
const unavailableStates = /^(08...|57P0[123]|53300)$/;

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

/** Rethrows a connection failure as `DatabaseUnavailableError`, anything else as it is. */
export function translateDbError(error: unknown): never {
  if (isConnectionFailure(error) && !(error instanceof DatabaseUnavailableError)) throw new DatabaseUnavailableError(error);
  throw error;
}
