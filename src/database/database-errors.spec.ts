import { describe, expect, it } from '@jest/globals';
import { QueryFailedError } from 'typeorm';
import { isDatabaseUnavailable } from './database-errors.js';

const withCode = (code: string, message = 'boom') => Object.assign(new Error(message), { code });
const queryFailed = (driverError: Error) => new QueryFailedError('SELECT 1', [], driverError);

describe('isDatabaseUnavailable (→ 503 service_unavailable)', () => {
  it.each([
    ['connection refused', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['connection reset', withCode('ECONNRESET')],
    ['socket timeout', withCode('ETIMEDOUT')],
    ['host unknown', withCode('ENOTFOUND')],
    ['pg: connection lost mid-query', new Error('Connection terminated unexpectedly')],
    ['pg: connect timeout', new Error('Connection terminated due to connection timeout')],
    ['pg-pool: no slot within connectionTimeoutMillis', new Error('timeout exceeded when trying to connect')],
    ['pg: query_timeout', new Error('Query read timeout')],
    ['pg: client already broken', new Error('Client has encountered a connection error and is not queryable')],
    ['SQLSTATE 08006 connection_failure', queryFailed(withCode('08006'))],
    ['SQLSTATE 08001 cannot establish', withCode('08001')],
    ['SQLSTATE 57014 statement_timeout', queryFailed(withCode('57014', 'canceling statement due to statement timeout'))],
    ['SQLSTATE 57P01 admin_shutdown', queryFailed(withCode('57P01'))],
    ['SQLSTATE 57P02 crash_shutdown', withCode('57P02')],
    ['SQLSTATE 57P03 cannot_connect_now', withCode('57P03')],
    ['SQLSTATE 53300 too_many_connections', withCode('53300')],
    ['SQLite busy past busy_timeout', queryFailed(withCode('SQLITE_BUSY', 'database is locked'))],
    ['SQLite busy snapshot', withCode('SQLITE_BUSY_SNAPSHOT')],
    ['SQLite locked table', withCode('SQLITE_LOCKED')],
    ['SQLite locked shared cache', withCode('SQLITE_LOCKED_SHAREDCACHE')],
    ['SQLite disk full', queryFailed(withCode('SQLITE_FULL', 'database or disk is full'))],
    ['SQLite read-only (query_only, file mode)', queryFailed(withCode('SQLITE_READONLY', 'attempt to write a readonly database'))],
    ['SQLite read-only: file moved', withCode('SQLITE_READONLY_DBMOVED')],
    ['SQLite read-only: cannot take the lock', withCode('SQLITE_READONLY_CANTLOCK')],
    ['SQLite I/O error', withCode('SQLITE_IOERR')],
    ['SQLite I/O error on write', queryFailed(withCode('SQLITE_IOERR_WRITE', 'disk I/O error'))],
    ['SQLite I/O error on fsync', withCode('SQLITE_IOERR_FSYNC')],
    ['SQLite cannot open', withCode('SQLITE_CANTOPEN')],
    ['SQLite out of memory', withCode('SQLITE_NOMEM')],
    ['SQLite WAL lock protocol', withCode('SQLITE_PROTOCOL')],
    ['SQLSTATE 53000 insufficient_resources', withCode('53000')],
    ['SQLSTATE 53100 disk_full', queryFailed(withCode('53100', 'could not extend file: No space left on device'))],
    ['SQLSTATE 53200 out_of_memory', queryFailed(withCode('53200'))],
    ['SQLSTATE 58030 io_error', queryFailed(withCode('58030'))],
    ['SQLSTATE 25006 read_only_sql_transaction (hot standby)', queryFailed(withCode('25006', 'cannot execute INSERT in a read-only transaction'))],
    ['SQLite disk full as the cause of a failed COMMIT', new Error('commit failed', { cause: queryFailed(withCode('SQLITE_FULL')) })],
    ['wrapped in a cause', new Error('transaction failed', { cause: withCode('ECONNRESET') })],
    ['TypeORM: released query runner', Object.assign(new Error('Query runner already released'), { name: 'QueryRunnerAlreadyReleasedError' })],
    [
      'TypeORM: a transaction on a released query runner',
      Object.assign(new Error('Entity manager / query runner already released'), { name: 'QueryRunnerProviderAlreadyReleasedError' }),
    ],
  ])('%s → true', (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', queryFailed(withCode('23505'))],
    ['a foreign key violation', queryFailed(withCode('SQLITE_CONSTRAINT_FOREIGNKEY'))],
    ['SQLite: a corrupt file (waiting does not repair it)', withCode('SQLITE_CORRUPT')],
    ['SQLite: not a database', withCode('SQLITE_NOTADB')],
    ['SQLite: an SQL error (a bug)', queryFailed(withCode('SQLITE_ERROR', 'no such table: x'))],
    ['SQLite: a code that only starts like one of ours', withCode('SQLITE_FULLNESS')],
    ['SQLSTATE 53400 configuration_limit_exceeded', withCode('53400')],
    ['SQLSTATE 25P02 in_failed_sql_transaction', withCode('25P02')],
    ['a syntax error (a bug)', queryFailed(withCode('42601'))],
    ['a plain error', new Error('something else')],
    ['a string', 'Connection terminated'],
    ['null', null],
    ['undefined', undefined],
  ])('%s → false (409 or 500 elsewhere)', (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });

  it('does not loop on a cyclic cause chain', () => {
    const error = new Error('a') as Error & { cause?: unknown };
    error.cause = error;
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
