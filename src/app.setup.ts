import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ConfigService } from '@nestjs/config';
import cookieParser from 'cookie-parser';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Request } from 'express';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module.js';
import { installClientErrorHandler } from './common/errors/client-error.js';
import { writeErrorResp } from './common/errors/write-error.js';
import { enterRequestContext } from './context/request-context.js';
import { chain, type Middleware } from './common/middleware/chain.js';
import { ensureRequestId } from './common/middleware/request-id.js';
import { requestTargetRules } from './common/middleware/wire.middleware.js';
import { cors, refusePlainHttp, securityHeaders } from './common/middleware/transport-security.js';
import { setupDocs } from './openapi/docs.js';
import { notModified } from './common/writes/preconditions.js';
import { enableApiVersioning } from './common/versioning/api-versions.js';
import { httpMetrics } from './observability/metrics/http-metrics.js';
import { versionNegotiation } from './common/versioning/version-negotiation.js';
import type { Env } from './config/env.validation.js';
import { servesApi, WORKER_PATHS } from './config/process-role.js';

/**
 * Applies what must be set on the application object rather than in a module, in this order: the
 * `clientError` handler of the HTTP(S) server (requests Node's parser refuses get an `ErrorResp`:
 * 431, 400, 408); the pino logger; the request metrics and Server-Timing (METRICS, SERVER_TIMING); `X-Request-Id`; helmet's security headers (+ HSTS in
 * production); CORS for CORS_ORIGINS; in production behind TRUST_PROXY, the refusal of requests
 * the proxy got over plain HTTP (400); the request-target rules (credential-named query
 * parameters, U+0000 in the query or path → 400, on every path); API versioning (every controller under /v1 and /v2; the version chosen by an
 * `Accept` vendor type or a version subdomain rewritten to the path prefix before routing —
 * docs/versioning.md#choosing-the-version); the cookie parser; Express settings (no generated ETag, 304 decided by
 * {@link evaluateConditionalReads}, no `X-Powered-By`, simple query parser, `trust proxy` from
 * TRUST_PROXY); the docs (one document per version). With ROLE=worker the process serves
 * `/health/live`, `/health/ready` and `/metrics` only: every other path answers 404 `not_found`
 * ({@link workerPathsOnly}) and there are no docs. These run
 * before Nest's routing, so they cover the docs pages, unknown routes and CORS preflights too
 * (docs/wire.md#responses, docs/wire.md#cors). Used by main.ts and by the e2e tests, so both run the same application. Signal
 * handling is main.ts' (tests close their applications themselves).
 */
export async function configureApp(app: NestExpressApplication): Promise<void> {
  installClientErrorHandler(app.getHttpServer());
  app.useLogger(app.get(Logger));
  const config = app.get<ConfigService<Env, true>>(ConfigService);
  const production = config.get('NODE_ENV', { infer: true }) === 'production';
  const trustProxy = config.get('TRUST_PROXY', { infer: true });
  // the middlewares below run as one (./common/middleware/chain.ts), in this order
  const edge: Middleware[] = [];
  // first of all: every response — docs pages included — carries X-Request-Id (docs/wire.md#x-request-id),
  // and the rest of the request runs in its one request context (src/context/request-context.ts)
  edge.push((req, res, next) => {
    enterRequestContext(ensureRequestId(req, res), next);
  });
  // then request metrics and Server-Timing time every response, refusals before routing included
  const metrics = httpMetrics({ metrics: config.get('METRICS', { infer: true }), serverTiming: config.get('SERVER_TIMING', { infer: true }) });
  if (metrics) edge.push(metrics);
  const apiRoutes = servesApi(config.get('ROLE', { infer: true }));
  if (!apiRoutes) edge.push(workerPathsOnly());
  edge.push(securityHeaders({ production, hstsMaxAge: config.get('HSTS_MAX_AGE', { infer: true }) }));
  edge.push(cors(config.get('CORS_ORIGINS', { infer: true })));
  app.set('trust proxy', trustProxy);
  if (production && trustProxy !== false) edge.push(refusePlainHttp() as Middleware);
  // before the docs and routing: the query and path rules hold on every path (docs/wire.md#paths, docs/wire.md#query-strings)
  edge.push(requestTargetRules());
  enableApiVersioning(app);
  edge.push(versionNegotiation(config.get('API_BASE_HOST', { infer: true })) as Middleware);
  edge.push(cookieParser() as Middleware);
  app.use(chain(edge));
  app.set('etag', false);
  evaluateConditionalReads(app);
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  if (!apiRoutes) return;
  await setupDocs(app, {
    NODE_ENV: config.get('NODE_ENV', { infer: true }),
    DOCS_USERNAME: config.get('DOCS_USERNAME', { infer: true }),
    DOCS_PASSWORD: config.get('DOCS_PASSWORD', { infer: true }),
  });
}

/**
 * Express middleware of a ROLE=worker process (docs/operations.md#roles-api-and-worker): requests
 * for the paths of {@link WORKER_PATHS} (`/health/live`, `/health/ready`, `/metrics`; the query is
 * ignored) go on to Nest; any other path answers 404 `not_found` `no route for <path>` (the body of
 * an unknown route), before routing, authentication or the database are touched.
 */
export function workerPathsOnly() {
  return (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (WORKER_PATHS.has(path)) return next();
    writeErrorResp(req, res, 404, `no route for ${path.slice(0, 200)}`);
  };
}

/**
 * Creates the configured application (not yet listening) for the validated `env`: HTTPS with
 * TLS_CERT/TLS_KEY (PEM files, checked by validateEnv) when both are set, else HTTP. Body parsing
 * is the WireMiddleware's.
 */
export async function createApp(env: Env): Promise<NestExpressApplication> {
  const httpsOptions = env.TLS_CERT && env.TLS_KEY ? { cert: readFileSync(env.TLS_CERT), key: readFileSync(env.TLS_KEY) } : undefined;
  const app = await NestFactory.create<NestExpressApplication>(await AppModule.forRoot(), {
    bodyParser: false,
    logger: false,
    abortOnError: false,
    httpsOptions,
  });
  await configureApp(app);
  return app;
}

/**
 * Makes Express decide a 304 by the service's own evaluation of `If-None-Match` (RFC 9110
 * §13.2.2, {@link notModified}; docs/writes.md#conditional-requests-etag-if-none-match-if-match)
 * instead of the `fresh` package's: `res.send` answers 304, without a body, when `req.fresh` is true,
 * and `fresh` says false for any request carrying `Cache-Control: no-cache` — which browsers and
 * Node's `fetch` add to every request with `If-None-Match`, so their conditional GETs got 200.
 * Replaces the `fresh` getter (and with it `stale`) of this application's requests only.
 */
export function evaluateConditionalReads(app: NestExpressApplication): void {
  const express = app.getHttpAdapter().getInstance() as { request: Request };
  Object.defineProperty(express.request, 'fresh', {
    configurable: true,
    enumerable: true,
    get(this: Request): boolean {
      const res = this.res;
      if (!res) return false;
      return notModified(
        { method: this.method, ifNoneMatch: this.headers['if-none-match'], ifModifiedSince: this.headers['if-modified-since'] },
        { status: res.statusCode, etag: res.get('ETag'), lastModified: res.get('Last-Modified') },
      );
    },
  });
}
