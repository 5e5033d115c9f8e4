/**
 * The hand-written parts the benchmark's reference servers share (bench/limit-server.mjs, THE
 * LIMIT on fastify, and bench/floor-server.mjs, the Nest + Express floor), so that both run the
 * same SQL and send the same bytes: the service's response headers (security headers, private
 * caching, `ETag`, the rate-limit headers of a per-user fixed window, the v1 deprecation headers),
 * HS256 Bearer verification with the deny list, the database (a pg Pool with NAMED prepared
 * statements, or better-sqlite3 with each statement prepared once), the article list and read,
 * and the todo creation with the service's writes (the todo, its `todo.created` event and the
 * webhook deliveries fan-out, in one transaction: see {@link createTodo}). Configured by the
 * environment at import: DATABASE_URL, JWT_SECRET, REDIS_URL (optional), DB_POOL_SIZE,
 * RATE_LIMIT_USER_PER_MINUTE (the user policy's quota, default 60 as the service's),
 * BENCH_APPLICATION_NAME (PostgreSQL `application_name`, default `resource-api-limit`).
 */
import { createHash, createHmac, createSecretKey, randomUUID, timingSafeEqual } from 'node:crypto';

export const DATABASE_URL = process.env.DATABASE_URL ?? '';
const SECRET = createSecretKey(Buffer.from(process.env.JWT_SECRET ?? ''));
export const PG = /^postgres(ql)?:\/\//.test(DATABASE_URL);

// ---------------------------------------------------------------- headers

export const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none';frame-ancestors 'none'",
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'no-referrer',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'DENY',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
};
export const DEPRECATION = { deprecation: `@${Math.floor(Date.parse('2026-12-01T00:00:00Z') / 1000)}`, sunset: 'Wed, 30 Jun 2027 00:00:00 GMT' };
export const successorLink = (path) => `<${path.replace(/^\/v1\//, '/v2/')}>; rel="successor-version", </docs>; rel="deprecation"; type="text/html"`;
export const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The service's caching headers of an answer to an authenticated request (docs/wire.md#caching):
 * `Cache-Control: private, no-cache` and `Vary: Authorization, Cookie, Accept` (a list adds
 * `Prefer`, which selects its count).
 */
export const PRIVATE_CACHING = { 'cache-control': 'private, no-cache', vary: 'Authorization, Cookie, Accept' };
export const PRIVATE_CACHING_LIST = { 'cache-control': 'private, no-cache', vary: 'Authorization, Cookie, Accept, Prefer' };

/** The `ETag` of a row `version` served as v1 (src/common/writes/preconditions.ts, `entityTag`). */
export const entityTag = (version) => `"${Number(version)}.v1"`;

/** The service's `user` rate-limit policy (docs/limits.md#rates): quota per 60-second window, counted per user. */
const USER_QUOTA = Number(process.env.RATE_LIMIT_USER_PER_MINUTE ?? 60);
const WINDOW_MS = 60_000;
const windows = new Map();

export function requestId(req) {
  const sent = req.headers['x-request-id'];
  return typeof sent === 'string' && SANE_ID.test(sent) ? sent : randomUUID();
}

export class HttpError extends Error {
  constructor(status, code, message, extra, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.extra = extra;
    this.details = details;
  }
}

// ---------------------------------------------------------------- authentication

export const ROLES = new Set(['user', 'admin']);
export const denied = new Map();
export let redis;
if (process.env.REDIS_URL) {
  const { Redis } = await import('ioredis');
  redis = new Redis(process.env.REDIS_URL, { lazyConnect: false, maxRetriesPerRequest: 1 });
}

export function unauthorized() {
  return new HttpError(401, 'unauthorized', 'invalid or expired token', { 'www-authenticate': 'Bearer realm="api", error="invalid_token"' });
}

/** Verifies the Bearer token; returns `{id, role}` or throws 401. */
export async function authenticate(req) {
  const header = req.headers.authorization;
  if (typeof header !== 'string' || !/^bearer\s/i.test(header)) {
    throw new HttpError(401, 'unauthorized', 'authentication required', { 'www-authenticate': 'Bearer realm="api"' });
  }
  const token = header.slice(7).trim();
  const first = token.indexOf('.');
  const second = token.indexOf('.', first + 1);
  if (first < 0 || second < 0 || token.indexOf('.', second + 1) >= 0) throw unauthorized();
  let head;
  let claims;
  try {
    head = JSON.parse(Buffer.from(token.slice(0, first), 'base64url').toString());
    claims = JSON.parse(Buffer.from(token.slice(first + 1, second), 'base64url').toString());
  } catch {
    throw unauthorized();
  }
  if (head?.alg !== 'HS256') throw unauthorized();
  const expected = createHmac('sha256', SECRET).update(token.slice(0, second)).digest();
  const signature = Buffer.from(token.slice(second + 1), 'base64url');
  if (signature.length !== expected.length || !timingSafeEqual(signature, expected)) throw unauthorized();
  const now = Math.floor(Date.now() / 1000);
  if (
    typeof claims?.exp !== 'number' ||
    claims.exp <= now ||
    claims.typ !== 'access' ||
    typeof claims.jti !== 'string' ||
    typeof claims.fid !== 'string' ||
    typeof claims.iat !== 'number' ||
    !Number.isSafeInteger(claims.user_id) ||
    claims.user_id < 1 ||
    !ROLES.has(claims.role)
  ) {
    throw unauthorized();
  }
  const keys = [`deny:${claims.jti}`, `deny-user:${claims.user_id}`];
  const [jtiDenied, userDeniedUpTo] = redis ? await redis.mget(keys) : [denied.get(keys[0]) ?? null, denied.get(keys[1]) ?? null];
  if (jtiDenied !== null || (userDeniedUpTo != null && claims.iat <= Number(userDeniedUpTo))) throw unauthorized();
  return { id: claims.user_id, role: claims.role };
}

