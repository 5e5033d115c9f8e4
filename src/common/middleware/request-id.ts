import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Returns the request's id, assigning it on first call (docs/wire.md#x-request-id): the caller's `X-Request-Id` when
 * it is 1-128 characters of `[A-Za-z0-9._:-]`, else a random UUID. Also sets the `X-Request-Id`
 * response header. Idempotent, so the logger and the middleware may both call it.
 */
export function ensureRequestId(req: IncomingMessage & { id?: unknown }, res?: ServerResponse): string {
  if (typeof req.id === 'string') return req.id;
  const sent = req.headers['x-request-id'];
  const id = typeof sent === 'string' && SANE_ID.test(sent) ? sent : randomUUID();
  req.id = id;
  if (res && !res.headersSent) res.setHeader('X-Request-Id', id);
  return id;
}
