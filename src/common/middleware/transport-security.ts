import type { NextFunction, Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';
import { writeErrorResp } from '../errors/write-error.js';
import type { Middleware } from './chain.js';

/** The docs page and its assets (Swagger UI), the only HTML the service serves. */
const DOCS_PATH = /^\/docs(\/|$)/;

/** Methods a cross-origin caller may use (docs/wire.md#cors). */
export const CORS_ALLOWED_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** Request headers a cross-origin caller may send: the three credentials' headers, the body type, its own request id, its idempotency key and the preconditions. */
export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'X-API-Key',
  'X-CSRF-Token',
  'X-Request-Id',
  'Idempotency-Key',
  'If-Match',
  'If-None-Match',
];

/** Response headers a cross-origin caller may read besides the CORS-safelisted ones. */
export const CORS_EXPOSED_HEADERS = [
  'Location',
  'ETag',
  'X-Request-Id',
  'Retry-After',
  'RateLimit-Policy',
  'RateLimit',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'WWW-Authenticate',
  'Allow',
  'Link',
  'Deprecation',
  'Sunset',
  'Idempotent-Replayed',
];

/** Seconds a browser may cache a successful preflight. */
export const CORS_MAX_AGE_SECONDS = 600;

/**
 * helmet on every response (docs/wire.md#security-headers). API responses are JSON, so their
 * Content-Security-Policy allows nothing (`default-src 'none'; frame-ancestors 'none'`); the docs
 * page (`/docs*`) gets helmet's default policy (scripts, styles, images from itself) so Swagger UI
 * runs. In production every response also carries `Strict-Transport-Security:
 * max-age=<hstsMaxAge>; includeSubDomains` (seconds, at least one year).
 */
export function securityHeaders(options: { production: boolean; hstsMaxAge: number }): Middleware {
  const hsts = options.production ? { maxAge: options.hstsMaxAge, includeSubDomains: true } : false;
  const api = helmet({
    contentSecurityPolicy: { useDefaults: false, directives: { 'default-src': ["'none'"], 'frame-ancestors': ["'none'"] } },
    xFrameOptions: { action: 'deny' },
    strictTransportSecurity: hsts,
  });
  const docs = helmet({
    // http://localhost must keep loading the page's own assets
    contentSecurityPolicy: { directives: { 'upgrade-insecure-requests': null } },
    strictTransportSecurity: hsts,
  });
  return (req, res, next) => {
    const path = (req.url ?? '/').split('?')[0];
    (DOCS_PATH.test(path) ? docs : api)(req, res, next);
  };
}

/**
 * CORS for the origins of CORS_ORIGINS only (docs/wire.md#cors), before routing:
 * - a request from a listed origin gets `Access-Control-Allow-Origin: <origin>`,
 *   `Access-Control-Allow-Credentials: true` (the `sid` cookie works from a same-site front end)
 *   and `Access-Control-Expose-Headers` ({@link CORS_EXPOSED_HEADERS});
 * - its preflight (OPTIONS with `Origin` and `Access-Control-Request-Method`) answers 204 with
 *   the allowed methods and headers and `Access-Control-Max-Age`;
 * - a preflight from any other origin answers 403 `forbidden` (ErrorResp) without CORS headers,
 *   never 404/405; other requests from other origins are served without CORS headers, so the
 *   browser does not let the page read them.
 * With no origin configured no response ever carries a CORS header. `Vary: Origin` is sent
 * whenever CORS is on, so caches keep the answers apart.
 */
export function cors(origins: readonly string[]): Middleware {
  const allowed = new Set(origins);
  return (req, res, next) => {
    const origin = req.headers.origin;
    const preflight = req.method === 'OPTIONS' && origin !== undefined && req.headers['access-control-request-method'] !== undefined;
    if (allowed.size > 0) res.setHeader('Vary', 'Origin');
    if (origin === undefined || !allowed.has(origin)) {
      if (preflight) return writeErrorResp(req, res, 403, `origin ${origin} may not call this API from a browser (not in CORS_ORIGINS)`);
      return next();
    }
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Allow-Credentials', 'true');
    if (preflight) {
      res.setHeader('Access-Control-Allow-Methods', CORS_ALLOWED_METHODS.join(', '));
      res.setHeader('Access-Control-Allow-Headers', CORS_ALLOWED_HEADERS.join(', '));
      res.setHeader('Access-Control-Max-Age', String(CORS_MAX_AGE_SECONDS));
      res.statusCode = 204;
      res.end();
      return;
    }
    res.setHeader('Access-Control-Expose-Headers', CORS_EXPOSED_HEADERS.join(', '));
    next();
  };
}

/**
 * In production behind a trusted proxy (TRUST_PROXY), a request the proxy received over plain HTTP
 * — `X-Forwarded-Proto: http` from a trusted peer — is refused with 400 `bad_request` for every
 * method (docs/operations.md#tls): no redirect, since the request (and any credential in it) already
 * crossed the network in clear, and a redirect would teach clients that http:// works.
 * `X-Forwarded-Proto` from an untrusted peer is ignored, as Express' `req.protocol` does.
 */
export function refusePlainHttp(): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const forwarded = req.headers['x-forwarded-proto'];
    if (forwarded === undefined || req.protocol.toLowerCase() !== 'http') return next();
    const trust = req.app.get('trust proxy fn') as (address: string | undefined, hop: number) => boolean;
    if (!trust(req.socket.remoteAddress, 0)) return next();
    writeErrorResp(req, res, 400, 'plain HTTP is not accepted: send the request over https://');
  };
}