/**
 * Counts one request of the authenticated `caller` in the `user` policy as the service's rate
 * limiter does (a fixed window from the partition's first request: in this process, or one Redis
 * round trip when REDIS_URL is set) and returns the five headers it sends: `RateLimit-Policy`,
 * `RateLimit`, `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`. The benchmark's quota
 * is never reached, so nothing is refused here.
 */
export async function rateLimit(caller) {
  const key = `rate:user:${caller.id}`;
  const now = Date.now();
  let hits;
  let resetMs;
  if (redis) {
    const [[, count], [, ttl]] = await redis.multi().incr(key).pttl(key).exec();
    hits = Number(count);
    resetMs = ttl > 0 ? ttl : WINDOW_MS;
    if (ttl < 0) void redis.pexpire(key, WINDOW_MS);
  } else {
    let window = windows.get(key);
    if (!window || window.ends <= now) windows.set(key, (window = { hits: 0, ends: now + WINDOW_MS }));
    hits = ++window.hits;
    resetMs = window.ends - now;
  }
  const remaining = Math.max(0, USER_QUOTA - hits);
  const reset = Math.ceil(resetMs / 1000);
  return {
    'ratelimit-policy': `"user";q=${USER_QUOTA};w=${WINDOW_MS / 1000}`,
    ratelimit: `"user";r=${remaining};t=${reset}`,
    'ratelimit-limit': String(USER_QUOTA),
    'ratelimit-remaining': String(remaining),
    'ratelimit-reset': String(reset),
  };
}

// ---------------------------------------------------------------- database

export const iso = PG
  ? (value) => (value === null ? null : value.toISOString())
  : (value) =>
      value === null
        ? null
        : value.length === 23 && value[10] === ' '
          ? `${value.slice(0, 10)}T${value.slice(11)}Z`
          : new Date(value.includes('T') ? value : `${value.replace(' ', 'T')}Z`).toISOString();

/** An article row (columns of the articles table + `tags`) → the service's ArticleResponse JSON object. */
export function article(row) {
  const id = Number(row.id);
  const author = Number(row.author_id);
  const tags = row.tags === null ? [] : PG ? row.tags : row.tags.split('\u001f');
  tags.sort();
  return {
    id,
    title: row.title,
    body: row.body,
    status: row.status,
    tags,
    author,
    published_at: iso(row.published_at),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    links: [
      { rel: 'self', href: `/v1/articles/${id}` },
      { rel: 'author', href: `/v1/users/${author}` },
      { rel: 'comments', href: `/v1/articles/${id}/comments` },
    ],
  };
}

export const TAGS_PG = `(SELECT array_agg(t.name) FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE at.article_id = a.id) AS tags`;
export const TAGS_SQLITE = `(SELECT group_concat(t.name, char(31)) FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE at.article_id = a.id) AS tags`;
export const COLUMNS = `a.id, a.title, a.body, a.status, a.author_id, a.published_at, a.created_at, a.updated_at, a.version, ${PG ? TAGS_PG : TAGS_SQLITE}`;

export let db;
if (PG) {
  const pg = (await import('pg')).default;
  // JIT off: compiling a plan costs more than these short queries run (PostgreSQL's own advice for OLTP)
  db = new pg.Pool({
    connectionString: DATABASE_URL,
    max: Number(process.env.DB_POOL_SIZE ?? 10),
    application_name: process.env.BENCH_APPLICATION_NAME ?? 'resource-api-limit',
    options: '-c jit=off',
  });
} else {
  const { default: Database } = await import('better-sqlite3');
  db = new Database(DATABASE_URL.replace(/^sqlite:/, ''));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
}
export const sqliteStatements = new Map();
/** The name of each PostgreSQL statement text: node-postgres prepares a named statement once per connection, then only binds and executes it. */
const pgStatementNames = new Map();

/**
 * Runs `sql` with positional parameters (`$1`… on PostgreSQL, `?` on SQLite) and returns the rows:
 * on PostgreSQL as a NAMED prepared statement (`{ name, text, values }`; the service's TypeORM
 * pool prepares its statements too), on SQLite through a statement prepared once per text.
 */
