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
    ['wrapped in a cause', new Error('transaction failed', { cause: withCode('ECONNRESET') })],
    ['TypeORM: released query runner', Object.assign(new Error('Query runner already released'), { name: 'QueryRunnerAlreadyReleasedError' })],
  ])('%s → true', (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', queryFailed(withCode('23505'))],
    ['a foreign key violation', queryFailed(withCode('SQLITE_CONSTRAINT_FOREIGNKEY'))],
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
