import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger, NotFoundException } from '@nestjs/common';
import type { Request, Response } from 'express';
import { EntityNotFoundError, QueryFailedError } from 'typeorm';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../../database/database-errors.js';
import { ApiException, ERROR_CODES, type ErrorDetail } from '../errors/api-exception.js';
import { ensureRequestId } from '../middleware/request-id.js';
import { RouteTable } from '../routing/route-table.js';

interface Problem {
  status: keyof typeof ERROR_CODES;
  message: string;
  details?: ErrorDetail[];
  headers?: Record<string, string>;
}

const DEFAULT_MESSAGES: Record<number, string> = {
  400: 'bad request',
  401: 'authentication required',
  403: 'you are not allowed to do this',
  404: 'not found',
  405: 'method not allowed',
  409: 'conflict',
  413: 'request body is larger than 100 KiB',
  415: 'unsupported media type',
  422: 'validation failed',
  429: 'too many requests',
  500: 'internal server error',
  502: 'bad gateway',
  503: 'service unavailable',
};

/** body-parser's error `type`s → status and a safe message (its own messages may quote input). */
const BODY_PARSER_ERRORS: Record<string, Problem> = {
  'entity.parse.failed': { status: 400, message: 'request body is not valid JSON' },
  'entity.too.large': { status: 413, message: 'request body is larger than 100 KiB' },
  'encoding.unsupported': { status: 415, message: 'content encoding is not supported' },
  'charset.unsupported': { status: 415, message: 'charset is not supported; send utf-8' },
  'parameters.too.many': { status: 413, message: 'request body has more than 100 form parameters' },
  'request.aborted': { status: 400, message: 'request body was aborted' },
  'request.size.invalid': { status: 400, message: 'request body size does not match Content-Length' },
  'stream.encoding.set': { status: 500, message: DEFAULT_MESSAGES[500] },
};

function isKnownStatus(status: number): status is keyof typeof ERROR_CODES {
  return status in ERROR_CODES;
}

/**
 * The one exception filter (docs/errors.md#the-body): every error — the service's {@link ApiException}s, Nest's
 * HttpExceptions, body-parser errors, TypeORM's not-found and constraint errors, an unreachable,
 * overloaded or too slow database (503 `service_unavailable` with `Retry-After`, see
 * database-errors.ts), anything else (500) — becomes the `ErrorResp` body
 * `{error, code, details?, request_id}` with its status. A plain `NotFoundException` for a request
 * no route serves (Nest's not-found handler throws one) becomes 404, or 405 with `Allow` when the
 * path exists for other methods — decided by the {@link RouteTable} of the routes Nest registered,
 * not by the exception's text. A 5xx body never
 * carries internals; the error is logged instead, under `err`, which the one logging path reduces
 * to class, code and a redacted message and stack (safeError in logging.ts: never SQL parameters,
 * request bodies or credential headers).
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('ExceptionFilter');

  constructor(private readonly routes: RouteTable) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request>();
    const res = ctx.getResponse<Response>();
    const problem = this.toProblem(exception, req);
    if (problem.status >= 500) {
      // under `err`, the logger's error serializer (safeError in logging.ts) keeps class, code and a
      // redacted message and stack only: never a failed query's SQL or parameters
      this.logger.error({ err: exception, req_id: req.id }, 'request failed');
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    const requestId = ensureRequestId(req, res);
    for (const [name, value] of Object.entries(problem.headers ?? {})) res.setHeader(name, value);
    res.status(problem.status).json({
      error: problem.message,
      code: ERROR_CODES[problem.status],
      ...(problem.details?.length ? { details: problem.details } : {}),
      request_id: requestId,
    });
  }

  private toProblem(exception: unknown, req: Request): Problem {
    if (exception instanceof ApiException) {
      return { status: exception.getStatus() as Problem['status'], message: exception.message, details: exception.details, headers: exception.headers };
    }
    if (exception instanceof NotFoundException && !this.routes.serves(req.path, req.method)) {
      return this.unmatchedRoute(req);
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const headers = status === 401 ? { 'WWW-Authenticate': 'Bearer realm="api"' } : undefined;
      if (!isKnownStatus(status)) return { status: status >= 500 ? 500 : 400, message: DEFAULT_MESSAGES[status >= 500 ? 500 : 400] };
      return { status, message: status >= 500 ? DEFAULT_MESSAGES[status] : this.httpMessage(exception, status), headers };
    }
    if (exception instanceof EntityNotFoundError) return { status: 404, message: DEFAULT_MESSAGES[404] };
    if (exception instanceof QueryFailedError) {
      const code = String((exception.driverError as { code?: unknown } | undefined)?.code ?? '');
      if (code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
        return { status: 409, message: 'a unique value is already taken' };
      }
      if (code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY') {
        return { status: 409, message: 'a referenced resource does not exist or is still in use' };
      }
    }
    const type = (exception as { type?: unknown } | null)?.type;
    if (typeof type === 'string' && type in BODY_PARSER_ERRORS) return BODY_PARSER_ERRORS[type];
    if (isDatabaseUnavailable(exception)) {
      return { status: 503, message: 'the database is unavailable; retry later', headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) } };
    }
    return { status: 500, message: DEFAULT_MESSAGES[500] };
  }

  private httpMessage(exception: HttpException, status: number): string {
    const response = exception.getResponse();
    const message = typeof response === 'string' ? response : (response as { message?: unknown }).message;
    if (typeof message === 'string' && message.length > 0) return message;
    if (Array.isArray(message) && message.length > 0) return message.join('; ');
    return DEFAULT_MESSAGES[status] ?? exception.message;
  }

  /** Unknown route → 404; known path with another method → 405 with `Allow` (docs/wire.md#paths). */
  private unmatchedRoute(req: Request): Problem {
    const methods = this.routes.allowedMethods(req.path);
    if (methods.length === 0) return { status: 404, message: `no route for ${req.path}` };
    return {
      status: 405,
      message: `${req.method} is not allowed on ${req.path}; allowed: ${methods.join(', ')}`,
      headers: { Allow: methods.join(', ') },
    };
  }
}
