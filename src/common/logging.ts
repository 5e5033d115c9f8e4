import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import { CREDENTIAL_QUERY_PARAMS } from './middleware/wire.middleware.js';
import { ensureRequestId } from './middleware/request-id.js';

/** Headers and body fields that never reach the logs (SPEC §3). */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.refresh_token',
  '*.token',
];

/** Replaces the values of credential-named query parameters in a URL with `[REDACTED]`. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  let changed = false;
  for (const name of CREDENTIAL_QUERY_PARAMS) {
    if (params.has(name)) {
      params.set(name, '[REDACTED]');
      changed = true;
    }
  }
  return changed ? `${url.slice(0, q)}?${params.toString()}` : url;
}

/** nestjs-pino options: JSON request logs with the request id, redacted credentials and URLs. */
export function loggerParams(level: string): Params {
  return {
    pinoHttp: {
      level,
      genReqId: (req: IncomingMessage, res: ServerResponse) => ensureRequestId(req as IncomingMessage & { id?: unknown }, res),
      redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' },
      serializers: {
        req: (req: { id: unknown; method: string; url: string; headers: Record<string, unknown> }) => ({
          id: req.id,
          method: req.method,
          url: redactUrl(req.url),
          headers: req.headers,
        }),
      },
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
    },
  };
}
