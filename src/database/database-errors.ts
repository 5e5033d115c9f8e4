/** Seconds a client is told to wait (`Retry-After`) when the database is unavailable. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Socket-level error codes of a database connection that is refused, reset, unreachable or timed out. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * PostgreSQL SQLSTATEs meaning "the database cannot serve this now": class 08 (connection
 * exception), 53000 insufficient_resources, 53100 disk_full, 53200 out_of_memory, 53300
 * too_many_connections, 57014 query_canceled (our `statement_timeout`), 57P01 admin_shutdown,
 * 57P02 crash_shutdown, 57P03 cannot_connect_now, 58030 io_error, and 25006
 * read_only_sql_transaction (a write reached a hot standby, e.g. during a failover).
 * Not 53400 configuration_limit_exceeded: a limit of the server's configuration does not go away by waiting.
 */
const PG_UNAVAILABLE = /^(08[0-9A-Z]{3}|53[0-3]00|57014|57P0[123]|58030|25006)$/;

/**
 * SQLite result codes (primary, with any extended code: `SQLITE_IOERR_WRITE`, `SQLITE_READONLY_DBMOVED`)
 * meaning "the database file cannot serve this now": locked past busy_timeout (BUSY, LOCKED),
 * disk or quota full (FULL), the file or its folder read-only (READONLY), an I/O error (IOERR),
 * the file or its journal cannot be opened (CANTOPEN), out of memory (NOMEM), a WAL lock protocol
 * failure (PROTOCOL). Not CORRUPT or NOTADB: waiting does not repair a damaged file.
 */
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|FULL|READONLY|IOERR|CANTOPEN|NOMEM|PROTOCOL)(_[A-Z_]+)?$/;

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

/** TypeORM errors of a data source that is not (or no longer) connected, or of a query runner released under a request when its connection broke (PostgreSQL stopped). */
const TYPEORM_NOT_CONNECTED = new Set([
  'ConnectionIsNotSetError',
  'CannotExecuteNotConnectedError',
  'QueryRunnerAlreadyReleasedError',
  'QueryRunnerProviderAlreadyReleasedError',
]);

function isUnavailable(error: Record<string, unknown>): boolean {
  const code = typeof error.code === 'string' ? error.code : '';
  if (NETWORK_CODES.has(code) || PG_UNAVAILABLE.test(code) || SQLITE_UNAVAILABLE.test(code)) return true;
  if (typeof error.name === 'string' && TYPEORM_NOT_CONNECTED.has(error.name)) return true;
  const message = typeof error.message === 'string' ? error.message : '';
  return PG_UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message));
}

/**
 * Tells whether `exception` means the database is unreachable, overloaded, too slow or cannot
 * store anything now — rather than a bug or a constraint — so the request should answer 503
 * `service_unavailable` with `Retry-After` (README "Operating", the table of faults:
 * README.md#faults). Looks at the error itself, TypeORM's `driverError` and `cause` chains
 * (depth ≤ 4). Covers connection refused/reset/timeouts, pg "Connection terminated", pg-pool and
 * query timeouts; PostgreSQL SQLSTATE class 08, 53000, 53100 (disk full), 53200 (out of memory),
 * 53300, 57014, 57P01-57P03, 58030 (I/O error), 25006 (read-only: a hot standby); SQLite
 * SQLITE_BUSY, SQLITE_LOCKED, SQLITE_FULL, SQLITE_READONLY, SQLITE_IOERR, SQLITE_CANTOPEN,
 * SQLITE_NOMEM and SQLITE_PROTOCOL with their extended codes. Returns false for anything else
 * (constraint violations are 409 elsewhere; the rest is a 500).
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
