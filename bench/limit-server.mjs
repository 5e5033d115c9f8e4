/**
 * THE LIMIT: a bare fastify server answering the benchmarked requests of resource-api with
 * byte-identical bodies (same JSON, same status) and the headers a client needs (Content-Type,
 * Location on 201, X-Request-Id, the security headers, the v1 articles deprecation headers), with
 * hand-written SQL. It is what the service could reach with no framework cost; the benchmark
 * reports the service as a ratio of it.
 *
 * Routes (an ordinary user's or an admin's Bearer access token, HS256):
 * - GET /v1/articles — `page`/`size`, `sort` (id, title, created_at, updated_at, published_at),
 *   `status` and `author` filters; visibility: published articles and the caller's own (all for
 *   admins); the list envelope with `links`;
 * - GET /v1/articles/:id — 404 missing, 403 another user's draft/archived article;
 * - POST /v1/todos — `{title, content?, status?}` → 201 with `Location`;
 * - GET /health/ready — `SELECT 1`.
 * Anything else → 404. Error bodies are the service's shape (`error`, `code`, `request_id`).
 *
 * Authentication: `Authorization: Bearer <jwt>`, HS256 verified with node:crypto (the key made
 * once), `exp`, `typ: access`, integer `user_id`, role `user`/`admin`, string `jti`/`fid`,
 * numeric `iat`; then the deny list like the service's: `deny:<jti>` and `deny-user:<user_id>`
 * in an in-process Map, or one Redis MGET when REDIS_URL is set.
 *
 * The shared hand-written parts (headers, authentication, database, article JSON) are in
 * lib/handwritten.mjs, also used by floor-server.mjs.
 *
 * Environment: DATABASE_URL (`postgres://…` → pg Pool of DB_POOL_SIZE (10), JIT off; `sqlite:<path>` →
 * better-sqlite3, WAL), JWT_SECRET, PORT (0 → free port), REDIS_URL (optional). Prints
 * `listening <port>` on stdout once ready.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import Fastify from 'fastify';
import { article, authenticate, COLUMNS, db, DEPRECATION, HttpError, PG, redis, requestId, rows, SECURITY_HEADERS, successorLink } from './lib/handwritten.mjs';

const MAX_PAGE_SIZE = 100;
/** The service's list-cursor key when LIST_CURSOR_SECRET is unset: derived from JWT_SECRET (src/common/list/cursor.ts). */
const CURSOR_KEY = createHmac('sha256', `jwt:${process.env.JWT_SECRET ?? ''}`)
  .update('resource-api list cursor v1')
  .digest();
/** Above this planner estimate `Prefer: count=estimated` answers the estimate (src/common/list/find-page.ts). */
const ESTIMATE_THRESHOLD = 10_000;

function send(reply, status, body, headers) {
  reply.code(status).headers(SECURITY_HEADERS);
  if (headers) reply.headers(headers);
  reply.header('content-type', 'application/json; charset=utf-8');
  return reply.send(JSON.stringify(body));
}

// ---------------------------------------------------------------- list query

const SORTABLE = new Set(['id', 'title', 'created_at', 'updated_at', 'published_at']);
const STATUSES = new Set(['draft', 'published', 'archived']);
const INT = /^(0|[1-9][0-9]{0,9})$/;

function badRequest(message) {
  return new HttpError(400, 'bad_request', message);
}

/** Parses the subset of the list grammar the benchmark uses; the same normalisation as the service. */
function parseList(query, prefer) {
  for (const name of Object.keys(query))
    if (!['page', 'size', 'sort', 'status', 'author', 'cursor'].includes(name)) throw badRequest(`unknown query parameter ${name}`);
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
      if (!SORTABLE.has(field) || sort.some((k) => k.field === field)) throw badRequest(`cannot sort by ${field}`);
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
    .update(JSON.stringify(['/v1/articles', sort.map((k) => `${k.desc ? '-' : ''}${k.field}`), canonical, []]))
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
  return { page, size, offset: cursor ? 0 : (page - 1) * size, sort, filters, fp, cursor, count };
}