export async function rows(sql, params) {
  if (PG) {
    let name = pgStatementNames.get(sql);
    if (name === undefined) pgStatementNames.set(sql, (name = `hw_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`));
    return (await db.query({ name, text: sql, values: params })).rows;
  }
  const statement = sqliteStatement(sql);
  const named = {};
  params.forEach((value, i) => (named[`p${i + 1}`] = value));
  return statement.reader ? statement.all(named) : [statement.run(named)];
}

/** The better-sqlite3 statement of `sql` (`$n` as named parameters `@pn`, since one may repeat), prepared on first use. */
function sqliteStatement(sql) {
  let statement = sqliteStatements.get(sql);
  if (!statement) {
    statement = db.prepare(sql.replace(/\$(\d+)/g, '@p$1'));
    sqliteStatements.set(sql, statement);
  }
  return statement;
}

// ---------------------------------------------------------------- article list

const MAX_PAGE_SIZE = 100;
/** The service's list-cursor key when LIST_CURSOR_SECRET is unset: derived from JWT_SECRET (src/common/list/cursor.ts). */
const CURSOR_KEY = createHmac('sha256', `jwt:${process.env.JWT_SECRET ?? ''}`)
  .update('resource-api list cursor v1')
  .digest();
/** Above this planner estimate `Prefer: count=estimated` answers the estimate (src/common/list/find-page.ts). */
const ESTIMATE_THRESHOLD = 10_000;

// ---------------------------------------------------------------- list query

const SORTABLE = new Set(['id', 'title', 'created_at', 'updated_at', 'published_at', 'relevance']);
/** The paths the benchmark expands (docs/lists.md#expanding-related-resources-expand). */
const EXPANDABLE = ['author', 'tags'];

/**
 * `q` as an FTS5 query (the service's searchMatch, src/common/list/list-query.ts): words, "phrases",
 * -exclusions and `or`, each term an FTS5 string. @throws HttpError 400 when nothing is left to look for.
 */
function ftsMatch(text) {
  const groups = [[]];
  for (let i = 0; i < text.length;) {
    while (i < text.length && /\s/u.test(text[i])) i++;
    if (i >= text.length) break;
    const negated = text[i] === '-';
    if (negated) i++;
    const quoted = text[i] === '"';
    let term;
    if (quoted) {
      const end = text.indexOf('"', i + 1);
      term = text.slice(i + 1, end === -1 ? text.length : end);
      i = end === -1 ? text.length : end + 1;
    } else {
      let end = i;
      while (end < text.length && !/\s/u.test(text[end]) && text[end] !== '"') end++;
      term = text.slice(i, end);
      i = end;
    }
    if (!negated && !quoted && term.toLowerCase() === 'or') {
      if (groups.at(-1).length > 0) groups.push([]);
      continue;
    }
    if (/[\p{L}\p{N}]/u.test(term)) groups.at(-1).push({ negated, term });
  }
  const alternatives = groups.filter((g) => g.length > 0);
  if (alternatives.length === 0 || alternatives.some((g) => g.every((t) => t.negated))) throw badRequest('q must contain a word to search for');
  const fts = (term) => `"${term.replace(/"/g, '""')}"`;
  return alternatives
    .map(
      (g) =>
        `((${g
          .filter((t) => !t.negated)
          .map((t) => fts(t.term))
          .join(' AND ')})${g
          .filter((t) => t.negated)
          .map((t) => ` NOT ${fts(t.term)}`)
          .join('')})`,
    )
    .join(' OR ');
}
const STATUSES = new Set(['draft', 'published', 'archived']);
/** A non-negative integer of at most 10 digits, as the service's query and path pipes accept it. */
export const INT = /^(0|[1-9][0-9]{0,9})$/;

/** 400 `bad_request` with `message`. */
export function badRequest(message) {
  return new HttpError(400, 'bad_request', message);
}

/**
 * Parses the subset of the list grammar the benchmark uses (`page`, `size`, `sort`, `status`,
 * `author`, `cursor`; `Prefer: count=…`) with the service's normalisation
 * (docs/lists.md). Returns the parsed query. @throws HttpError 400 `bad_request` for anything else.
 */
