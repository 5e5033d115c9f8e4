import { HttpException } from '@nestjs/common';

/** Machine-readable error codes, one per status (docs/errors.md#codes). */
export const ERROR_CODES = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'validation_failed',
  412: 'precondition_failed',
  428: 'precondition_required',
  429: 'rate_limited',
  500: 'internal',
  502: 'bad_gateway',
  503: 'service_unavailable',
} as const satisfies Record<number, string>;

export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

/** One field-level problem: `field` is the snake_case path (`items[0].sku`), `message` says what is wrong. */
export interface ErrorDetail {
  field: string;
  message: string;
}

/**
 * The service's own exception: a status, a human message, optional field details and optional
 * response headers (`Allow`, `WWW-Authenticate`, `Retry-After`). The exception filter turns it
 * into the `ErrorResp` body (docs/errors.md#the-body).
 */
export class ApiException extends HttpException {
  constructor(
    status: keyof typeof ERROR_CODES,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(message, status);
  }

  /** The error code for this exception's status (docs/errors.md#codes). */
  get code(): ErrorCode {
    return ERROR_CODES[this.getStatus() as keyof typeof ERROR_CODES];
  }
}

/** The detail for a property the operation does not accept (docs/writes.md#read-only-and-unknown-fields: unknown properties → 400): `<field> is not an accepted property`. */
export const notAcceptedProperty = (field: string): ErrorDetail => ({ field, message: `${field} is not an accepted property` });

/** 400 `bad_request`: the request is not well-formed (docs/errors.md#400-or-422). */
export const badRequest = (message: string, details?: ErrorDetail[]) => new ApiException(400, message, details);

/** 401 `unauthorized` with `WWW-Authenticate: Bearer realm="api"` (plus `error="invalid_token"` when a token was sent). */
export const unauthorized = (message: string, tokenSent = false) =>
  new ApiException(401, message, undefined, {
    'WWW-Authenticate': tokenSent ? 'Bearer realm="api", error="invalid_token"' : 'Bearer realm="api"',
  });

/** 403 `forbidden`: credential valid, permission missing. */
export const forbidden = (message = 'you are not allowed to do this') => new ApiException(403, message);

/** 404 `not_found` naming the resource and id, e.g. `todo 7 not found`. */
export const notFound = (resource: string, id: number | string) => new ApiException(404, `${resource} ${id} not found`);

/** 409 `conflict`: a taken unique value or a state change the current state does not allow. */
export const conflict = (message: string) => new ApiException(409, message);

/** 412 `precondition_failed`: the `If-Match` sent names no current representation (RFC 9110 §13.1.1); nothing was written. */
export const preconditionFailed = (resource: string, id: number | string) =>
  new ApiException(412, `${resource} ${id} has changed: If-Match names no current representation; read it again`);

/** 428 `precondition_required` (RFC 6585 §3): REQUIRE_IF_MATCH is on and the write sent no `If-Match`. */
export const preconditionRequired = () => new ApiException(428, 'this write needs an If-Match header: the ETag of the representation it changes (or *)');

/** 422 `validation_failed`: well-formed, but a value breaks a rule (docs/errors.md#400-or-422). */
export const validationFailed = (details: ErrorDetail[]) =>
  new ApiException(422, details.length === 1 ? details[0].message : `${details.length} fields are invalid`, details);
