/**
 * THE FLOOR of the fixed shape: the least a NestJS 12 + @nestjs/platform-express application can
 * do per request. Its controllers answer EVERY benchmarked request — GET /v1/articles (the list
 * pages, cursors and counts), GET /v1/articles/:id and POST /v1/todos — with the bytes and headers
 * the service and the limit send, from the limit's hand-written SQL (the same prepared
 * statements, the same writes of a created todo: the row, its event and the webhook fan-out) and
 * its HS256 + deny-list check and rate-limit count (lib/handwritten.mjs), returned through Nest's
 * ordinary route handling (the handler's return value, serialized by Express `res.json`; the
 * request body parsed by Nest's default JSON body parser). No guards, pipes, interceptors, filters
 * of its own, middleware or logging; Express's ETag and `X-Powered-By` off, as in the service. The
 * benchmark reports it next to the service and the limit: the gap between the limit and the floor
 * is what Nest + Express cost; the gap between the floor and the service is what the service adds.
 *
 * Routes: GET /v1/articles, GET /v1/articles/:id, POST /v1/todos (200/201, or the error status
 * with the service's error body), GET /health/ready (`SELECT 1`). Environment as
 * lib/handwritten.mjs (BENCH_APPLICATION_NAME defaults to `resource-api-floor` here) and PORT
 * (0 → free port). Prints `listening <port>`.
 */
import 'reflect-metadata';
process.env.BENCH_APPLICATION_NAME ??= 'resource-api-floor';
const { Controller, Get, HttpException, Module, Post, Req, Res } = await import('@nestjs/common');
const { NestFactory } = await import('@nestjs/core');
const {
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
} = await import('./lib/handwritten.mjs');

/** Plain JavaScript has no decorator syntax: `decorate(Class, 'method', [method decorators], [parameter decorators])`. */
function decorate(target, method, decorators, parameters = []) {
  const descriptor = Object.getOwnPropertyDescriptor(target.prototype, method);
  parameters.forEach((parameter, index) => parameter(target.prototype, method, index));
  for (const decorator of decorators) decorator(target.prototype, method, descriptor);
}

/**
 * Runs `handler(caller)` for an authenticated request: sets the security headers, `headers`, then
 * (the caller known) `caching` and the rate-limit headers, as the service does; returns what the
 * handler returns. An HttpError becomes Nest's HttpException with the service's error body.
 */
async function authenticated(req, res, headers, caching, handler) {
  const id = requestId(req);
  res.set(SECURITY_HEADERS);
  res.set({ 'x-request-id': id, ...headers });
  try {
    const caller = await authenticate(req);
    res.set({ ...caching, ...(await rateLimit(caller)) });
    return await handler(caller);
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    if (error.extra) res.set(error.extra);
    throw new HttpException({ error: error.message, code: error.code, ...(error.details ? { details: error.details } : {}), request_id: id }, error.status);
  }
}

class ArticlesController {
  /** GET /v1/articles as the service answers it (the benchmark's caller: a user listing published articles). */
  list(req, res) {
    return authenticated(req, res, { ...DEPRECATION, link: successorLink('/v1/articles') }, PRIVATE_CACHING_LIST, async (caller) => {
      const { body, counted } = await listArticles(parseList(req.query, req.headers.prefer), caller);
      res.set('preference-applied', `count=${counted}`);
      return body;
    });
  }

  /** GET /v1/articles/:id as the service answers it (the benchmark's caller: a user reading a published article). */
  get(req, res) {
    return authenticated(req, res, { ...DEPRECATION, link: successorLink(`/v1/articles/${req.params.id}`) }, PRIVATE_CACHING, async (caller) => {
      const { body, etag } = await readArticle(req.params.id, caller);
      res.set('etag', etag);
      return body;
    });
  }
}
Controller('v1/articles')(ArticlesController);
decorate(ArticlesController, 'list', [Get()], [Req(), Res({ passthrough: true })]);
decorate(ArticlesController, 'get', [Get(':id')], [Req(), Res({ passthrough: true })]);

class TodosController {
  /** POST /v1/todos as the service answers it: 201, `Location`, `ETag`; the service's writes. */
  create(req, res) {
    return authenticated(req, res, {}, PRIVATE_CACHING, async (caller) => {
      const { body, etag } = await createTodo(req.body, caller);
      res.set({ etag, location: body.links[0].href });
      return body;
    });
  }
}
Controller('v1/todos')(TodosController);
decorate(TodosController, 'create', [Post()], [Req(), Res({ passthrough: true })]);

class HealthController {
  async ready() {
    await rows('SELECT 1 AS ok', []);
    return { status: 'ok' };
  }
}
Controller('health')(HealthController);
decorate(HealthController, 'ready', [Get('ready')]);

class FloorModule {}
Module({ controllers: [ArticlesController, TodosController, HealthController] })(FloorModule);

const app = await NestFactory.create(FloorModule, { logger: false });
app.set('etag', false);
app.disable('x-powered-by');
await app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.stdout.write(`listening ${app.getHttpServer().address().port}\n`);
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, async () => {
    await app.close();
    if (PG) await db.end();
    else db.close();
    if (redis) redis.disconnect();
    process.exit(0);
  });
}
