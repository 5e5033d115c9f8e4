import type { IncomingMessage, ServerResponse } from 'node:http';
import { ConfigService } from '@nestjs/config';
import cookieParser from 'cookie-parser';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module.js';
import { ensureRequestId } from './common/middleware/request-id.js';
import { setupDocs } from './common/openapi/docs.js';
import { enableApiVersioning } from './common/versioning/api-versions.js';
import { versionNegotiation } from './common/versioning/version-negotiation.js';
import type { Env } from './config/env.validation.js';

/**
 * Applies what must be set on the application object rather than in a module: the pino logger,
 * API versioning (every controller under /v1 and /v2; the version chosen by an `Accept` vendor
 * type or a version subdomain rewritten to the path prefix before routing — SPEC §9,
 * conventions §9.1), the cookie parser, Express settings (no ETag, no `X-Powered-By`, simple
 * query parser, `trust proxy` from TRUST_PROXY), shutdown hooks and the docs (one per version).
 * Used by main.ts and by the e2e tests, so both run the same application.
 */
export async function configureApp(app: NestExpressApplication): Promise<void> {
  app.useLogger(app.get(Logger));
  // first of all, so that every response — docs pages included — carries X-Request-Id (SPEC §1)
  app.use((req: IncomingMessage, res: ServerResponse, next: () => void) => {
    ensureRequestId(req, res);
    next();
  });
  const config = app.get<ConfigService<Env, true>>(ConfigService);
  enableApiVersioning(app);
  app.use(versionNegotiation(config.get('API_BASE_HOST', { infer: true })));
  app.use(cookieParser());
  app.set('etag', false);
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.enableShutdownHooks();
  app.set('trust proxy', config.get('TRUST_PROXY', { infer: true }));
  await setupDocs(app, {
    NODE_ENV: config.get('NODE_ENV', { infer: true }),
    DOCS_USERNAME: config.get('DOCS_USERNAME', { infer: true }),
    DOCS_PASSWORD: config.get('DOCS_PASSWORD', { infer: true }),
  });
}

/** Creates the configured application (not yet listening). Body parsing is the WireMiddleware's. */
export async function createApp(): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule, { bodyParser: false, bufferLogs: true, abortOnError: false });
  await configureApp(app);
  return app;
}
