import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource } from 'typeorm';
import { ArticlesService } from '../src/articles/articles.service.js';
import { ARTICLES_FIELDS } from '../src/articles/articles.resource.js';
import type { AuthUser } from '../src/auth/auth-user.js';
import { COMMENTS_FIELDS } from '../src/comments/comments.resource.js';
import { CommentsService } from '../src/comments/comments.service.js';
import { cursorKey, encodeCursor } from '../src/common/list/cursor.js';
import { parseListQuery } from '../src/common/list/list-query.js';
import { createTestApp } from './setup/test-app.js';

/**
 * The list queries can be served from an index (README "Performance"; SPEC §4 lists): on a table
 * large enough for the planner to prefer an index when one fits (20,000 articles — 50 % published,
 * 30 % draft, 20 % archived — by 1,000 authors, 20,000 comments), the SQL each list runs — captured
 * from the service itself through TypeORM's logger, never copied by hand — is explained by the
 * database:
 * - PostgreSQL (`EXPLAIN (FORMAT JSON)`): no Seq Scan on the table, an index node reads it, the
 *   page's ids come out of the index already in order (no Sort under the Limit), and the exact
 *   `COUNT(*)` is an Index Only Scan where an index covers its conditions.
 * - SQLite (`EXPLAIN QUERY PLAN`): the inner query choosing the page's ids reads in index (or
 *   rowid) order without a temporary B-tree for the ORDER BY, and the count uses a covering index.
 * Each case also checks the page and total against a plain query, so the rewritten predicates
 * select exactly the rows the visibility rule allows.
 */
const DATABASE_URL = process.env.DATABASE_URL ?? '';
const onPostgres = /^postgres(ql)?:\/\//.test(DATABASE_URL);

const USERS = 1000;
const ARTICLES = 20_000;
const COMMENTS = 20_000;
/** An ordinary user with 10 published, 6 draft and 4 archived articles (see the seed). */
const ME: AuthUser = { id: 8, role: 'user' };
const ADMIN: AuthUser = { id: 1, role: 'admin' };
/** A published article with 10 comments. */
const COMMENTED_ARTICLE = 11;

interface Captured {
  sql: string;
  params: unknown[];
}

/** A PostgreSQL plan node (the fields used here). */
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/** A row of SQLite's EXPLAIN QUERY PLAN. */
interface SqlitePlanRow {
  id: number;
  parent: number;
  detail: string;
}

const sortTerms = Object.keys(ARTICLES_FIELDS.sortable).flatMap((field) => [field, `-${field}`]);