export function parseList(query, prefer) {
  for (const name of Object.keys(query))
    if (!['page', 'size', 'sort', 'status', 'author', 'cursor', 'q', 'expand'].includes(name)) throw badRequest(`unknown query parameter ${name}`);
  const search = query.q === undefined ? undefined : { text: String(query.q), match: PG ? undefined : ftsMatch(String(query.q)) };
  if (search && PG) ftsMatch(search.text);
  const expand = query.expand === undefined ? undefined : String(query.expand).split(',');
  if (expand && !expand.every((path) => EXPANDABLE.includes(path))) throw badRequest('the limit expands author and tags');
  if (query.cursor !== undefined && query.page !== undefined) throw badRequest('cursor cannot be combined with page or offset');
  const page = query.page === undefined ? 1 : INT.test(query.page) ? Number(query.page) : NaN;
  const size = query.size === undefined ? 20 : INT.test(query.size) ? Number(query.size) : NaN;
  if (!(page >= 1 && page <= 1_000_000_000)) throw badRequest('page must be an integer from 1 to 1000000000');
  if (!(size >= 1 && size <= MAX_PAGE_SIZE)) throw badRequest(`size must be an integer from 1 to ${MAX_PAGE_SIZE}`);
  const sort = [];
  if (query.sort !== undefined) {
    for (const term of String(query.sort).split(',')) {
      const desc = term.startsWith('-');
      const field = desc ? term.slice(1) : term;
      if (!SORTABLE.has(field) || sort.some((k) => k.field === field) || (field === 'relevance' && !search)) throw badRequest(`cannot sort by ${field}`);
      sort.push({ field, desc });
    }
  }
  // the implicit id tie-breaker follows the direction of the first sort key (default: id ascending)
  if (!sort.some((k) => k.field === 'id')) sort.push({ field: 'id', desc: sort.length > 0 && sort[0].desc });
  const filters = {};
  for (const name of ['status', 'author']) {
    if (query[name] === undefined) continue;
    const values = [];
    for (const raw of Array.isArray(query[name]) ? query[name] : [query[name]]) {
      if (name === 'status' && !STATUSES.has(raw)) throw badRequest('status must be one of draft, published, archived');
      if (name === 'author' && !INT.test(raw)) throw badRequest('author must be a non-negative integer');
      const value = name === 'author' ? Number(raw) : raw;
      if (!values.includes(value)) values.push(value);
    }
    filters[name] = values;
  }
  const canonical = Object.entries(filters)
    .map(([name, values]) => [name, [...values].sort()])
    .sort(([a], [b]) => a.localeCompare(b));
  const fp = createHash('sha256')
    .update(JSON.stringify(['/v1/articles', sort.map((k) => `${k.desc ? '-' : ''}${k.field}`), canonical, [], ...(search ? [[], search.text] : [])]))
    .digest('base64url')
    .slice(0, 22);
  const preferred = /(?:^|,)\s*count\s*=\s*"?(exact|estimated|none)"?\s*(?:[;,]|$)/i.exec(String(prefer ?? ''))?.[1]?.toLowerCase();
  let cursor;
  if (query.cursor !== undefined) {
    const [payload, mac] = String(query.cursor).split('.');
    const expected = createHmac('sha256', CURSOR_KEY)
      .update(payload ?? '')
      .digest();
    const given = Buffer.from(mac ?? '', 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw badRequest('cursor is not valid (modified, truncated or issued by another server)');
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString());
    if (decoded.f !== fp)
      throw badRequest('cursor was issued for other sort or filter parameters; repeat the sort and filters of the request that returned it');
    cursor = { direction: decoded.d === 'a' ? 'after' : 'before', values: decoded.v, text: query.cursor };
    // forward cursors on one-direction sorts; a nullable key only first, ascending, from a value (its NULLs follow)
    const nullableOk = sort.every((k, i) => !NULLABLE.has(k.field) || (i === 0 && !k.desc && cursor.values[0] !== null));
    if (cursor.direction !== 'after' || !nullableOk || sort.some((k) => k.desc !== sort[0].desc))
      throw badRequest('the limit serves forward cursors on one-direction sorts, a nullable key only first, ascending, from a value');
  }
  const count = preferred ?? (cursor ? 'none' : 'exact');
  return {
    page,
    size,
    offset: cursor ? 0 : (page - 1) * size,
    sort,
    filters,
    fp,
    cursor,
    count,
    search,
    expand: expand && EXPANDABLE.filter((p) => expand.includes(p)),
  };
}

/** A cursor as the service signs it: `base64url(JSON).base64url(HMAC-SHA256)`. */
function encodeCursor(fp, direction, values) {
  const payload = Buffer.from(JSON.stringify({ f: fp, d: direction === 'after' ? 'a' : 'b', v: values })).toString('base64url');
  return `${payload}.${createHmac('sha256', CURSOR_KEY).update(payload).digest('base64url')}`;
}

function linkQuery(q, page, cursor) {
  const params = new URLSearchParams();
  if (q.search) params.set('q', q.search.text);
  for (const [name, values] of Object.entries(q.filters)) for (const value of values) params.append(name, String(value));
  // links leave out an id tie-breaker that goes the implied way (the direction of the first key)
  const implied = q.sort.length > 1 ? q.sort[0].desc : false;
  const explicit = q.sort.filter((k, i) => !(i === q.sort.length - 1 && k.field === 'id' && k.desc === implied));
  if (explicit.length > 0) params.set('sort', explicit.map((k) => (k.desc ? '-' : '') + k.field).join(','));
  if (q.expand) params.set('expand', q.expand.join(','));
  if (q.cursor) {
    if (cursor !== undefined) params.set('cursor', cursor);
  } else params.set('page', String(page));
  params.set('size', String(q.size));
  return `/v1/articles?${params.toString().replace(/%2C/g, ',')}`;
}

