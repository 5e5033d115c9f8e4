import type { IncomingMessage, ServerResponse } from 'node:http';
import { ensureRequestId } from '../middleware/request-id.js';
import { ERROR_CODES, type ErrorDetail } from './api-exception.js';

/**
 * Writes an `ErrorResp` (docs/errors.md#the-body) straight to `res`, for the few plain Express middlewares that
 * run before Nest's pipeline (and its exception filter) exists for the request: the plain-HTTP
 * refusal, the CORS preflight refusal, the query and path rules. `status` must be one of
 * {@link ERROR_CODES}; `details` (field-level problems) are written only when there are some.
 */
export function writeErrorResp(
  req: IncomingMessage,
  res: ServerResponse,
  status: keyof typeof ERROR_CODES,
  message: string,
  headers: Record<string, string> = {},
  details: ErrorDetail[] = [],
): void {
  const requestId = ensureRequestId(req, res);
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  const body = JSON.stringify({ error: message, code: ERROR_CODES[status], ...(details.length > 0 ? { details } : {}), request_id: requestId });
  res.setHeader('Content-Length', Buffer.byteLength(body));
  // a HEAD answer is the GET answer without its body
  res.end(req.method === 'HEAD' ? undefined : body);
}