describe(`list query plans on ${onPostgres ? 'PostgreSQL (EXPLAIN (FORMAT JSON))' : 'SQLite (EXPLAIN QUERY PLAN; the PostgreSQL assertions run with DATABASE_URL=postgres://…)'}`, () => {
  let app: NestExpressApplication;
  let dataSource: DataSource;

  /** Runs `call` with TypeORM's logger replaced by one that records every statement; returns them. */
  async function capture(call: () => Promise<unknown>): Promise<Captured[]> {
    const captured: Captured[] = [];
    const original = dataSource.logger;
    const noop = () => undefined;
    const recorder = { logQuery: (sql: string, params?: unknown[]) => captured.push({ sql, params: params ?? [] }), logQueryError: noop, logQuerySlow: noop, logSchemaBuild: noop, logMigration: noop, log: noop };
    Object.assign(dataSource, { logger: recorder });
    try {
      await call();
    } finally {
      Object.assign(dataSource, { logger: original });
    }
    return captured;
  }

  /** The page query (ids chosen by an inner query) and the count queries on `table`. */
  function split(statements: Captured[], table: string): { rows: Captured; counts: Captured[] } {
    const own = statements.filter((s) => new RegExp(`FROM "${table}"`).test(s.sql));
    const rows = own.filter((s) => / IN \(SELECT /.test(s.sql) && !/COUNT\(\*\)/.test(s.sql));
    const counts = own.filter((s) => /COUNT\(\*\)/.test(s.sql));
    expect(rows).toHaveLength(1);
    expect(counts.length).toBeGreaterThanOrEqual(1);
    return { rows: rows[0], counts };
  }

  function nodes(plan: PlanNode): PlanNode[] {
    return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
  }

  async function pgPlan(statement: Captured): Promise<PlanNode> {
    const result = await dataSource.query<Array<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>>(`EXPLAIN (FORMAT JSON) ${statement.sql}`, statement.params);
    return result[0]['QUERY PLAN'][0].Plan;
  }

  async function sqlitePlan(statement: Captured): Promise<SqlitePlanRow[]> {
    return dataSource.query<SqlitePlanRow[]>(`EXPLAIN QUERY PLAN ${statement.sql}`, statement.params);
  }

  const INDEX_NODES = ['Index Scan', 'Index Only Scan', 'Bitmap Index Scan'];

  /**
   * Checks the plans of one list call on `table`: the page and the counts read through indexes;
   * `ordered`: the page's ids come out of the index in order (no sort); `countIndexOnly`: every
   * count reads the index alone.
   */
  async function expectIndexed(statements: Captured[], table: string, alias: string, countIndexOnly: boolean, ordered = true): Promise<string[]> {
    const { rows, counts } = split(statements, table);
    const summary: string[] = [];
    if (onPostgres) {
      const plan = nodes(await pgPlan(rows));
      summary.push(plan.map((n) => `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''}`).join(' > '));
      const onTable = plan.filter((n) => n['Relation Name'] === table);
      expect(onTable.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
      expect(onTable.some((n) => INDEX_NODES.includes(n['Node Type']))).toBe(true);
      // the Limit choosing the page's ids reads its input in order: no (incremental) sort below it
      const limits = plan.filter((n) => n['Node Type'] === 'Limit');
      expect(limits).toHaveLength(1);
      if (ordered) expect(nodes(limits[0]).filter((n) => /Sort/.test(n['Node Type'])).map((n) => n['Node Type'])).toEqual([]);
      for (const count of counts) {
        const countPlan = nodes(await pgPlan(count));
        summary.push(`count: ${countPlan.map((n) => `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''}`).join(' > ')}`);
        const scans = countPlan.filter((n) => n['Relation Name'] === table || INDEX_NODES.includes(n['Node Type']));
        expect(scans.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
        if (countIndexOnly) expect(scans.map((n) => n['Node Type'])).toEqual(scans.map(() => 'Index Only Scan'));
      }
    } else {
      const plan = await sqlitePlan(rows);
      summary.push(plan.map((r) => r.detail).join(' | '));
      const byId = new Map(plan.map((r) => [r.id, r]));
      const inSubquery = (row: SqlitePlanRow): boolean => {
        for (let parent = byId.get(row.parent); parent; parent = byId.get(parent.parent)) if (/SUBQUERY/.test(parent.detail)) return true;
        return false;
      };
      const inner = plan.filter(inSubquery);
      expect(inner.length).toBeGreaterThan(0);
      // reads in index order (or rowid order for id), never sorts the whole visible set
      if (ordered) expect(inner.filter((r) => /TEMP B-TREE/.test(r.detail)).map((r) => r.detail)).toEqual([]);
      for (const r of inner.filter((row) => new RegExp(`^(SCAN|SEARCH) ${alias}\\b`).test(row.detail))) {
        expect(r.detail).toMatch(/USING (COVERING )?INDEX|USING INTEGER PRIMARY KEY|^SCAN \w+$/);
      }
      for (const count of counts) {
        const countPlan = await sqlitePlan(count);
        summary.push(`count: ${countPlan.map((r) => r.detail).join(' | ')}`);
        const reads = countPlan.filter((r) => new RegExp(`^(SCAN|SEARCH) ${alias}\\b`).test(r.detail));
        if (countIndexOnly) for (const r of reads) expect(r.detail).toMatch(/USING COVERING INDEX/);
      }
    }
    return summary;
  }

  /** The visibility rule as a plain predicate, for the expected results. */
  const visibleSql = (caller: AuthUser) => (caller.role === 'admin' ? '1 = 1' : `(a.status = 'published' OR a.author_id = ${caller.id})`);

  async function listArticles(raw: Record<string, string>, caller: AuthUser) {
    let page: Awaited<ReturnType<ArticlesService['list']>> | undefined;
    const statements = await capture(async () => {
      page = await app.get(ArticlesService).list(parseListQuery(raw, ARTICLES_FIELDS), caller);
    });
    return { page: page!, statements };
  }

  /** The expected ids and total of an articles list, from a plain query. */
  async function expected(caller: AuthUser, where: string, orderBy: string, offset = 0): Promise<{ ids: number[]; total: number }> {
    const nulls = (direction: string) => (direction === 'DESC' ? 'NULLS FIRST' : 'NULLS LAST');
    const order = orderBy
      .split(',')
      .map((term) => term.trim().split(' '))
      .map(([column, direction = 'ASC']) => (onPostgres ? `${column} ${direction} ${nulls(direction)}` : `${column} IS NULL ${direction === 'DESC' ? 'DESC' : 'ASC'}, ${column} ${direction}`))
      .join(', ');
    const ids = await dataSource.query<Array<{ id: number }>>(`SELECT a.id FROM articles a WHERE ${visibleSql(caller)} AND ${where} ORDER BY ${order} LIMIT 20 OFFSET ${offset}`);
    const [{ count }] = await dataSource.query<Array<{ count: number | string }>>(`SELECT COUNT(*) AS count FROM articles a WHERE ${visibleSql(caller)} AND ${where}`);
    return { ids: ids.map((r) => Number(r.id)), total: Number(count) };
  }

  const plans: Record<string, string[]> = {};

  beforeAll(async () => {
    app = await createTestApp();
    dataSource = app.get(DataSource);
    const body = 'x'.repeat(200);
    if (onPostgres) {
      await dataSource.query(
        `INSERT INTO users (username, password_hash, name, role, created_at, updated_at)
         SELECT 'plan_user_' || n, 'x', 'Plan User ' || n, CASE WHEN n = 1 THEN 'admin' ELSE 'user' END, now(), now() FROM generate_series(1, ${USERS}) n`,
      );
      // statuses by n mod 10: 0-4 published, 5-7 draft, 8-9 archived; authors in blocks of 10; created_at shared by pairs (ties)
      await dataSource.query(
        `INSERT INTO articles (title, body, status, author_id, published_at, created_at, updated_at)
         SELECT 'Article ' || ((n * 7919) % ${ARTICLES}), '${body}',
           CASE WHEN n % 10 < 5 THEN 'published' WHEN n % 10 < 8 THEN 'draft' ELSE 'archived' END,
           1 + (n / 10) % ${USERS},
           CASE WHEN n % 10 < 5 THEN timestamptz '2026-01-01' + (n / 2) * interval '1 minute' + interval '1 hour' END,
           timestamptz '2026-01-01' + (n / 2) * interval '1 minute',
           timestamptz '2026-01-01' + (n / 2 + n % 100) * interval '1 minute'
         FROM generate_series(1, ${ARTICLES}) n`,
      );
      await dataSource.query(
        `INSERT INTO comments (body, article_id, author_id, created_at, updated_at)
         SELECT 'comment ' || n, 1 + 10 * (n % 2000), 1 + n % ${USERS}, timestamptz '2026-02-01' + (n / 3) * interval '1 second', now()
         FROM generate_series(1, ${COMMENTS}) n`,
      );
      // statistics for the planner and the visibility map for index-only scans (never in a transaction)
      for (const table of ['users', 'articles', 'comments']) await dataSource.query(`VACUUM ANALYZE ${table}`);
    } else {
      const series = (count: number) => `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ${count})`;
      const at = (minutes: string) => `strftime('%Y-%m-%d %H:%M:%f', '2026-01-01', '+' || (${minutes}) || ' minutes')`;
      await dataSource.query(
        `${series(USERS)} INSERT INTO users (username, password_hash, name, role, created_at, updated_at)
         SELECT 'plan_user_' || n, 'x', 'Plan User ' || n, CASE WHEN n = 1 THEN 'admin' ELSE 'user' END, ${at('0')}, ${at('0')} FROM g`,
      );
      await dataSource.query(
        `${series(ARTICLES)} INSERT INTO articles (title, body, status, author_id, published_at, created_at, updated_at)
         SELECT 'Article ' || ((n * 7919) % ${ARTICLES}), '${body}',
           CASE WHEN n % 10 < 5 THEN 'published' WHEN n % 10 < 8 THEN 'draft' ELSE 'archived' END,
           1 + (n / 10) % ${USERS},
           CASE WHEN n % 10 < 5 THEN ${at('n / 2 + 60')} END,
           ${at('n / 2')}, ${at('n / 2 + n % 100')}
         FROM g`,
      );
      await dataSource.query(
        `${series(COMMENTS)} INSERT INTO comments (body, article_id, author_id, created_at, updated_at)
         SELECT 'comment ' || n, 1 + 10 * (n % 2000), 1 + n % ${USERS}, ${at('n / 3')}, ${at('0')} FROM g`,
      );
      await dataSource.query('ANALYZE');
    }
  });

  afterAll(async () => {
    // the plans, for the README "Performance" section and for reading a failure
    if (process.env.SHOW_QUERY_PLANS) process.stdout.write(`${JSON.stringify(plans, null, 2)}\n`);
    await app?.close();
  });

  it.each<[string, AuthUser, Record<string, string>, string, string, boolean, boolean?]>([
    ['the default list as an ordinary user', ME, {}, '1 = 1', 'a.id', true],
    ['the default list as an admin', ADMIN, {}, '1 = 1', 'a.id', onPostgres],
    ['status=published&sort=-created_at as an ordinary user', ME, { status: 'published', sort: '-created_at' }, "a.status = 'published'", 'a.created_at DESC, a.id DESC', true],
    ['status=published&sort=-created_at as an admin', ADMIN, { status: 'published', sort: '-created_at' }, "a.status = 'published'", 'a.created_at DESC, a.id DESC', true],
    ['status=draft as the author', ME, { status: 'draft' }, "a.status = 'draft'", 'a.id', true],
    // the author's own drafts: found by (author_id, status), then sorted (a set bounded by one author's articles)
    ['status=draft&sort=-created_at as the author', ME, { status: 'draft', sort: '-created_at' }, "a.status = 'draft'", 'a.created_at DESC, a.id DESC', true, false],
    ['author=me&status=published', ME, { author: String(ME.id), status: 'published' }, `a.author_id = ${ME.id} AND a.status = 'published'`, 'a.id', true],
  ])('reads %s from an index, and counts from the index', async (name, caller, raw, where, orderBy, countIndexOnly, ordered = true) => {
    const { page, statements } = await listArticles(raw, caller);
    const want = await expected(caller, where, orderBy);
    expect(page.items.map((item) => item.id)).toEqual(want.ids);
    expect(page.total).toBe(want.total);
    expect(page.items.length).toBeGreaterThan(0);
    plans[name] = await expectIndexed(statements, 'articles', 'a', countIndexOnly, ordered);
  });

  it.each(sortTerms)('sorts by %s from an index, with status=published as an ordinary user and unfiltered as an admin', async (sort) => {
    const descending = sort.startsWith('-');
    const column = `a.${ARTICLES_FIELDS.sortable[descending ? sort.slice(1) : sort].replace(/^a\./, '')}`;
    const direction = descending ? 'DESC' : 'ASC';
    const orderBy = column === 'a.id' ? `a.id ${direction}` : `${column} ${direction}, a.id ${direction}`;
    for (const [caller, raw, where] of [
      [ME, { status: 'published', sort }, "a.status = 'published'"],
      [ADMIN, { sort }, '1 = 1'],
    ] as Array<[AuthUser, Record<string, string>, string]>) {
      const { page, statements } = await listArticles(raw, caller);
      const want = await expected(caller, where, orderBy);
      expect(page.items.map((item) => item.id)).toEqual(want.ids);
      expect(page.total).toBe(want.total);
      plans[`sort=${sort} ${caller.role}`] = await expectIndexed(statements, 'articles', 'a', caller.role !== 'admin' || onPostgres);
    }
  });

  it('reads a deep page (status=published&sort=-created_at, offset 9,000) from the index, in the same order as a plain query', async () => {
    const { page, statements } = await listArticles({ status: 'published', sort: '-created_at', page: '451', size: '20' }, ME);
    const want = await expected(ME, "a.status = 'published'", 'a.created_at DESC, a.id DESC', 9000);
    expect(page.items.map((item) => item.id)).toEqual(want.ids);
    expect(page.items).toHaveLength(20);
    plans['deep page'] = await expectIndexed(statements, 'articles', 'a', true);
  });

  it.each<[string, AuthUser, Record<string, string>, string, string[], boolean]>([
    ['status=published&sort=-created_at', ME, { status: 'published', sort: '-created_at' }, "a.status = 'published'", ['a.created_at DESC', 'a.id DESC'], true],
    ['sort=created_at as an admin', ADMIN, { sort: 'created_at' }, '1 = 1', ['a.created_at', 'a.id'], true],
    ['sort=-id as an admin', ADMIN, { sort: '-id' }, '1 = 1', ['a.id DESC'], true],
    ['sort=-updated_at&status=published', ME, { status: 'published', sort: '-updated_at' }, "a.status = 'published'", ['a.updated_at DESC', 'a.id DESC'], true],
  ])('reads a cursor page 9,000 rows deep (%s) with a keyset predicate from the index: no OFFSET, no sort, same rows as a plain query', async (name, caller, raw, where, order, countIndexOnly) => {
    const text = (column: string) => (onPostgres && !column.endsWith('.id') ? `CAST(${column} AS text)` : column);
    const columns = order.map((term) => term.split(' ')[0]);
    const [position] = await dataSource.query<Array<Record<string, string | number>>>(
      `SELECT ${columns.map((column, i) => `${text(column)} AS k${i}`).join(', ')} FROM articles a WHERE ${visibleSql(caller)} AND ${where} ORDER BY ${order.join(', ')} LIMIT 1 OFFSET 8999`,
    );
    const fingerprint = parseListQuery(raw, ARTICLES_FIELDS).fingerprint;
    const cursor = encodeCursor(cursorKey(undefined), fingerprint, { direction: 'after', values: columns.map((_, i) => (i === columns.length - 1 ? Number(position[`k${i}`]) : String(position[`k${i}`]))) });
    let page: Awaited<ReturnType<ArticlesService['list']>> | undefined;
    const statements = await capture(async () => {
      page = await app.get(ArticlesService).list(parseListQuery({ ...raw, cursor }, ARTICLES_FIELDS, { prefer: 'count=exact' }), caller);
    });
    const want = await expected(caller, where, order.join(', '), 9000);
    expect(page!.items.map((item) => item.id)).toEqual(want.ids);
    expect(page!.items).toHaveLength(20);
    const { rows } = split(statements, 'articles');
    expect(rows.sql).not.toMatch(/OFFSET/i);
    plans[`cursor ${name}`] = await expectIndexed(statements, 'articles', 'a', countIndexOnly);
  });

  it.each([
    ['the default order', {}, 'c.id'],
    ['sort=-created_at', { sort: '-created_at' }, 'c.created_at DESC, c.id DESC'],
    ['sort=created_at', { sort: 'created_at' }, 'c.created_at, c.id'],
  ])("reads an article's comments in %s from an index", async (name, raw, orderBy) => {
    let page: Awaited<ReturnType<CommentsService['list']>> | undefined;
    const statements = await capture(async () => {
      page = await app.get(CommentsService).list(COMMENTED_ARTICLE, parseListQuery(raw, COMMENTS_FIELDS), ME);
    });
    const want = await dataSource.query<Array<{ id: number }>>(`SELECT c.id FROM comments c WHERE c.article_id = ${COMMENTED_ARTICLE} ORDER BY ${orderBy} LIMIT 20`);
    expect(page!.items.map((item) => item.id)).toEqual(want.map((r) => Number(r.id)));
    expect(page!.total).toBe(10);
    plans[`comments ${name}`] = await expectIndexed(statements, 'comments', 'c', true);
  });
});
