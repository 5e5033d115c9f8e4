import { describe, expect, it } from '@jest/globals';
import { operationOf } from './db-metrics.js';

describe('operationOf (the `operation` label of db_client_operation_duration_seconds: a bounded set)', () => {
  it.each([
    ['SELECT "t"."id" FROM "todos" "t"', 'SELECT'],
    ['  insert into "todos" ("title") VALUES ($1)', 'INSERT'],
    ['UPDATE "todos" SET "title" = $1', 'UPDATE'],
    ['DELETE FROM "todos" WHERE "id" = $1', 'DELETE'],
    ['WITH x AS (SELECT 1) SELECT * FROM x', 'WITH'],
    ['START TRANSACTION', 'START'],
    ['BEGIN TRANSACTION', 'BEGIN'],
    ['COMMIT', 'COMMIT'],
    ['ROLLBACK', 'ROLLBACK'],
    ['SAVEPOINT typeorm_1', 'SAVEPOINT'],
    ['EXPLAIN (FORMAT JSON) SELECT 1', 'EXPLAIN'],
    ['PRAGMA foreign_keys = ON', 'OTHER'],
    ['CREATE TABLE "x" ("id" integer)', 'OTHER'],
    ['', 'OTHER'],
    ['-- comment\nSELECT 1', 'OTHER'],
  ])('%p → %s', (sql, operation) => {
    expect(operationOf(sql)).toBe(operation);
  });

  it('is OTHER for anything that is not a string', () => {
    expect(operationOf({ text: 'SELECT 1' })).toBe('OTHER');
    expect(operationOf(undefined)).toBe('OTHER');
  });
});
