import { describe, expect, it } from '@jest/globals';
import { buildDataSourceOptions } from './data-source.js';
import { poolClient, transactionSettings } from './pg-client.js';

const URL = 'postgres://app@db:5432/app';
/** The pool options do not depend on the schema. */
const NO_SCHEMA = { entities: [], migrations: [] };

/** The pool options TypeORM hands to pg (`extra`) for `connection`. */
function extra(connection?: Parameters<typeof buildDataSourceOptions>[4]): Record<string, unknown> {
  return (buildDataSourceOptions(URL, NO_SCHEMA, 7, 1500, connection) as { extra: Record<string, unknown> }).extra;
}

describe('buildDataSourceOptions on PostgreSQL: direct or behind a pooler (docs/operations.md#behind-a-connection-pooler)', () => {
  it('direct (default): statement_timeout and jit=off as start-up parameters, no per-transaction settings, prepared statements on', () => {
    expect(extra()).toMatchObject({
      max: 7,
      connectionTimeoutMillis: 1500,
      query_timeout: 2500,
      statement_timeout: 1500,
      options: '-c jit=off',
      Client: poolClient(),
      preparedStatements: true,
      transactionSettings: undefined,
    });
    expect(extra({ pooler: 'none' })).toEqual(extra());
  });

  it('DB_POOLER=transaction: no start-up parameter a pooler refuses; the settings go with each START TRANSACTION; the client bound stays', () => {
    const options = extra({ pooler: 'transaction' });
    expect(options).not.toHaveProperty('statement_timeout');
    expect(options).not.toHaveProperty('options');
    expect(options).toMatchObject({
      connectionTimeoutMillis: 1500,
      query_timeout: 2500,
      transactionSettings: 'SET LOCAL statement_timeout = 1500; SET LOCAL jit = off',
      preparedStatements: true,
    });
  });

  it('DB_PREPARED_STATEMENTS=false: statements unnamed, with or without a pooler', () => {
    expect(extra({ preparedStatements: false })).toMatchObject({ preparedStatements: false, statement_timeout: 1500 });
    expect(extra({ pooler: 'transaction', preparedStatements: false })).toMatchObject({ preparedStatements: false });
  });

  it('SQLite ignores the pooler settings', () => {
    expect(buildDataSourceOptions('sqlite::memory:', NO_SCHEMA, 7, 1500, { pooler: 'transaction', preparedStatements: false })).not.toHaveProperty('extra');
  });

  it('transactionSettings sends whole milliseconds', () => {
    expect(transactionSettings(2000.7)).toBe('SET LOCAL statement_timeout = 2000; SET LOCAL jit = off');
  });
});
