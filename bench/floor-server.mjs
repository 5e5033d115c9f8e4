/**
 * THE FLOOR of the fixed shape: the least a NestJS 12 + @nestjs/platform-express application can
 * do per request. One controller answers GET /v1/articles/:id with the bytes the service and the
 * limit send, from the limit's one hand-written query and its HS256 + deny-list check
 * (lib/handwritten.mjs), returned through Nest's ordinary route handling (the handler's return
 * value, serialized by Express `res.json`). No guards, pipes, interceptors, filters of its own,
 * middleware or logging; Express's ETag and `X-Powered-By` off, as in the service. The benchmark
 * reports it next to the service and the limit: the gap between the limit and the floor is what
 * Nest + Express cost; the gap between the floor and the service is what the service adds.
 *
 * Routes: GET /v1/articles/:id (200, or the error status with the service's error body), GET
 * /health/ready (`SELECT 1`). Environment as lib/handwritten.mjs (BENCH_APPLICATION_NAME
 * defaults to `resource-api-floor` here) and PORT (0 → free port). Prints `listening <port>`.
 */
import 'reflect-metadata';
process.env.BENCH_APPLICATION_NAME ??= 'resource-api-floor';
const { Controller, Get, HttpException, Module, Req, Res } = await import('@nestjs/common');
const { NestFactory } = await import('@nestjs/core');
const { article, authenticate, COLUMNS, db, DEPRECATION, HttpError, PG, redis, requestId, rows, SECURITY_HEADERS, successorLink } =
  await import('./lib/handwritten.mjs');

const INT = /^(0|[1-9][0-9]{0,9})$/;

/** Plain JavaScript has no decorator syntax: `decorate(Class, 'method', [method decorators], [parameter decorators])`. */
function decorate(target, method, decorators, parameters = []) {
  const descriptor = Object.getOwnPropertyDescriptor(target.prototype, method);
  parameters.forEach((parameter, index) => parameter(target.prototype, method, index));
  for (const decorator of decorators) decorator(target.prototype, method, descriptor);
}

class ArticlesController {
  /** GET /v1/articles/:id as the service answers it (the benchmark's caller: a user reading a published article). */
  async get(req, res) {
    const path = `/v1/articles/${req.params.id}`;
    const id = requestId(req);
    res.set(SECURITY_HEADERS);
    res.set({ 'x-request-id': id, ...DEPRECATION, link: successorLink(path) });
    try {
      const caller = await authenticate(req);
      if (!INT.test(req.params.id) || Number(req.params.id) < 1 || Number(req.params.id) > 2_147_483_647)
        throw new HttpError(400, 'bad_request', 'id must be a positive integer');
      const articleId = Number(req.params.id);
      const [row] = await rows(`SELECT ${COLUMNS} FROM articles a WHERE a.id = $1`, [articleId]);
      if (!row) throw new HttpError(404, 'not_found', `article ${articleId} not found`);
      if (row.status !== 'published' && caller.role !== 'admin' && Number(row.author_id) !== caller.id) {
        throw new HttpError(403, 'forbidden', `article ${articleId} is ${row.status} and belongs to another user`);
      }
      return article(row);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      if (error.extra) res.set(error.extra);
      throw new HttpException({ error: error.message, code: error.code, ...(error.details ? { details: error.details } : {}), request_id: id }, error.status);
    }
  }
}
Controller('v1/articles')(ArticlesController);
decorate(ArticlesController, 'get', [Get(':id')], [Req(), Res({ passthrough: true })]);

class HealthController {
  async ready() {
    await rows('SELECT 1 AS ok', []);
    return { status: 'ok' };
  }
}
Controller('health')(HealthController);
decorate(HealthController, 'ready', [Get('ready')]);

class FloorModule {}
Module({ controllers: [ArticlesController, HealthController] })(FloorModule);

const app = await NestFactory.create(FloorModule, { logger: false, bodyParser: false });
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