/** The envelope links of the service (`self`, `first`, `prev`, `next`, `last`; cursor pages: `self`, `first`, `prev`, `next`). */
function pageLinks(q, total, next, prev) {
  if (q.cursor) {
    const links = [
      { rel: 'self', href: linkQuery(q, 0, q.cursor.text) },
      { rel: 'first', href: linkQuery(q, 0) },
    ];
    if (prev) links.push({ rel: 'prev', href: linkQuery(q, 0, prev) });
    if (next) links.push({ rel: 'next', href: linkQuery(q, 0, next) });
    return links;
  }
  if (total === undefined) {
    const at = (offset) => linkQuery(q, Math.floor(offset / q.size) + 1);
    const links = [
      { rel: 'self', href: at(q.offset) },
      { rel: 'first', href: at(0) },
    ];
    if (q.offset > 0) links.push({ rel: 'prev', href: at(Math.max(0, q.offset - q.size)) });
    if (next) links.push({ rel: 'next', href: at(q.offset + q.size) });
    return links;
  }
  const lastIndex = Math.max(0, Math.ceil(total / q.size) - 1);
  const at = (offset) => linkQuery(q, Math.floor(offset / q.size) + 1);
  const links = [
    { rel: 'self', href: at(q.offset) },
    { rel: 'first', href: at(0) },
  ];
  if (q.offset > 0) links.push({ rel: 'prev', href: at(Math.max(0, Math.min(q.offset - q.size, lastIndex * q.size))) });
  if (q.offset + q.size < total) links.push({ rel: 'next', href: at(q.offset + q.size) });
  links.push({ rel: 'last', href: at(lastIndex * q.size) });
  return links;
}

/** The WHERE clause and parameters for the caller's visibility and the filters. */
function where(q, caller) {
  const conditions = [];
  const params = [];
  const param = (value) => {
    params.push(value);
    return `$${params.length}`;
  };
  const status = q.filters.status;
  const onlyPublished = status && status.every((s) => s === 'published');
  // published-only filter: the visibility rule (published OR own) adds nothing
  if (caller.role !== 'admin' && !onlyPublished) conditions.push(`(a.status = 'published' OR a.author_id = ${param(caller.id)})`);
  // the composite (status, sort column, id) indexes of the migrations serve the filter and the order
  // on both databases, so the plain column gives the best plan for the page and the count alike
  if (status) conditions.push(status.length === 1 ? `a.status = ${param(status[0])}` : `a.status IN (${status.map(param).join(', ')})`);
  if (q.filters.author) conditions.push(`a.author_id IN (${q.filters.author.map(param).join(', ')})`);
  // full-text search: the stored vectors of articles_search (PostgreSQL), the FTS5 table (SQLite)
  if (q.search)
    conditions.push(
      PG
        ? `a.id IN (SELECT s.id FROM articles_search s WHERE s.vector @@ websearch_to_tsquery('simple'::regconfig, ${param(q.search.text)}))`
        : // SQLite: the search's join (FROM_SQLITE_SEARCH) keeps the matches; its parameter is the last one
          `${param(q.search.match)} IS NOT NULL`,
    );
  return { sql: conditions.length ? `WHERE ${conditions.join(' AND ')}` : '', params };
}

/** The sort expression of `field` (`relevance`: the search rank, `$n` the query's parameter). */
function sortExpression(field, q, searchParam) {
  if (field !== 'relevance') return `a.${field}`;
  return PG ? `(SELECT ts_rank(s.vector, websearch_to_tsquery('simple'::regconfig, ${searchParam})) FROM articles_search s WHERE s.id = a.id)` : 'sr.rank';
}

/** Columns that may be NULL: only their sort carries NULLS FIRST/LAST (on SQLite it would force a sort otherwise). */
const NULLABLE = new Set(['published_at']);

/**
 * One page of `GET /v1/articles` for `caller` (published articles and the caller's own; all for
 * an admin): one query for the page (+ one for the NULLs of a nullable cursor key), the count as
 * asked. Returns `{ body, counted }` (the envelope and the `Preference-Applied` count).
 */
