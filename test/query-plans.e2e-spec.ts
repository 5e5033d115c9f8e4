import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource, getMetadataArgsStorage } from 'typeorm';
import { ArticlesService } from '../src/articles/articles.service.js';
import { ARTICLES_FIELDS } from '../src/articles/articles.resource.js';
import type { AuthUser } from '../src/common/caller/auth-user.js';
import { COMMENTS_FIELDS } from '../src/comments/comments.resource.js';
import { EVENTS_FIELDS as EVENTS_SPEC } from '../src/events/events.resource.js';
import { EventsService } from '../src/events/events.service.js';
import { CommentsService } from '../src/comments/comments.service.js';
import { cursorKey, encodeCursor } from '../src/common/list/cursor.js';
import { type ListQuery, parseListQuery } from '../src/common/list/list-query.js';
import type { ListSpec } from '../src/common/list/list-query.js';
import type { ResourceDeclaration } from '../src/common/resources/define-resource.js';
import { RESOURCE_REGISTRY, type ResourceRegistry } from '../src/common/resources/resource-registry.js';
import { RESOURCES } from '../src/resources.js';
import { createTestApp } from './setup/test-app.js';
import { EXPANDED_COMMENTS } from '../src/articles/article-comments.expansion.js';
import { applyExpansions, type ExpandDef, type ExpandItem } from '../src/common/expand/expansion.js';

/**
 * The list queries can be served from an index (docs/performance.md#lists-an-index-serves; docs/lists.md#performance): on a table
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
/** A published article with {@link SYNC_ROWS} comments (change sync within one article). */
const BUSY_ARTICLE = 3;
/** Rows of each table change sync is checked on (todos and orders: a quarter of them ME's). */
const SYNC_ROWS = 8000;

interface Captured {
  sql: string;
  params: unknown[];
}

/** A PostgreSQL plan node (the fields used here). */
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** A row of SQLite's EXPLAIN QUERY PLAN. */
interface SqlitePlanRow {
  id: number;
  parent: number;
  detail: string;
}

// every column sort key (relevance needs q: the search cases below)
const sortTerms = Object.keys(ARTICLES_FIELDS.sortable)
  .filter((field) => field !== 'relevance')
  .flatMap((field) => [field, `-${field}`]);

