/** Seconds a client is told to wait (`Retry-After`) when the database is unavailable. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Socket-level error codes of a database connection that is refused, reset, unreachable or timed out. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * PostgreSQL SQLSTATEs meaning "the database cannot serve this now": class 08 (connection
 * exception), 53300 too_many_connections, 57014 query_canceled (our `statement_timeout`),
 * 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now.
 */
const PG_UNAVAILABLE = /^(08[0-9A-Z]{3}|53300|57014|57P0[123])$/;

/**
 * Messages of errors node-postgres and pg-pool raise without a code when the connection is lost or
 * a timeout of data-source.ts fires. Matched only on errors of the database layer (see below).
 */
const PG_UNAVAILABLE_MESSAGES = [
  /Connection terminated/i, // unexpectedly / due to connection timeout
  /timeout exceeded when trying to connect/i, // pg-pool: no slot within connectionTimeoutMillis
  /Query read timeout/i, // query_timeout
  /not queryable/i, // a client that already had a connection error
  /Client was closed and is not queryable/i,
];

/** TypeORM errors of a data source that is not (or no longer) connected, e.g. during a forced shutdown. */
const TYPEORM_NOT_CONNECTED = new Set(['ConnectionIsNotSetError', 'CannotExecuteNotConnectedError', 'QueryRunnerAlreadyReleasedError']);

function isUnavailable(error: Record<string, unknown>): boolean {
  const code = typeof error.code === 'string' ? error.code : '';
  if (NETWORK_CODES.has(code) || PG_UNAVAILABLE.test(code)) return true;
  // SQLite: the file stayed locked past busy_timeout (SQLITE_BUSY, SQLITE_BUSY_SNAPSHOT, SQLITE_LOCKED, …)
  if (/^SQLITE_(BUSY|LOCKED)/.test(code)) return true;
  if (typeof error.name === 'string' && TYPEORM_NOT_CONNECTED.has(error.name)) return true;
  const message = typeof error.message === 'string' ? error.message : '';
  return PG_UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message));
}

/**
 * Tells whether `exception` means the database is unreachable, overloaded or too slow — rather
 * than a bug or a constraint — so the request should answer 503 `service_unavailable` with
 * `Retry-After` (SPEC §2, §10; README "Operating"). Looks at the error itself, TypeORM's
 * `driverError` and `cause` chains (depth ≤ 4). Covers connection refused/reset/timeouts, pg
 * "Connection terminated", pg-pool and query timeouts, SQLSTATE class 08, 53300, 57014,
 * 57P01-57P03, and SQLite SQLITE_BUSY/SQLITE_LOCKED.
 */
export function isDatabaseUnavailable(exception: unknown): boolean {
  const queue: unknown[] = [exception];
  for (let depth = 0; depth < 8 && queue.length > 0; depth++) {
    const current = queue.shift();
    if (!current || typeof current !== 'object') continue;
    const error = current as Record<string, unknown>;
    if (isUnavailable(error)) return true;
    queue.push(error.driverError, error.cause);
  }
  return false;
}