export async function listArticles(q, caller) {
  const { sql: whereSql, params } = where(q, caller);
  // the search's parameter is the last of the WHERE clause's
  const searchParam = q.search ? `$${params.length}` : undefined;
  const column = (field) => sortExpression(field, q, searchParam);
  const order = q.sort
    .map((k) => `${column(k.field)} ${k.desc ? 'DESC' : 'ASC'}${NULLABLE.has(k.field) ? (k.desc ? ' NULLS FIRST' : ' NULLS LAST') : ''}`)
    .join(', ');
  // SQLite: FTS5 ranks every match in one pass, joined (a bm25 per row would run the query again per row)
  const ranked =
    q.search && !PG
      ? ` JOIN (SELECT rowid AS id, -bm25(articles_fts, 4.0, 1.0) AS rank FROM articles_fts WHERE articles_fts MATCH ${searchParam}) sr ON sr.id = a.id`
      : '';
  const from = `articles a${ranked}`;
  const countSql = `SELECT count(*) AS total FROM ${from} ${whereSql}`;
  const keyText = (field) => (PG && field !== 'id' && field !== 'title' && field !== 'relevance' ? `CAST(a.${field} AS text)` : column(field));
  const keys = q.sort.map((k, i) => `${keyText(k.field)} AS k${i}`).join(', ');
  // the keyset predicate of a cursor: one row-value comparison the (status, sort column, id) index answers as a range
  const inner = [...params];
  let keyset = '';
  if (q.cursor) {
    const bound = q.sort.map((k, i) => {
      inner.push(q.cursor.values[i]);
      return PG && k.field.endsWith('_at') ? `CAST($${inner.length} AS timestamptz)` : `$${inner.length}`;
    });
    keyset = `${whereSql ? ' AND' : 'WHERE'} (${q.sort.map((k) => column(k.field)).join(', ')}) ${q.sort[0].desc ? '<' : '>'} (${bound.join(', ')})`;
  }
  // One round trip. The page's ids are found on narrow rows (the sort and OFFSET never carry
  // bodies or compute tags of skipped rows); only the page's rows are read whole; one row more than
  // the page tells whether another follows.
  const read = (condition, values, limit) =>
    rows(
      `SELECT ${COLUMNS}, ${keys}
       FROM (SELECT a.id FROM ${from} ${whereSql}${condition} ORDER BY ${order} LIMIT $${values.length + 1} OFFSET $${values.length + 2}) p
       JOIN articles a ON a.id = p.id${ranked}
       ORDER BY ${order}`,
      [...values, limit, q.offset],
    );
  const page = await read(keyset, inner, q.size + 1);
  // a nullable first key ascending: the row-value comparison skips its NULLs, which come after every value
  if (q.cursor && NULLABLE.has(q.sort[0].field) && page.length <= q.size) {
    page.push(...(await read(`${whereSql ? ' AND' : 'WHERE'} a.${q.sort[0].field} IS NULL`, params, q.size + 1 - page.length)));
  }
  let total;
  let counted = q.count === 'none' ? 'none' : 'exact';
  if (q.count === 'estimated' && PG) {
    const plan = await rows(`EXPLAIN (FORMAT JSON) SELECT 1 FROM articles a ${whereSql}`, params);
    const estimate = Number(plan[0]['QUERY PLAN'][0].Plan['Plan Rows']);
    if (estimate > ESTIMATE_THRESHOLD) [total, counted] = [Math.round(estimate), 'estimated'];
  }
  if (counted === 'exact' && total === undefined) total = Number((await rows(countSql, params))[0].total);
  const more = page.length > q.size;
  const items = page.slice(0, q.size);
  const position = (row) => q.sort.map((_, i) => (row[`k${i}`] === null || typeof row[`k${i}`] === 'number' ? row[`k${i}`] : String(row[`k${i}`])));
  const next = more ? encodeCursor(q.fp, 'after', position(items[items.length - 1])) : undefined;
  const prev = items.length > 0 && (q.cursor || q.offset > 0) ? encodeCursor(q.fp, 'before', position(items[0])) : undefined;
  const data = items.map(article);
  if (q.expand?.includes('author')) await expandAuthors(data);
  if (q.expand?.includes('tags')) await expandTags(data);
  const body = {
    data,
    ...(q.cursor ? {} : { page: q.page }),
    size: q.size,
    ...(total !== undefined ? { total } : {}),
    ...(next ? { next_cursor: next } : {}),
    ...(prev ? { prev_cursor: prev } : {}),
    links: pageLinks(q, total, next, prev),
  };
  return { body, counted };
}

/** `expand=author`: each article's author id → `{id, username, name}`, one statement for the page. */
async function expandAuthors(items) {
  const ids = [...new Set(items.map((item) => item.author))];
  if (ids.length === 0) return;
  const found = PG
    ? await rows('SELECT id, username, name FROM users WHERE id = ANY($1)', [ids])
    : await rows(`SELECT id, username, name FROM users WHERE id IN (${ids.map((_, i) => `$${i + 1}`).join(', ')})`, ids);
  const byId = new Map(found.map((row) => [Number(row.id), { id: Number(row.id), username: row.username, name: row.name }]));
  for (const item of items) if (byId.has(item.author)) item.author = byId.get(item.author);
}

