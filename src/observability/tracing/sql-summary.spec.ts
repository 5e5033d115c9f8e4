import { describe, expect, it } from '@jest/globals';
import { summarizeSql } from './sql-summary.js';

describe('summarizeSql (span names of SQL statements)', () => {
  it.each([
    ['SELECT "Todo"."id" AS "Todo_id" FROM "todos" "Todo" WHERE "Todo"."id" = $1', 'SELECT todos', 'SELECT', 'todos'],
    ['INSERT INTO "todos" ("title") VALUES (?)', 'INSERT todos', 'INSERT', 'todos'],
    ['UPDATE "users" SET "name" = ? WHERE "id" = ?', 'UPDATE users', 'UPDATE', 'users'],
    ['DELETE FROM `tags` WHERE id = ?', 'DELETE tags', 'DELETE', 'tags'],
    ['  select count(*) from comments c join articles a on a.id = c.article_id', 'SELECT comments', 'SELECT', 'comments'],
    ['START TRANSACTION', 'START', 'START', undefined],
    ['COMMIT', 'COMMIT', 'COMMIT', undefined],
    ['EXPLAIN (FORMAT JSON) SELECT * FROM "todos"', 'EXPLAIN todos', 'EXPLAIN', 'todos'],
    [
      'WITH r AS (INSERT INTO "todos" ("title") VALUES ($1) RETURNING "id"), e AS (INSERT INTO "events" ("data_v1") VALUES ($2)) SELECT 1',
      'INSERT todos',
      'INSERT',
      'todos',
    ],
    ['with "page" as ( select id from articles ) select * from page', 'SELECT articles', 'SELECT', 'articles'],
    ['WITH', 'WITH', 'WITH', undefined],
    ['', 'SQL', 'SQL', undefined],
  ])('%s → %s', (sql, name, operation, table) => {
    expect(summarizeSql(sql)).toEqual({ name, operation, ...(table ? { table } : {}) });
  });

  it('never puts a literal value in the name', () => {
    expect(summarizeSql("SELECT * FROM users WHERE username = 'alice' AND password_hash = 'x'").name).toBe('SELECT users');
  });
});