/** A cursor as the service signs it: `base64url(JSON).base64url(HMAC-SHA256)`. */
function encodeCursor(fp, direction, values) {
  const payload = Buffer.from(JSON.stringify({ f: fp, d: direction === 'after' ? 'a' : 'b', v: values })).toString('base64url');
  return `${payload}.${createHmac('sha256', CURSOR_KEY).update(payload).digest('base64url')}`;
}

function linkQuery(q, page, cursor) {
  const params = new URLSearchParams();
  for (const [name, values] of Object.entries(q.filters)) for (const value of values) params.append(name, String(value));
  // links leave out an id tie-breaker that goes the implied way (the direction of the first key)
  const implied = q.sort.length > 1 ? q.sort[0].desc : false;
  const explicit = q.sort.filter((k, i) => !(i === q.sort.length - 1 && k.field === 'id' && k.desc === implied));
  if (explicit.length > 0) params.set('sort', explicit.map((k) => (k.desc ? '-' : '') + k.field).join(','));
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
  return { sql: conditions.length ? `WHERE ${conditions.join(' AND ')}` : '', params };
}

/** Columns that may be NULL: only their sort carries NULLS FIRST/LAST (on SQLite it would force a sort otherwise). */
const NULLABLE = new Set(['published_at']);

async function listArticles(q, caller) {
  const { sql: whereSql, params } = where(q, caller);
  const order = q.sort
    .map((k) => `a.${k.field} ${k.desc ? 'DESC' : 'ASC'}${NULLABLE.has(k.field) ? (k.desc ? ' NULLS FIRST' : ' NULLS LAST') : ''}`)
    .join(', ');
  const countSql = `SELECT count(*) AS total FROM articles a ${whereSql}`;
  const keyText = (field) => (PG && field !== 'id' && field !== 'title' ? `CAST(a.${field} AS text)` : `a.${field}`);
  const keys = q.sort.map((k, i) => `${keyText(k.field)} AS k${i}`).join(', ');
  // the keyset predicate of a cursor: one row-value comparison the (status, sort column, id) index answers as a range
  const inner = [...params];
  let keyset = '';
  if (q.cursor) {
    const bound = q.sort.map((k, i) => {
      inner.push(q.cursor.values[i]);
      return PG && k.field.endsWith('_at') ? `CAST($${inner.length} AS timestamptz)` : `$${inner.length}`;
    });
    keyset = `${whereSql ? ' AND' : 'WHERE'} (${q.sort.map((k) => `a.${k.field}`).join(', ')}) ${q.sort[0].desc ? '<' : '>'} (${bound.join(', ')})`;
  }
  // One round trip. The page's ids are found on narrow rows (the sort and OFFSET never carry
  // bodies or compute tags of skipped rows); only the page's rows are read whole; one row more than
  // the page tells whether another follows.
  const read = (condition, values, limit) =>
    rows(
      `SELECT ${COLUMNS}, ${keys}
       FROM (SELECT a.id FROM articles a ${whereSql}${condition} ORDER BY ${order} LIMIT $${values.length + 1} OFFSET $${values.length + 2}) p
       JOIN articles a ON a.id = p.id
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
  const body = {
    data: items.map(article),
    ...(q.cursor ? {} : { page: q.page }),
    size: q.size,
    ...(total !== undefined ? { total } : {}),
    ...(next ? { next_cursor: next } : {}),
    ...(prev ? { prev_cursor: prev } : {}),
    links: pageLinks(q, total, next, prev),
  };
  return { body, counted };
}

// ---------------------------------------------------------------- todos

const TODO_STATUSES = new Set(['pending', 'in_progress', 'done']);
const TODO_FIELDS = new Set(['title', 'content', 'status', 'owner', 'id', 'created_at', 'updated_at', 'links']);

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

const sqliteTime = (date) => date.toISOString().replace('T', ' ').slice(0, 23);

async function createTodo(body, caller) {
  validateTodo(body);
  const now = new Date();
  const title = body.title;
  const content = body.content ?? null;
  const status = body.status ?? 'pending';
  const stamp = PG ? now : sqliteTime(now);
  const [row] = await rows('INSERT INTO todos (title, content, status, owner_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id', [
    title,
    content,
    status,
    caller.id,
    stamp,
    stamp,
  ]);
  const id = Number(row.id);
  const at = now.toISOString();
  return {
    id,
    title,
    content,
    status,
    owner: caller.id,
    created_at: at,
    updated_at: at,
    links: [
      { rel: 'self', href: `/v1/todos/${id}` },
      { rel: 'owner', href: `/v1/users/${caller.id}` },
    ],
  };
}

// ---------------------------------------------------------------- server

const app = Fastify({ logger: false, keepAliveTimeout: 5000, bodyLimit: 100 * 1024 });
app.setErrorHandler((error, req, reply) => {
  const id = req.requestId ?? requestId(req);
  if (error instanceof HttpError) {
    const body = { error: error.message, code: error.code, ...(error.details ? { details: error.details } : {}), request_id: id };
    return send(reply, error.status, body, { 'x-request-id': id, ...error.extra });
  }
  const status = error.statusCode && error.statusCode < 500 ? error.statusCode : 500;
  return send(
    reply,
    status,
    { error: status === 500 ? 'internal server error' : error.message, code: status === 500 ? 'internal_error' : 'bad_request', request_id: id },
    { 'x-request-id': id },
  );
});
app.addHook('onRequest', async (req) => {
  req.requestId = requestId(req);
});

app.get('/health/ready', async (req, reply) => {
  await rows('SELECT 1 AS ok', []);
  return send(reply, 200, { status: 'ok' }, { 'x-request-id': req.requestId, 'cache-control': 'no-store' });
});

app.get('/v1/articles', async (req, reply) => {
  const headers = { 'x-request-id': req.requestId, ...DEPRECATION, link: successorLink('/v1/articles') };
  try {
    const caller = await authenticate(req);
    const { body, counted } = await listArticles(parseList(req.query, req.headers.prefer), caller);
    return send(reply, 200, body, { ...headers, 'preference-applied': `count=${counted}`, vary: 'Prefer' });
  } catch (error) {
    if (error instanceof HttpError) error.extra = { ...headers, ...error.extra };
    throw error;
  }
});

app.get('/v1/articles/:id', async (req, reply) => {
  const path = `/v1/articles/${req.params.id}`;
  const headers = { 'x-request-id': req.requestId, ...DEPRECATION, link: successorLink(path) };
  try {
    const caller = await authenticate(req);
    if (!INT.test(req.params.id) || Number(req.params.id) < 1 || Number(req.params.id) > 2_147_483_647) throw badRequest('id must be a positive integer');
    const id = Number(req.params.id);
    const [row] = await rows(`SELECT ${COLUMNS} FROM articles a WHERE a.id = $1`, [id]);
    if (!row) throw new HttpError(404, 'not_found', `article ${id} not found`);
    if (row.status !== 'published' && caller.role !== 'admin' && Number(row.author_id) !== caller.id) {
      throw new HttpError(403, 'forbidden', `article ${id} is ${row.status} and belongs to another user`);
    }
    return send(reply, 200, article(row), headers);
  } catch (error) {
    if (error instanceof HttpError) error.extra = { ...headers, ...error.extra };
    throw error;
  }
});

app.post('/v1/todos', async (req, reply) => {
  const caller = await authenticate(req);
  const todo = await createTodo(req.body, caller);
  return send(reply, 201, todo, { 'x-request-id': req.requestId, location: todo.links[0].href });
});

app.setNotFoundHandler((req, reply) =>
  send(reply, 404, { error: `no route for ${req.url.split('?')[0]}`, code: 'not_found', request_id: req.requestId }, { 'x-request-id': req.requestId }),
);

const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.stdout.write(`listening ${new URL(address).port}\n`);
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, async () => {
    await app.close();
    if (PG) await db.end();
    else db.close();
    if (redis) redis.disconnect();
    process.exit(0);
  });
}