/** `expand=tags`: each article's tag names → the tags as `GET /v1/tags/{id}` shows them, one statement for the page. */
async function expandTags(items) {
  const names = [...new Set(items.flatMap((item) => item.tags))];
  if (names.length === 0) return;
  const found = PG
    ? await rows('SELECT id, name, created_at, updated_at FROM tags WHERE name = ANY($1)', [names])
    : await rows(`SELECT id, name, created_at, updated_at FROM tags WHERE name IN (${names.map((_, i) => `$${i + 1}`).join(', ')})`, names);
  const byName = new Map(
    found.map((row) => [
      row.name,
      {
        id: Number(row.id),
        name: row.name,
        created_at: iso(row.created_at),
        updated_at: iso(row.updated_at),
        links: [
          { rel: 'self', href: `/v1/tags/${Number(row.id)}` },
          { rel: 'articles', href: `/v1/articles?tag=${encodeURIComponent(row.name)}` },
        ],
      },
    ]),
  );
  for (const item of items) item.tags = item.tags.map((name) => byName.get(name) ?? name);
}

// ---------------------------------------------------------------- article read

/**
 * `GET /v1/articles/:id` for `caller`: one query. Returns `{ body, etag }` (the article and the
 * `ETag` of its row version).
 * @throws HttpError 400 for an id that is not a positive 32-bit integer, 404 when there is no such
 *   article, 403 for another user's draft or archived article (unless the caller is an admin)
 */
export async function readArticle(rawId, caller) {
  if (!INT.test(rawId) || Number(rawId) < 1 || Number(rawId) > 2_147_483_647) throw badRequest('id must be a positive integer');
  const id = Number(rawId);
  const [row] = await rows(`SELECT ${COLUMNS} FROM articles a WHERE a.id = $1`, [id]);
  if (!row) throw new HttpError(404, 'not_found', `article ${id} not found`);
  if (row.status !== 'published' && caller.role !== 'admin' && Number(row.author_id) !== caller.id) {
    throw new HttpError(403, 'forbidden', `article ${id} is ${row.status} and belongs to another user`);
  }
  return { body: article(row), etag: entityTag(row.version) };
}

// ---------------------------------------------------------------- todos

const TODO_STATUSES = new Set(['pending', 'in_progress', 'done']);
const TODO_FIELDS = new Set(['title', 'content', 'status', 'owner', 'id', 'created_at', 'updated_at', 'links']);

/** The request body of `POST /v1/todos`, checked as the service's DTO. @throws HttpError 400 (not an object), 422 `validation_failed` */
function validateTodo(body) {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('request body must be a JSON object');
  const problems = [];
  for (const key of Object.keys(body)) if (!TODO_FIELDS.has(key)) problems.push({ field: key, message: `property ${key} should not exist` });
  if (typeof body.title !== 'string' || body.title.length === 0 || body.title.length > 200)
    problems.push({ field: 'title', message: 'title must be a string of 1-200 characters' });
  if (body.content !== undefined && body.content !== null && (typeof body.content !== 'string' || body.content.length > 10_000)) {
    problems.push({ field: 'content', message: 'content must be a string of at most 10000 characters' });
  }
  if (body.status !== undefined && !TODO_STATUSES.has(body.status))
    problems.push({ field: 'status', message: 'status must be one of pending, in_progress, done' });
  if (problems.length) throw new HttpError(422, 'validation_failed', 'the request body is invalid', undefined, problems);
}

/** A timestamp as TypeORM writes a SQLite `datetime` column: UTC `YYYY-MM-DD HH:MM:SS.SSS`. */
const sqliteTime = (date) => date.toISOString().replace('T', ' ').slice(0, 23);

/**
 * The JSON text of a todo as API version `version` shows it (src/todos/todo.response.ts, the
 * service's `toTodoResponse` through JSON.stringify: same keys, same order), cut where its id goes:
 * `parts.join(String(id))` is the text. So the event's `data_v1` and `data_v2` can be written in
 * the statement that makes the id.
 */
function todoJsonParts(version, todo) {
  const fields = `,"title":${JSON.stringify(todo.title)},"content":${JSON.stringify(todo.content)},"status":${JSON.stringify(todo.status)},"owner":${todo.owner},"created_at":${JSON.stringify(todo.created_at)},"updated_at":${JSON.stringify(todo.updated_at)}`;
  return ['{"id":', `${fields},"links":[{"rel":"self","href":"/v${version}/todos/`, `"},{"rel":"owner","href":"/v${version}/users/${todo.owner}"}]}`];
}

/**
 * The webhook fan-out of an event (src/webhooks/webhook-fanout.ts): one `pending` delivery, due
 * now, per enabled subscription listing the type (or `*`) whose owner is the event's owner or an
 * admin. `$e` is the event's public id, `$t` the type, `$now` the time, `$owner` the owner.
 */
const fanout = (e, t, now, owner, like) =>
  `INSERT INTO webhook_deliveries (subscription_id, event_id, event_type, status, attempts, next_attempt_at, created_at)
   SELECT w.id, ${e}, ${t}, 'pending', 0, ${now}, ${now}
   FROM webhook_subscriptions w INNER JOIN users u ON u.id = w.owner_id
   WHERE w.enabled = TRUE AND (w.owner_id = ${owner} OR u.role = 'admin') AND (w.events = '["*"]' OR w.events LIKE ${like})`;

