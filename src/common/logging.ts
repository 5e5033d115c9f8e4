import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import { CREDENTIAL_QUERY_PARAMS } from './middleware/wire.middleware.js';
import { ensureRequestId } from './middleware/request-id.js';

/** Headers and body fields that never reach the logs (SPEC §3), wherever they appear in a log object. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers["x-csrf-token"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'password',
  'refresh_token',
  'token',
  'key',
  '*.password',
  '*.refresh_token',
  '*.token',
  '*.key',
  '*.csrf_token',
];

/** Query parameters of a response's `Location` that carry a credential: the OAuth authorization code (RFC 6749 §4.1.2). */
const LOCATION_CREDENTIALS = ['code'];

/** A `Location` header without its authorization code, for the logs. */
export function redactLocation(location: unknown): unknown {
  if (typeof location !== 'string' || !location.includes('?')) return location;
  const q = location.indexOf('?');
  const params = new URLSearchParams(location.slice(q + 1));
  if (!LOCATION_CREDENTIALS.some((name) => params.has(name))) return location;
  for (const name of LOCATION_CREDENTIALS) if (params.has(name)) params.set(name, '[REDACTED]');
  return `${location.slice(0, q)}?${params.toString()}`;
}

/** Removes credential-named query parameters (SPEC §3: `access_token`, `token`, `api_key`, `apikey`, `key`) from a URL. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  const found = CREDENTIAL_QUERY_PARAMS.filter((name) => params.has(name));
  if (found.length === 0) return url;
  for (const name of found) params.delete(name);
  const rest = params.toString();
  return rest ? `${url.slice(0, q)}?${rest}` : url.slice(0, q);
}

/**
 * nestjs-pino options: one JSON line per request with `req` (id, method, url without credential
 * parameters, headers with credentials redacted), `res.statusCode`, `responseTime` (ms),
 * `user_id` and `auth_scheme` (bearer, api_key, session) of the authenticated caller; an OAuth
 * authorization code in a redirect's `Location` is redacted.
 */
export function loggerParams(level: string): Params {
  return {
    pinoHttp: {
      level,
      customProps: (req: IncomingMessage) => {
        const user = (req as IncomingMessage & { user?: { id?: number; scheme?: string } }).user;
        return user ? { user_id: user.id, auth_scheme: user.scheme } : {};
      },
      genReqId: (req: IncomingMessage, res: ServerResponse) => ensureRequestId(req as IncomingMessage & { id?: unknown }, res),
      redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' },
      serializers: {
        req: (req: { id: unknown; method: string; url: string; headers: Record<string, unknown> }) => ({
          id: req.id,
          method: req.method,
          url: redactUrl(req.url),
          headers: req.headers,
        }),
        res: (res: { statusCode: number; headers?: Record<string, unknown> }) =>
          res.headers?.location === undefined ? res : { ...res, headers: { ...res.headers, location: redactLocation(res.headers.location) } },
      },
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
    },
  };
}
