/**
 * THE LIMIT: a bare fastify server answering the benchmarked requests of resource-api with
 * byte-identical bodies (same JSON, same status) and the same response headers (every one but
 * those that differ per request, see lib/verify.mjs: Content-Type, the security headers,
 * `Cache-Control: private, no-cache` and `Vary` of an authenticated answer, `ETag` of a single
 * resource, the rate-limit headers, `Location` on 201, `Preference-Applied` of a list, the v1
 * articles deprecation headers, X-Request-Id), with hand-written SQL run as prepared statements
 * (named ones on PostgreSQL). It is what the service could reach with no framework cost; the
 * benchmark reports the service as a ratio of it.
 *
 * Routes (an ordinary user's or an admin's Bearer access token, HS256):
 * - GET /v1/articles — `page`/`size`, `sort` (id, title, created_at, updated_at, published_at),
 *   `status` and `author` filters, `cursor`, `Prefer: count=…`; visibility: published articles
 *   and the caller's own (all for admins); the list envelope with `links`;
 * - GET /v1/articles/:id — 404 missing, 403 another user's draft/archived article;
 * - POST /v1/todos — `{title, content?, status?}` → 201 with `Location`, writing what the service
 *   writes in one transaction: the todo, its `todo.created` event (the outbox `events` row) and
 *   the webhook deliveries fan-out (lib/handwritten.mjs, `createTodo`);
 * - GET /health/ready — `SELECT 1`.
 * Anything else → 404. Error bodies are the service's shape (`error`, `code`, `request_id`).
 *
 * Authentication: `Authorization: Bearer <jwt>`, HS256 verified with node:crypto (the key made
 * once), `exp`, `typ: access`, integer `user_id`, role `user`/`admin`, string `jti`/`fid`,
 * numeric `iat`; then the deny list like the service's: `deny:<jti>` and `deny-user:<user_id>`
 * in an in-process Map, or one Redis MGET when REDIS_URL is set; then the `user` rate-limit
 * policy's count (in process, or Redis).
 *
 * The hand-written parts (headers, authentication, database, list, read, todo writes) are in
 * lib/handwritten.mjs, also used by floor-server.mjs: both run the same SQL.
 *
 * Environment: DATABASE_URL (`postgres://…` → pg Pool of DB_POOL_SIZE (10), JIT off; `sqlite:<path>` →
 * better-sqlite3, WAL), JWT_SECRET, PORT (0 → free port), REDIS_URL (optional),
 * RATE_LIMIT_USER_PER_MINUTE. Prints `listening <port>` on stdout once ready.
 */
import Fastify from 'fastify';
import {
  authenticate,
  createTodo,
  db,
  DEPRECATION,
  HttpError,
  listArticles,
  parseList,
  PG,
  PRIVATE_CACHING,
  PRIVATE_CACHING_LIST,
  rateLimit,
  readArticle,
  redis,
  requestId,
  rows,
  SECURITY_HEADERS,
  successorLink,
} from './lib/handwritten.mjs';

/** Sends `body` as JSON with `status`, the security headers and `headers`. */
function send(reply, status, body, headers) {
  reply.code(status).headers(SECURITY_HEADERS);
  if (headers) reply.headers(headers);
  reply.header('content-type', 'application/json; charset=utf-8');
  return reply.send(JSON.stringify(body));
}

/**
 * Runs `handler(caller)` for an authenticated request with the headers the service sends on
 * every answer to it (`headers`, then the caching and rate-limit headers once the caller is
 * known); an HttpError gets the same headers (see the error handler).
 */
async function authenticated(req, headers, caching, handler) {
  try {
    const caller = await authenticate(req);
    Object.assign(headers, caching, await rateLimit(caller));
    return await handler(caller);
  } catch (error) {
    if (error instanceof HttpError) error.extra = { ...headers, ...error.extra };
    throw error;
  }
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
  return authenticated(req, headers, PRIVATE_CACHING_LIST, async (caller) => {
    const { body, counted } = await listArticles(parseList(req.query, req.headers.prefer), caller);
    return send(reply, 200, body, { ...headers, 'preference-applied': `count=${counted}` });
  });
});

app.get('/v1/articles/:id', async (req, reply) => {
  const headers = { 'x-request-id': req.requestId, ...DEPRECATION, link: successorLink(`/v1/articles/${req.params.id}`) };
  return authenticated(req, headers, PRIVATE_CACHING, async (caller) => {
    const { body, etag } = await readArticle(req.params.id, caller);
    return send(reply, 200, body, { ...headers, etag });
  });
});

app.post('/v1/todos', async (req, reply) => {
  const headers = { 'x-request-id': req.requestId };
  return authenticated(req, headers, PRIVATE_CACHING, async (caller) => {
    const { body, etag } = await createTodo(req.body, caller);
    return send(reply, 201, body, { ...headers, etag, location: body.links[0].href });
  });
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