/**
 * PostgreSQL: the service's three INSERTs in ONE statement (one implicit transaction): the todo
 * (`version` 1), its `todo.created` event (`data_v1`/`data_v2` completed with the new id,
 * `traceparent` NULL as with tracing off), the deliveries of the fan-out, and the `NOTIFY
 * resource_api_webhooks` the service sends when the fan-out inserted a delivery (`pg_notify`,
 * delivered at commit like NOTIFY).
 */
const CREATE_TODO_PG = `WITH t AS (
    INSERT INTO todos (title, content, status, owner_id, created_at, updated_at, version)
    VALUES ($1, $2, $3, $4, $5, $5, 1) RETURNING id
  ), e AS (
    INSERT INTO events (event_id, type, owner_id, resource_id, created_at, data_v1, data_v2, traceparent)
    SELECT $6, $7, $4, t.id, $8, array_to_string($9::text[], t.id::text), array_to_string($10::text[], t.id::text), NULL FROM t
    RETURNING event_id
  ), d AS (
    ${fanout('e.event_id', '$7', '$8', '$4', '$11').replace('FROM webhook_subscriptions w', 'FROM e, webhook_subscriptions w')}
    RETURNING 1
  )
  SELECT t.id, (SELECT count(*) FROM (SELECT pg_notify('resource_api_webhooks', '') FROM (SELECT 1 FROM d LIMIT 1) one) n) AS notified FROM t`;

/** SQLite: the same three INSERTs as the service's, each prepared once, in one transaction. */
const sqliteCreateTodo = PG
  ? undefined
  : db.transaction((todo, now, eventId, eventAt, v1, v2) => {
      const id = Number(
        sqliteStatement('INSERT INTO todos (title, content, status, owner_id, created_at, updated_at, version) VALUES ($1, $2, $3, $4, $5, $5, 1)').run({
          p1: todo.title,
          p2: todo.content,
          p3: todo.status,
          p4: todo.owner,
          p5: now,
        }).lastInsertRowid,
      );
      sqliteStatement(
        'INSERT INTO events (event_id, type, owner_id, resource_id, created_at, data_v1, data_v2, traceparent) VALUES ($1, $2, $3, $4, $5, $6, $7, NULL)',
      ).run({ p1: eventId, p2: 'todo.created', p3: todo.owner, p4: id, p5: eventAt, p6: v1.join(String(id)), p7: v2.join(String(id)) });
      sqliteStatement(fanout('$1', '$2', '$3', '$4', '$5')).run({ p1: eventId, p2: 'todo.created', p3: eventAt, p4: todo.owner, p5: '%"todo.created"%' });
      return id;
    });

/**
 * `POST /v1/todos`: validates the body and writes what the service writes (src/todos/todos.service.ts
 * `create`, src/events/event-outbox.ts `append`, src/webhooks/webhook-fanout.ts), in one transaction:
 * 1. the `todos` row (title, content or NULL, status or `pending`, the caller as owner,
 *    `created_at` = `updated_at` = now, `version` 1);
 * 2. its `events` row: `event_id` `evt_` + 32 hex digits, type `todo.created`, owner the caller,
 *    `resource_id` the todo's id, `created_at` now, `data_v1`/`data_v2` the todo as v1 and v2 show
 *    it, `traceparent` NULL;
 * 3. the `webhook_deliveries` of the fan-out (none in the seeded databases, which have no
 *    subscriptions, but the INSERT … SELECT runs all the same), and on PostgreSQL the NOTIFY when
 *    there was one.
 * Returns `{ body, etag }` (the todo, `ETag` of version 1).
 * @throws HttpError 400/422 for an invalid body
 */
export async function createTodo(body, caller) {
  validateTodo(body);
  const now = new Date();
  const at = now.toISOString();
  const todo = { title: body.title, content: body.content ?? null, status: body.status ?? 'pending', owner: caller.id, created_at: at, updated_at: at };
  const eventId = `evt_${randomUUID().replaceAll('-', '')}`;
  const eventAt = new Date();
  const v1 = todoJsonParts('1', todo);
  const v2 = todoJsonParts('2', todo);
  let id;
  if (PG) {
    const [row] = await rows(CREATE_TODO_PG, [
      todo.title,
      todo.content,
      todo.status,
      todo.owner,
      now,
      eventId,
      'todo.created',
      eventAt,
      v1,
      v2,
      '%"todo.created"%',
    ]);
    id = Number(row.id);
  } else {
    id = sqliteCreateTodo(todo, sqliteTime(now), eventId, sqliteTime(eventAt), v1, v2);
  }
  return {
    body: {
      id,
      ...todo,
      links: [
        { rel: 'self', href: `/v1/todos/${id}` },
        { rel: 'owner', href: `/v1/users/${caller.id}` },
      ],
    },
    etag: entityTag(1),
  };
}
