import { applyDecorators } from '@nestjs/common';
import { ApiExtension, ApiResponse } from '@nestjs/swagger';
import { ErrorResp } from '../errors/error-resp.js';

const DESCRIPTIONS: Record<number, string> = {
  400: 'Bad request: malformed JSON, a body that is not valid UTF-8 or nests deeper than 32 levels, a corrupt compressed body, U+0000 or an unpaired surrogate in any string (body, query, path), a required field missing/null/empty, a wrong JSON type, an unaccepted property (`__proto__`, `constructor`, `prototype` at any depth included), a credential in the query string, or a bad query parameter or path id.',
  401: 'Credential missing, malformed, invalid or expired.',
  403: 'Not allowed: the caller lacks the role, ownership or scope (API key, OAuth access token) needed, or a cookie-authenticated write lacks a valid X-CSRF-Token.',
  404: 'No such resource.',
  405: 'Known path, unsupported method (see the Allow header).',
  409: 'Conflict: a unique value is taken, or the current state does not allow the change.',
  412: 'Precondition failed: `If-Match` names no current representation of the resource (it changed since that ETag was read, or it is a tag of another API version). Nothing was written; read the resource again.',
  413: 'Request body larger than 100 KiB (after decompression).',
  415: 'Request body is not application/json (PATCH also takes application/merge-patch+json; the OAuth form endpoints only application/x-www-form-urlencoded), its charset is not UTF-8, or its Content-Encoding is not one of gzip, deflate, br.',
  422: 'Well-formed, but a value breaks a rule (range, length, format, enumeration).',
  428: 'Precondition required: REQUIRE_IF_MATCH is on and this write sent no `If-Match` (the resource’s `ETag`, or `*`).',
  429: 'Too many requests: the caller is over the quota of its rate-limit policy (`RateLimit-Policy` names it: per API key, per user, per client address, or the tighter registration, sign-in and password-change policies; docs/limits.md#rates), or too many failed logins from this address. Nothing was done. Retry after `Retry-After` seconds.',
  500: 'Unexpected server error; the body carries no internals. Quote `request_id` when reporting it.',
  503: 'A dependency is unavailable or too slow: the database (no answer within DB_QUERY_TIMEOUT_MS), or Redis for sessions, the token deny list and login counters. Nothing was written. Retry after `Retry-After` seconds.',
};

const EXAMPLES: Record<number, object> = {
  400: { error: 'name is required', code: 'bad_request', details: [{ field: 'name', message: 'name is required' }], request_id: '3f2c9a1e-7d4b-4f0e-9a51-2c8d7e6b1a90' },
  401: { error: 'authentication required', code: 'unauthorized', request_id: '3f2c9a1e-7d4b-4f0e-9a51-2c8d7e6b1a90' },
  403: { error: 'you are not allowed to do this', code: 'forbidden', request_id: '3f2c9a1e-7d4b-4f0e-9a51-2c8d7e6b1a90' },
  404: { error: 'todo 7 not found', code: 'not_found', request_id: '3f2c9a1e-7d4b-4f0e-9a51-2c8d7e6b1a90' },
  409: { error: 'username is already taken', code: 'conflict', request_id: '3f2c9a1e-7d4b-4f0e-9a51-2c8d7e6b1a90' },
  412: { error: 'todo 7 has changed: If-Match names no current representation; read it again', code: 'precondition_failed', request_id: '3f2c9a1e-7d4b-4f0e-9a51-2c8d7e6b1a90' },
  413: { error: 'request body is larger than 100 KiB', code: 'payload_too_large', request_id: '3f2c9a1e-7d4b-4f0e-9a51-2c8d7e6b1a90' },
  415: { error: 'content type text/plain is not supported; send application/json', code: 'unsupported_media_type', request_id: '3f2c9a1e-7d4b-4f0e-9a51-2c8d7e6b1a90' },
  422: { error: 'age must not be less than 0', code: 'validation_failed', details: [{ field: 'age', message: 'age must not be less than 0' }], request_id: '3f2c9a1e-7d4b-4f0e-9a51-2c8d7e6b1a90' },
  428: { error: 'this write needs an If-Match header: the ETag of the representation it changes (or *)', code: 'precondition_required', request_id: '3f2c9a1e-7d4b-4f0e-9a51-2c8d7e6b1a90' },
  429: { error: 'rate limit of 600 requests per minute for this user exceeded; retry in 42 s', code: 'rate_limited', request_id: '3f2c9a1e-7d4b-4f0e-9a51-2c8d7e6b1a90' },
  500: { error: 'internal server error', code: 'internal', request_id: '3f2c9a1e-7d4b-4f0e-9a51-2c8d7e6b1a90' },
  503: { error: 'the database is unavailable; retry later', code: 'service_unavailable', request_id: '3f2c9a1e-7d4b-4f0e-9a51-2c8d7e6b1a90' },
};

/** Extension set by {@link NoDatabase}: the operation gets no documented 503 (removed from the output). */
export const NO_DATABASE_EXTENSION = 'x-no-database';

/**
 * Marks an operation that never touches the database (e.g. `GET /health/live`), so the document
 * does not give it the 503 every other operation can answer when the database is down.
 */
export const NoDatabase = () => ApiExtension(NO_DATABASE_EXTENSION, true);

/**
 * The response object of an error `status` (`ErrorResp` with an example), for statuses the
 * document adds to every operation they apply to (see src/openapi/complete-document.ts). A new object each call.
 */
export function errorResponse(status: number): { description: string; content: { 'application/json': { schema: { $ref: string }; example?: object } } } {
  return {
    description: DESCRIPTIONS[status] ?? 'Error',
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/ErrorResp' },
        ...(EXAMPLES[status] ? { example: structuredClone(EXAMPLES[status]) } : {}),
      },
    },
  };
}

/**
 * Documents the error statuses an operation can return, each with the `ErrorResp` schema and an
 * example (docs/errors.md#documentation: every error status it can return).
 */
export function ApiErrors(...statuses: number[]) {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: DESCRIPTIONS[status] ?? 'Error',
        type: ErrorResp,
        ...(EXAMPLES[status] ? { example: EXAMPLES[status] } : {}),
      }),
    ),
  );
}