describe(`list query plans on ${onPostgres ? 'PostgreSQL (EXPLAIN (FORMAT JSON))' : 'SQLite (EXPLAIN QUERY PLAN; the PostgreSQL assertions run with DATABASE_URL=postgres://…)'}`, () => {
  let app: NestExpressApplication;
  let dataSource: DataSource;

  /** Runs `call` with TypeORM's logger replaced by one that records every statement; returns them. */
  async function capture(call: () => Promise<unknown>): Promise<Captured[]> {
    const captured: Captured[] = [];
    const original = dataSource.logger;
    const noop = () => undefined;
    const recorder = {
      logQuery: (sql: string, params?: unknown[]) => captured.push({ sql, params: params ?? [] }),
      logQueryError: noop,
      logQuerySlow: noop,
      logSchemaBuild: noop,
      logMigration: noop,
      log: noop,
    };
    Object.assign(dataSource, { logger: recorder });
    try {
      await call();
    } finally {
      Object.assign(dataSource, { logger: original });
    }
    return captured;
  }

  /** The page query (ids chosen by an inner query) and the count queries on `table` (at least one unless `counted` is false). */
  function split(statements: Captured[], table: string, counted = true): { rows: Captured; counts: Captured[] } {
    const own = statements.filter((s) => new RegExp(`FROM "${table}"`).test(s.sql));
    const rows = own.filter((s) => / IN \(SELECT /.test(s.sql) && !/COUNT\(\*\)/.test(s.sql));
    const counts = own.filter((s) => /COUNT\(\*\)/.test(s.sql));
    expect(rows).toHaveLength(1);
    if (counted) expect(counts.length).toBeGreaterThanOrEqual(1);
    else expect(counts).toEqual([]);
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
  async function expectIndexed(
    statements: Captured[],
    table: string,
    alias: string,
    countIndexOnly: boolean,
    ordered = true,
    counted = true,
  ): Promise<string[]> {
    const { rows, counts } = split(statements, table, counted);
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
      if (ordered)
        expect(
          nodes(limits[0])
            .filter((n) => /Sort/.test(n['Node Type']))
            .map((n) => n['Node Type']),
        ).toEqual([]);
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
  /** `orderBy` (`a.published_at DESC, a.id DESC`) as an ORDER BY with NULL the largest value, written out plainly. */
  function plainOrder(orderBy: string): string {
    const nulls = (direction: string) => (direction === 'DESC' ? 'NULLS FIRST' : 'NULLS LAST');
    return orderBy
      .split(',')
      .map((term) => term.trim().split(' '))
      .map(([column, direction = 'ASC']) =>
        onPostgres ? `${column} ${direction} ${nulls(direction)}` : `${column} IS NULL ${direction === 'DESC' ? 'DESC' : 'ASC'}, ${column} ${direction}`,
      )
      .join(', ');
  }

  async function expected(caller: AuthUser, where: string, orderBy: string, offset = 0): Promise<{ ids: number[]; total: number }> {
    const order = plainOrder(orderBy);
    const ids = await dataSource.query<Array<{ id: number }>>(
      `SELECT a.id FROM articles a WHERE ${visibleSql(caller)} AND ${where} ORDER BY ${order} LIMIT 20 OFFSET ${offset}`,
    );
    const [{ count }] = await dataSource.query<Array<{ count: number | string }>>(
      `SELECT COUNT(*) AS count FROM articles a WHERE ${visibleSql(caller)} AND ${where}`,
    );
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
      // change sync: rows whose updated_at rises with n (ties by pairs); a quarter of the todos and orders are ME's
      const changed = `timestamptz '2026-03-01' + (n / 2) * interval '1 minute'`;
      const series = `generate_series(1, ${SYNC_ROWS}) n`;
      await dataSource.query(
        `INSERT INTO users (username, password_hash, name, role, created_at, updated_at) SELECT 'sync_user_' || n, 'x', 'Sync User ' || n, 'user', now(), ${changed} FROM ${series}`,
      );
      await dataSource.query(`INSERT INTO tags (name, created_at, updated_at) SELECT 'sync-tag-' || n, now(), ${changed} FROM ${series}`);
      // two thirds of the articles carry one or two of those tags (the page statement reads their names)
      await dataSource.query(
        `INSERT INTO article_tags (article_id, tag_id)
         SELECT a.id, t.id FROM generate_series(1, ${ARTICLES}) n
           INNER JOIN articles a ON a.title = 'Article ' || ((n * 7919) % ${ARTICLES}) AND n % 3 <> 0
           INNER JOIN tags t ON t.name IN ('sync-tag-' || (1 + n % ${SYNC_ROWS}), 'sync-tag-' || (1 + (6 * n + 1) % ${SYNC_ROWS}))
         ON CONFLICT DO NOTHING`,
      );
      await dataSource.query(
        `INSERT INTO comments (body, article_id, author_id, created_at, updated_at) SELECT 'busy ' || n, ${BUSY_ARTICLE}, 1 + n % ${USERS}, now(), ${changed} FROM ${series}`,
      );
      await dataSource.query(
        `INSERT INTO todos (title, status, owner_id, created_at, updated_at) SELECT 'todo ' || n, 'pending', CASE WHEN n % 4 = 0 THEN ${ME.id} ELSE 1 + n % ${USERS} END, now(), ${changed} FROM ${series}`,
      );
      await dataSource.query(
        `INSERT INTO orders (user_id, currency, status, total_cents, created_at, updated_at) SELECT CASE WHEN n % 4 = 0 THEN ${ME.id} ELSE 1 + n % ${USERS} END, 'EUR', 'pending', n, now(), ${changed} FROM ${series}`,
      );
      await dataSource.query(
        `INSERT INTO oauth_clients (client_id, name, redirect_uris, scopes, confidential, created_at, updated_at) SELECT 'sync-client-' || n, 'Client ' || n, 'https://app.example/cb', 'todos:read', false, now(), ${changed} FROM ${series}`,
      );
      // the event log: created_at rising with n (ties by pairs), a quarter ME's, types in rotation
      await dataSource.query(
        `INSERT INTO events (event_id, type, owner_id, resource_id, created_at, data_v1, data_v2)
         SELECT 'evt_' || lpad(to_hex(n), 32, '0'), (ARRAY['todo.created', 'todo.updated', 'order.paid', 'comment.created'])[1 + n % 4],
           CASE WHEN n % 4 = 0 THEN ${ME.id} ELSE 1 + n % ${USERS} END, n, ${changed}, '{}', '{}' FROM ${series}`,
      );
      // statistics for the planner and the visibility map for index-only scans (never in a transaction)
      for (const table of [
        'users',
        'articles',
        'article_tags',
        'comments',
        'tags',
        'todos',
        'orders',
        'oauth_clients',
        'events',
        'articles_search',
        'comments_search',
      ])
        await dataSource.query(`VACUUM ANALYZE ${table}`);
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
      const changed = `strftime('%Y-%m-%d %H:%M:%f', '2026-03-01', '+' || (n / 2) || ' minutes')`;
      const sync = (sql: string) => dataSource.query(`${series(SYNC_ROWS)} ${sql}`);
      await sync(
        `INSERT INTO users (username, password_hash, name, role, created_at, updated_at) SELECT 'sync_user_' || n, 'x', 'Sync User ' || n, 'user', ${at('0')}, ${changed} FROM g`,
      );
      await sync(`INSERT INTO tags (name, created_at, updated_at) SELECT 'sync-tag-' || n, ${at('0')}, ${changed} FROM g`);
      // two thirds of the articles carry one or two of those tags (the page statement reads their names).
      // The ids are computed, not joined: the reset database numbers articles and tags from 1 in insertion
      // order (article n is the n-th row above, tag `sync-tag-k` has id k; the foreign keys check it).
      // A join on title and name was planned with both tables outside the series when an earlier test
      // file had left statistics of small tables in sqlite_stat1 — 20,000 × 8,000 × 20,000 steps, minutes in CI
      await dataSource.query(
        `${series(ARTICLES)} INSERT OR IGNORE INTO article_tags (article_id, tag_id)
         SELECT n, 1 + n % ${SYNC_ROWS} FROM g WHERE n % 3 <> 0
         UNION ALL SELECT n, 1 + (6 * n + 1) % ${SYNC_ROWS} FROM g WHERE n % 3 <> 0`,
      );
      await sync(
        `INSERT INTO comments (body, article_id, author_id, created_at, updated_at) SELECT 'busy ' || n, ${BUSY_ARTICLE}, 1 + n % ${USERS}, ${at('0')}, ${changed} FROM g`,
      );
      await sync(
        `INSERT INTO todos (title, status, owner_id, created_at, updated_at) SELECT 'todo ' || n, 'pending', CASE WHEN n % 4 = 0 THEN ${ME.id} ELSE 1 + n % ${USERS} END, ${at('0')}, ${changed} FROM g`,
      );
      await sync(
        `INSERT INTO orders (user_id, currency, status, total_cents, created_at, updated_at) SELECT CASE WHEN n % 4 = 0 THEN ${ME.id} ELSE 1 + n % ${USERS} END, 'EUR', 'pending', n, ${at('0')}, ${changed} FROM g`,
      );
      await sync(
        `INSERT INTO oauth_clients (client_id, name, redirect_uris, scopes, confidential, created_at, updated_at) SELECT 'sync-client-' || n, 'Client ' || n, 'https://app.example/cb', 'todos:read', 0, ${at('0')}, ${changed} FROM g`,
      );
      await sync(
        `INSERT INTO events (event_id, type, owner_id, resource_id, created_at, data_v1, data_v2)
         SELECT 'evt_' || printf('%032x', n), CASE n % 4 WHEN 0 THEN 'todo.created' WHEN 1 THEN 'todo.updated' WHEN 2 THEN 'order.paid' ELSE 'comment.created' END,
           CASE WHEN n % 4 = 0 THEN ${ME.id} ELSE 1 + n % ${USERS} END, n, ${changed}, '{}', '{}' FROM g`,
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
    [
      'status=published&sort=-created_at as an ordinary user',
      ME,
      { status: 'published', sort: '-created_at' },
      "a.status = 'published'",
      'a.created_at DESC, a.id DESC',
      true,
    ],
    [
      'status=published&sort=-created_at as an admin',
      ADMIN,
      { status: 'published', sort: '-created_at' },
      "a.status = 'published'",
      'a.created_at DESC, a.id DESC',
      true,
    ],
    ['status=draft as the author', ME, { status: 'draft' }, "a.status = 'draft'", 'a.id', true],
    // the author's own drafts: found by (author_id, status), then sorted (a set bounded by one author's articles)
    [
      'status=draft&sort=-created_at as the author',
      ME,
      { status: 'draft', sort: '-created_at' },
      "a.status = 'draft'",
      'a.created_at DESC, a.id DESC',
      true,
      false,
    ],
    ['author=me&status=published', ME, { author: String(ME.id), status: 'published' }, `a.author_id = ${ME.id} AND a.status = 'published'`, 'a.id', true],
  ])('reads %s from an index, and counts from the index', async (name, caller, raw, where, orderBy, countIndexOnly, ordered = true) => {
    const { page, statements } = await listArticles(raw, caller);
    const want = await expected(caller, where, orderBy);
    expect(page.items.map((item) => item.id)).toEqual(want.ids);
    expect(page.total).toBe(want.total);
    expect(page.items.length).toBeGreaterThan(0);
    plans[name] = await expectIndexed(statements, 'articles', 'a', countIndexOnly, ordered);
  });

  // the filter operators (docs/lists.md#filter-operators), on selective values: `[prefix]` reads a range of a
  // `title COLLATE "C"` index on PostgreSQL (the `(…, title)` ones on SQLite), `[contains]` a trigram index on
  // PostgreSQL (SQLite reads the table: no index serves a substring), `[ne]` on an enumeration and `[in]` become
  // the other values of the equality filter, `[null]` an IS NULL beside the author's index
  it.each<[string, AuthUser, Record<string, string>, string, string, boolean]>([
    ['title[prefix]=Article 1234 as an ordinary user', ME, { 'title[prefix]': 'Article 1234' }, "substr(a.title, 1, 12) = 'Article 1234'", 'a.id', false],
    [
      'title[prefix]=Article 1234&sort=title as an admin',
      ADMIN,
      { 'title[prefix]': 'Article 1234', sort: 'title' },
      "substr(a.title, 1, 12) = 'Article 1234'",
      'a.title, a.id',
      !onPostgres,
    ],
    ['title[contains]=cle 1234 as an admin', ADMIN, { 'title[contains]': 'cle 1234' }, "a.title LIKE '%cle 1234%'", 'a.id', !onPostgres],
    ['title[contains]=CLE 1234 as an ordinary user', ME, { 'title[contains]': 'CLE 1234' }, "a.title LIKE '%cle 1234%'", 'a.id', false],
    ['status[ne]=published as the author', ME, { 'status[ne]': 'published' }, "a.status <> 'published'", 'a.id', false],
    [
      'status[in]=draft,archived&author=me',
      ME,
      { 'status[in]': 'draft,archived', author: String(ME.id) },
      `a.status IN ('draft', 'archived') AND a.author_id = ${ME.id}`,
      'a.id',
      false,
    ],
    [
      'published_at[null]=true&author=me',
      ME,
      { 'published_at[null]': 'true', author: String(ME.id) },
      `a.published_at IS NULL AND a.author_id = ${ME.id}`,
      'a.id',
      false,
    ],
    // full-text search (docs/lists.md#full-text-search-q): the GIN index on the tsvector on PostgreSQL, the FTS5 table on SQLite
    ['q=7919 as an ordinary user', ME, { q: '7919' }, "a.title = 'Article 7919'", 'a.id', false],
    ['q=article 1234&sort=-relevance as an admin', ADMIN, { q: 'article 1234', sort: '-relevance' }, "a.title = 'Article 1234'", 'a.id', false],
    [
      'q="article 7919"&status=published as an ordinary user',
      ME,
      { q: '"article 7919"', status: 'published' },
      "a.title = 'Article 7919' AND a.status = 'published'",
      'a.id',
      false,
    ],
  ])('reads %s from an index', async (name, caller, raw, where, orderBy, ordered) => {
    const { page, statements } = await listArticles(raw, caller);
    const want = await expected(caller, where, orderBy);
    expect(page.items.map((item) => item.id)).toEqual(want.ids);
    expect(page.total).toBe(want.total);
    expect(page.items.length).toBeGreaterThan(0);
    plans[name] = await expectIndexed(statements, 'articles', 'a', false, ordered);
  });

  it.each<[string, AuthUser, Record<string, string>]>([
    ['the default list as an ordinary user', ME, {}],
    ['status=published&sort=-created_at as an admin', ADMIN, { status: 'published', sort: '-created_at' }],
  ])('reads the tag names of %s in the page statement, from the article_tags primary key (no statement of their own)', async (name, caller, raw) => {
    const { page, statements } = await listArticles(raw, caller);
    const ids = page.items.map((item) => Number(item.id));
    expect(ids.length).toBeGreaterThan(0);
    const links = await dataSource.query<Array<{ article_id: number | string; name: string }>>(
      `SELECT l.article_id, t.name FROM article_tags l INNER JOIN tags t ON t.id = l.tag_id WHERE l.article_id IN (${ids.join(', ')})`,
    );
    const want = (id: number) =>
      links
        .filter((link) => Number(link.article_id) === id)
        .map((link) => link.name)
        .sort();
    expect(page.items.map((item) => item.tags)).toEqual(ids.map(want));
    expect(page.items.some((item) => (item.tags ?? []).length > 1)).toBe(true);
    // one statement reads the tags: the page's
    const reading = statements.filter((st) => /article_tags/.test(st.sql));
    expect(reading).toHaveLength(1);
    const { rows } = split(statements, 'articles');
    expect(reading[0]).toBe(rows);
    if (onPostgres) {
      // the links of each row are found by their primary key (article_id, tag_id): an index scan, or a bitmap heap scan of one
      const plan = nodes(await pgPlan(rows));
      const onLinks = plan.filter((n) => n['Relation Name'] === 'article_tags');
      expect(onLinks.length).toBeGreaterThan(0);
      expect(onLinks.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
      expect(plan.some((n) => INDEX_NODES.includes(n['Node Type']) && /\(article_id = a\.id\)/.test(n['Index Cond'] ?? ''))).toBe(true);
    } else {
      const onLinks = (await sqlitePlan(rows)).filter((r) => /^(SCAN|SEARCH) atl\b/.test(r.detail));
      expect(onLinks.length).toBeGreaterThan(0);
      expect(onLinks.filter((r) => !/^SEARCH atl USING (COVERING )?INDEX/.test(r.detail))).toEqual([]);
    }
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
  ])(
    'reads a cursor page 9,000 rows deep (%s) with a keyset predicate from the index: no OFFSET, no sort, same rows as a plain query',
    async (name, caller, raw, where, order, countIndexOnly) => {
      const text = (column: string) => (onPostgres && !column.endsWith('.id') ? `CAST(${column} AS text)` : column);
      const columns = order.map((term) => term.split(' ')[0]);
      const [position] = await dataSource.query<Array<Record<string, string | number>>>(
        `SELECT ${columns.map((column, i) => `${text(column)} AS k${i}`).join(', ')} FROM articles a WHERE ${visibleSql(caller)} AND ${where} ORDER BY ${order.join(', ')} LIMIT 1 OFFSET 8999`,
      );
      const fingerprint = parseListQuery(raw, ARTICLES_FIELDS).fingerprint;
      const cursor = encodeCursor(cursorKey(undefined), fingerprint, {
        direction: 'after',
        values: columns.map((_, i) => (i === columns.length - 1 ? Number(position[`k${i}`]) : String(position[`k${i}`]))),
      });
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
    },
  );

  /**
   * Rows the database reads from the table and its indexes for one statement (EXPLAIN ANALYZE on
   * PostgreSQL: the rows every scan node returned or filtered away, times its loops).
   */
  async function rowsRead(statement: Captured, table: string): Promise<number> {
    const result = await dataSource.query<Array<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${statement.sql}`,
      statement.params,
    );
    return nodes(result[0]['QUERY PLAN'][0].Plan)
      .filter((n) => n['Relation Name'] === table)
      .reduce((sum, n) => sum + ((n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0)) * (n['Actual Loops'] ?? 1), 0);
  }

  // SQLite has no incremental sort: for mixed directions its planner sorts the rows past the bound
  // (on page 1 all of them); among the NULLs it skip-scans (status, published_at, id) and sorts the
  // NULLs past the position. Only PostgreSQL's plan is checked for those (`seeksOnSqlite` false).
  it.each<[string, AuthUser, Record<string, string>, string, number, boolean?]>([
    ['sort=published_at (NULL last), a position among the values', ADMIN, { sort: 'published_at' }, 'a.published_at, a.id', 6000],
    ['sort=published_at, a page across the last values and the first NULLs', ADMIN, { sort: 'published_at' }, 'a.published_at, a.id', 9990, false],
    ['sort=published_at, a position among the NULLs', ADMIN, { sort: 'published_at' }, 'a.published_at, a.id', 15000, false],
    ['sort=published_at as an ordinary user (published or own)', ME, { sort: 'published_at' }, 'a.published_at, a.id', 6000],
    ['sort=-published_at (NULL first), a position among the values', ADMIN, { sort: '-published_at' }, 'a.published_at DESC, a.id DESC', 15000],
    ['sort=-published_at, a position among the NULLs', ADMIN, { sort: '-published_at' }, 'a.published_at DESC, a.id DESC', 6000, false],
    [
      'sort=-published_at,title (mixed directions), a position among the values',
      ADMIN,
      { sort: '-published_at,title' },
      'a.published_at DESC, a.title, a.id DESC',
      15000,
      false,
    ],
    ['sort=title,-created_at (mixed directions)', ADMIN, { sort: 'title,-created_at' }, 'a.title, a.created_at DESC, a.id', 9000, false],
  ])(
    'a cursor page deep in the list on a nullable key or mixed directions (%s) is read from the position, not from the start: same rows as a plain query',
    async (name, caller, raw, orderBy, depth, seeksOnSqlite = true) => {
      const terms = orderBy.split(',').map((term) => term.trim().split(' ')[0]);
      const text = (column: string) => (onPostgres && /_at$/.test(column) ? `CAST(${column} AS text)` : column);
      const [position] = await dataSource.query<Array<Record<string, string | number | null>>>(
        `SELECT ${terms.map((column, i) => `${text(column)} AS k${i}`).join(', ')} FROM articles a WHERE ${visibleSql(caller)} ORDER BY ${plainOrder(orderBy)} LIMIT 1 OFFSET ${depth - 1}`,
      );
      const values = terms.map((column, i) => {
        const value = position[`k${i}`];
        return value === null ? null : column === 'a.id' ? Number(value) : String(value);
      });
      const cursor = encodeCursor(cursorKey(undefined), parseListQuery(raw, ARTICLES_FIELDS).fingerprint, { direction: 'after', values });
      let page: Awaited<ReturnType<ArticlesService['list']>> | undefined;
      const statements = await capture(async () => {
        page = await app.get(ArticlesService).list(parseListQuery({ ...raw, cursor }, ARTICLES_FIELDS), caller);
      });
      const want = await expected(caller, '1 = 1', orderBy, depth);
      expect(page!.items.map((item) => item.id)).toEqual(want.ids);
      expect(page!.items).toHaveLength(20);
      // the page's ids: one inner query, or one query per part read (a nullable key's values, then its NULLs)
      const reads = statements.filter((st) => /FROM "articles"/.test(st.sql) && !/COUNT\(\*\)/.test(st.sql));
      expect(reads.length).toBeGreaterThanOrEqual(1);
      for (const st of reads) expect(st.sql).not.toMatch(/OFFSET/i);
      if (onPostgres) {
        let read = 0;
        const summary: string[] = [];
        for (const st of reads) {
          const plan = nodes(await pgPlan(st));
          summary.push(plan.map((n) => `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''}`).join(' > '));
          expect(plan.filter((n) => n['Relation Name'] === 'articles' && n['Node Type'] === 'Seq Scan')).toEqual([]);
          read += await rowsRead(st, 'articles');
        }
        plans[`deep ${name}`] = summary;
        // a page (and the row after it) from each part read, and its rows: not the thousands before the position
        expect(read).toBeLessThan(300);
      } else {
        const summary: string[] = [];
        for (const st of reads) {
          const plan = await sqlitePlan(st);
          summary.push(plan.map((r) => r.detail).join(' | '));
          if (!seeksOnSqlite) continue;
          // every read of the table seeks to the position in an index (SEARCH), none scans it from the
          // start; a part's ids come in index order (the page's rows by id are sorted, 21 of them)
          const scans = plan.filter((r) => /^(SCAN|SEARCH) a\b/.test(r.detail));
          expect(scans.length).toBeGreaterThan(0);
          for (const r of scans) expect(r.detail).toMatch(/^SEARCH a USING (COVERING )?INDEX \w+ \(|^SEARCH a USING INTEGER PRIMARY KEY/);
          const inner = / IN \(SELECT /.test(st.sql) ? plan.filter((r) => r.parent !== 0) : / IN \(/.test(st.sql) ? [] : plan;
          expect(inner.filter((r) => /TEMP B-TREE/.test(r.detail)).map((r) => r.detail)).toEqual([]);
        }
        plans[`deep ${name}`] = summary;
      }
    },
  );

  it('Prefer: count=estimated on 20,000 articles: the planner estimate without a count query on PostgreSQL, the exact count on SQLite', async () => {
    let page: Awaited<ReturnType<ArticlesService['list']>> | undefined;
    const statements = await capture(async () => {
      page = await app.get(ArticlesService).list(parseListQuery({}, ARTICLES_FIELDS, { prefer: 'count=estimated' }), ADMIN);
    });
    const counts = statements.filter((st) => /COUNT\(\*\)/.test(st.sql));
    if (onPostgres) {
      expect(page!.info.counted).toBe('estimated');
      expect(counts).toEqual([]);
      expect(statements.some((st) => /^EXPLAIN \(FORMAT JSON\)/.test(st.sql))).toBe(true);
      // the statistics of VACUUM ANALYZE: close to the 20,000 rows, not counted
      expect(page!.total).toBeGreaterThan(ARTICLES * 0.9);
      expect(page!.total).toBeLessThan(ARTICLES * 1.1);
    } else {
      expect(page!.info.counted).toBe('exact');
      expect(page!.total).toBe(ARTICLES);
      expect(counts).toHaveLength(1);
    }
  });

  const SYNC_SINCE = '2026-03-01T00:10:00.000Z';
  /** The table of an entity (`@Entity('todos')`), known before any DataSource. */
  const tableOf = (entity: Function) => getMetadataArgsStorage().tables.find((table) => table.target === entity)!.name!;
  // every declaration's change-sync cases (its `listPlans`, src/resources.ts): table and alias from its entity and field table
  const syncCases = (RESOURCES as readonly ResourceDeclaration[]).flatMap((resource) =>
    resource.listPlans && resource.fields
      ? resource.listPlans.map((plan) => {
          const caller = plan.caller === 'admin' ? ADMIN : ME;
          const scope = plan.visible.replace(/:caller\b/g, String(caller.id)).replace(/:parent\b/g, String(BUSY_ARTICLE));
          const list: () => SyncList = () => (q, c) => plan.list(app, q, c as { id: number; role: 'user' | 'admin' }, BUSY_ARTICLE);
          return [plan.name, tableOf(resource.entities[0]), resource.fields!.alias, caller, scope, list, resource.fields!, plan.index] as const;
        })
      : [],
  );
  it('change sync: every declaration whose list sorts by updated_at declares its cases (articles: checked above)', () => {
    const syncable = (RESOURCES as readonly ResourceDeclaration[]).filter(
      (resource) => resource.fields && 'updated_at' in resource.fields.sortable && resource.name !== 'articles',
    );
    expect(syncable.filter((resource) => !resource.listPlans?.length).map((resource) => resource.name)).toEqual([]);
    expect(syncCases.length).toBeGreaterThanOrEqual(syncable.length);
  });
  type SyncList = (query: ListQuery, caller: AuthUser) => Promise<{ items: Array<{ id: number }> }>;
  it.each<[string, string, string, AuthUser, string, () => SyncList, ListSpec, string]>(syncCases.map((row) => [...row]))(
    'change sync on %s: updated_at[gt]=T&sort=updated_at, a cursor 1,500 rows deep, is one range of the (…, updated_at, id) index',
    async (name, table, alias, caller, scope, list, spec, index) => {
      const since = onPostgres ? `CAST('${SYNC_SINCE}' AS timestamptz)` : `'${SYNC_SINCE.replace('T', ' ').replace('Z', '')}'`;
      const where = `${scope} AND ${alias}.updated_at > ${since}`;
      const order = `${alias}.updated_at, ${alias}.id`;
      const [position] = await dataSource.query<Array<{ k0: string; k1: number | string }>>(
        `SELECT ${onPostgres ? `CAST(${alias}.updated_at AS text)` : `${alias}.updated_at`} AS k0, ${alias}.id AS k1 FROM ${table} ${alias} WHERE ${where} ORDER BY ${order} LIMIT 1 OFFSET 1499`,
      );
      const raw = { 'updated_at[gt]': SYNC_SINCE, sort: 'updated_at' };
      const cursor = encodeCursor(cursorKey(undefined), parseListQuery(raw, spec).fingerprint, {
        direction: 'after',
        values: [String(position.k0), Number(position.k1)],
      });
      let page: { items: Array<{ id: number }> } | undefined;
      const statements = await capture(async () => {
        page = await list()(parseListQuery({ ...raw, cursor }, spec), caller);
      });
      const want = await dataSource.query<Array<{ id: number }>>(
        `SELECT ${alias}.id FROM ${table} ${alias} WHERE ${where} ORDER BY ${order} LIMIT 20 OFFSET 1500`,
      );
      expect(page!.items.map((item) => item.id)).toEqual(want.map((r) => Number(r.id)));
      expect(page!.items).toHaveLength(20);
      const { rows } = split(statements, table, false);
      expect(rows.sql).not.toMatch(/OFFSET/i);
      plans[`sync ${name}`] = await expectIndexed(statements, table, alias, false, true, false);
      expect(plans[`sync ${name}`][0]).toContain(index);
    },
  );

  it.each<[string, AuthUser, Record<string, string>, string, string, string]>([
    ['their own events, the default order (id)', ME, {}, `e.owner_id = ${ME.id}`, 'e.id', 'idx_events_owner_id_id'],
    [
      'their own events by created_at (catch-up)',
      ME,
      { sort: 'created_at', 'created_at[gte]': '2026-03-01T10:00:00Z' },
      `e.owner_id = ${ME.id}`,
      'e.created_at, e.id',
      'idx_events_owner_id_created_at_id',
    ],
    [
      'every event by created_at (admins)',
      ADMIN,
      { sort: 'created_at', 'created_at[gte]': '2026-03-01T10:00:00Z' },
      '1 = 1',
      'e.created_at, e.id',
      'idx_events_created_at_id',
    ],
    [
      'one type by created_at (admins)',
      ADMIN,
      { sort: 'created_at', type: 'order.paid' },
      "e.type = 'order.paid'",
      'e.created_at, e.id',
      'idx_events_type_created_at_id',
    ],
  ])('the event log: %s is read in order from an index, on a cursor page', async (name, caller, raw, where, orderBy, index) => {
    // the `type` filter takes the registry's event types
    const EVENTS_FIELDS = app.get<ResourceRegistry>(RESOURCE_REGISTRY).listSpec(EVENTS_SPEC);
    const first = await app.get(EventsService).list(parseListQuery(raw, EVENTS_FIELDS), caller, '1');
    expect(first.info.hasNext).toBe(true);
    const cursor = encodeCursor(cursorKey(undefined), parseListQuery(raw, EVENTS_FIELDS).fingerprint, { direction: 'after', values: first.info.last! });
    let page: Awaited<ReturnType<EventsService['list']>> | undefined;
    const statements = await capture(async () => {
      page = await app.get(EventsService).list(parseListQuery({ ...raw, cursor }, EVENTS_FIELDS), caller, '1');
    });
    const since = raw['created_at[gte]']
      ? ` AND e.created_at >= ${onPostgres ? `CAST('${raw['created_at[gte]']}' AS timestamptz)` : `'${raw['created_at[gte]'].replace('T', ' ').replace('Z', '.000')}'`}`
      : '';
    const want = await dataSource.query<Array<{ event_id: string }>>(
      `SELECT e.event_id FROM events e WHERE ${where}${since} ORDER BY ${orderBy} LIMIT 20 OFFSET 20`,
    );
    expect(page!.items.map((item) => item.id)).toEqual(want.map((r) => r.event_id));
    expect(page!.items).toHaveLength(20);
    plans[`events ${name}`] = await expectIndexed(statements, 'events', 'e', false, true, false);
    expect(plans[`events ${name}`][0]).toContain(index);
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
    const want = await dataSource.query<Array<{ id: number }>>(
      `SELECT c.id FROM comments c WHERE c.article_id = ${COMMENTED_ARTICLE} ORDER BY ${orderBy} LIMIT 20`,
    );
    expect(page!.items.map((item) => item.id)).toEqual(want.map((r) => Number(r.id)));
    expect(page!.total).toBe(10);
    plans[`comments ${name}`] = await expectIndexed(statements, 'comments', 'c', true);
  });
  // expand (docs/lists.md#expanding-related-resources-expand): each path of a page is one statement, read through indexes
  it.each<[string, string, Record<string, ExpandDef>, string[]]>([
    ['articles: author, tags, comments.author', 'v1 articles', ARTICLES_FIELDS.expand!, ['author', 'tags', 'comments', 'comments.author']],
    ['comments: author, article.author', 'v1 comments', COMMENTS_FIELDS.expand!, ['author', 'article', 'article.author']],
  ])('expands %s with one statement per path, each from an index', async (name, _kind, spec, paths) => {
    const isComments = name.startsWith('comments');
    const page = isComments
      ? await app.get(CommentsService).list(COMMENTED_ARTICLE, parseListQuery({}, COMMENTS_FIELDS), ME)
      : await app.get(ArticlesService).list(parseListQuery({ author: '1' }, ARTICLES_FIELDS), ADMIN);
    const items = page.items as unknown as ExpandItem[];
    // articles by user 1 hold the busy article (8,000 comments); the comments are 10 of one article
    expect(items.length).toBeGreaterThan(1);
    const statements = await capture(() =>
      applyExpansions(items, paths, spec, { dataSource, caller: ME, version: '1', get: (type) => app.get(type, { strict: false }) }),
    );
    const summary: string[] = [];
    for (const statement of statements) {
      if (onPostgres) {
        const plan = nodes(await pgPlan(statement));
        summary.push(plan.map((n) => `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''}`).join(' > '));
        expect(plan.filter((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] !== undefined).map((n) => n['Relation Name'])).toEqual([]);
      } else {
        const plan = await sqlitePlan(statement);
        summary.push(plan.map((r) => r.detail).join(' | '));
        // every table read is a search by key or index, never a scan of a table
        expect(plan.filter((r) => /^SCAN (?!.*VIRTUAL TABLE)/.test(r.detail) && !/USING (COVERING )?INDEX/.test(r.detail)).map((r) => r.detail)).toEqual([]);
      }
    }
    plans[`expand ${name}`] = summary;
    if (isComments) {
      // the comments' authors (one statement), the article (a read as GET /articles/{id}, its own statement) and its author
      expect((items[0].author as { id: number }).id).toEqual(expect.any(Number));
      expect((items[0].article as { id: number; author: { id: number } }).author.id).toEqual(expect.any(Number));
    } else {
      const busy = items.find((item) => item.id === BUSY_ARTICLE) as { comments: { data: unknown[]; total: number } };
      expect(busy.comments.total).toBe(SYNC_ROWS);
      expect(busy.comments.data).toHaveLength(EXPANDED_COMMENTS);
      // one statement per path: authors, tags, comments, the comments' authors
      expect(statements).toHaveLength(4);
    }
  });

  it('the mail worker claims due mail and a password reset finds its token through their indexes (3,000 mails, 2,000 tokens)', async () => {
    const { dueMailSql } = await import('../src/mail/mail-worker.js');
    const { PasswordResetsService } = await import('../src/auth/password-resets.service.js');
    const { SharedStore } = await import('../src/store/shared-store.js');
    const now = new Date();
    const later = new Date(now.getTime() + 3_600_000);
    const mails = Array.from({ length: 3000 }, (_, i) => ({
      message_id: `<plan-${i}@example.test>`,
      recipient: `plan${i}@example.test`,
      subject: 'Plan',
      text_body: null,
      status: i % 100 === 0 ? 'pending' : 'sent',
      attempts: 1,
      next_attempt_at: i % 100 === 0 ? later : null,
      created_at: now,
    }));
    const [owner] = await dataSource.query<Array<{ id: number }>>('SELECT id FROM users ORDER BY id LIMIT 1');
    const tokens = Array.from({ length: 2000 }, (_, i) => ({ token_hash: String(i).padStart(64, 'a'), user_id: owner.id, expires_at: later, created_at: now }));
    for (const [table, rows] of [
      ['mail_outbox', mails],
      ['password_reset_tokens', tokens],
    ] as const) {
      for (let i = 0; i < rows.length; i += 500)
        await dataSource
          .createQueryBuilder()
          .insert()
          .into(table)
          .values(rows.slice(i, i + 500))
          .execute();
    }
    await app.get(SharedStore).clear();
    const statements = await capture(() =>
      app
        .get(PasswordResetsService)
        .reset('no-such-token', 'long enough pw', '192.0.2.1')
        .catch(() => undefined),
    );
    const lookup = statements.filter((statement) => /FROM "password_reset_tokens"/.test(statement.sql));
    expect(lookup).toHaveLength(1);
    const due = { sql: dueMailSql(onPostgres, 4), params: [onPostgres ? now : now.toISOString().replace('T', ' ').replace('Z', '')] };
    try {
      if (onPostgres) {
        await dataSource.query('ANALYZE mail_outbox');
        await dataSource.query('ANALYZE password_reset_tokens');
        for (const [statement, table, index] of [
          [due, 'mail_outbox', 'idx_mail_outbox_status_next_attempt_at'],
          [lookup[0], 'password_reset_tokens', undefined],
        ] as const) {
          const scans = nodes(await pgPlan(statement));
          expect(scans.filter((node) => node['Relation Name'] === table).map((node) => node['Node Type'])).not.toContain('Seq Scan');
          if (index) expect(scans.map((node) => node['Index Name'])).toContain(index);
          else expect(scans.some((node) => INDEX_NODES.includes(node['Node Type']) && node['Relation Name'] === table)).toBe(true);
        }
      } else {
        const duePlan = await sqlitePlan(due);
        expect(duePlan.filter((row) => row.detail.includes('idx_mail_outbox_status_next_attempt_at'))).toHaveLength(2);
        expect(duePlan.filter((row) => row.detail.includes('TEMP B-TREE')).map((row) => row.detail)).toEqual(['USE TEMP B-TREE FOR ORDER BY']);
        const lookupPlan = (await sqlitePlan(lookup[0])).map((row) => row.detail).join('\n');
        expect(lookupPlan).toMatch(/SEARCH .* USING INDEX sqlite_autoindex_password_reset_tokens_1 \(token_hash=\?\)/);
      }
    } finally {
      await dataSource.query('DELETE FROM mail_outbox');
      await dataSource.query('DELETE FROM password_reset_tokens');
    }
  });
  it('a two-factor sign-in finds the secret by its user and consumes a recovery code through their indexes (200 users, 2,000 codes)', async () => {
    const { TotpService } = await import('../src/auth/totp.service.js');
    const { SharedStore } = await import('../src/store/shared-store.js');
    const now = new Date();
    const users = await dataSource.query<Array<{ id: number }>>('SELECT id FROM users ORDER BY id LIMIT 200');
    const owner = users[0];
    const secrets = users.map((user) => ({ user_id: user.id, secret_encrypted: 'v1.x.y.z', enabled_at: now, last_step: null, created_at: now }));
    const codes = users.flatMap((user, u) =>
      Array.from({ length: 10 }, (_, i) => ({ user_id: user.id, code_hash: String(u * 10 + i).padStart(64, 'c'), created_at: now })),
    );
    for (const [table, rows] of [
      ['totp_secrets', secrets],
      ['totp_recovery_codes', codes],
    ] as const) {
      for (let i = 0; i < rows.length; i += 500)
        await dataSource
          .createQueryBuilder()
          .insert()
          .into(table)
          .values(rows.slice(i, i + 500))
          .execute();
    }
    await app.get(SharedStore).clear();
    const totp = app.get(TotpService);
    const { challenge } = await totp.startChallenge(owner.id, 'token');
    const statements = await capture(() => totp.completeChallenge(challenge, { recovery_code: 'aaaaa-bbbbb' }).catch(() => undefined));
    const secretRead = statements.filter((statement) => /FROM "totp_secrets"/.test(statement.sql));
    const codeUse = statements.filter((statement) => /DELETE FROM "totp_recovery_codes"/.test(statement.sql));
    expect(secretRead).toHaveLength(1);
    expect(codeUse).toHaveLength(1);
    try {
      if (onPostgres) {
        await dataSource.query('ANALYZE totp_secrets');
        await dataSource.query('ANALYZE totp_recovery_codes');
        // the secrets table is as small as its users here: only the 2,000 codes make the planner's choice telling
        const scans = nodes(await pgPlan(codeUse[0]));
        expect(scans.filter((node) => node['Relation Name'] === 'totp_recovery_codes').map((node) => node['Node Type'])).not.toContain('Seq Scan');
        expect(JSON.stringify(await pgPlan(secretRead[0]))).toContain('totp_secrets');
      } else {
        expect((await sqlitePlan(secretRead[0])).map((row) => row.detail).join('\n')).toMatch(/SEARCH .* USING (INTEGER PRIMARY KEY|INDEX|PRIMARY KEY)/);
        expect((await sqlitePlan(codeUse[0])).map((row) => row.detail).join('\n')).toMatch(/SEARCH .* USING INDEX/);
      }
    } finally {
      await dataSource.query('DELETE FROM totp_recovery_codes');
      await dataSource.query('DELETE FROM totp_secrets');
    }
  });
});
