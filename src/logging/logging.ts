import type { IncomingMessage, ServerResponse } from 'node:http';
import { RequestMethod, VERSION_NEUTRAL } from '@nestjs/common';
import type { Params } from 'nestjs-pino';
import { type DestinationStream, stdSerializers } from 'pino';
import type { Options } from 'pino-http';
import { traceLogMixin } from '../observability/tracing/trace-context.js';
import { ensureRequestId } from '../common/middleware/request-id.js';

/** What every redacted value becomes. */
export const CENSOR = '[REDACTED]';

/**
 * A name that carries a secret (docs/operations.md#logs: credentials and secrets never reach logs): a query or
 * fragment parameter, a header or a field whose name contains any of these, in any case.
 */
export const SECRET_NAME = /token|secret|key|code|password|passwd|pwd|csrf|verifier|session|auth|signature/i;

/**
 * Body and object fields never logged, wherever a log object carries them (top level and one
 * level down, see {@link redactFields}). Request bodies are not logged at all; this is the second line.
 */
export const REDACTED_FIELDS: ReadonlySet<string> = new Set([
  'password',
  'new_password',
  'refresh_token',
  'access_token',
  'token',
  'key',
  'client_secret',
  'secret',
  'previous_secret',
  'code_verifier',
  'csrf_token',
  'parameters',
  'query',
  'driverError',
]);

/** Log-object keys whose values go through a serializer below: their serialized shapes carry no {@link REDACTED_FIELDS}. */
const SERIALIZED_KEYS = new Set(['req', 'res', 'err']);

/**
 * A log object with every {@link REDACTED_FIELDS} field at the top level or one level down set to
 * {@link CENSOR} (what pino's `redact` with {@link REDACTED_PATHS} writes), copying only what it
 * changes: the object itself is returned when nothing matches, which is every request line. The
 * raw request, response and error (`req`, `res`, `err`) are left to their serializers, whose
 * output has none of these fields. pino's own `redact` deep-copied every line's `req` and `res`
 * (about 30 KB and a sixth of the logging CPU per request) to find nothing to censor.
 */
export function redactFields(object: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const key in object) {
    if (!Object.prototype.hasOwnProperty.call(object, key)) continue;
    const value = object[key];
    if (REDACTED_FIELDS.has(key)) {
      out ??= { ...object };
      out[key] = CENSOR;
    } else if (value !== null && typeof value === 'object' && !SERIALIZED_KEYS.has(key)) {
      let inner: Record<string, unknown> | undefined;
      for (const name of REDACTED_FIELDS) {
        if (Object.prototype.hasOwnProperty.call(value, name)) {
          inner ??= Array.isArray(value) ? (Object.assign([], value) as unknown as Record<string, unknown>) : { ...(value as Record<string, unknown>) };
          inner[name] = CENSOR;
        }
      }
      if (inner) {
        out ??= { ...object };
        out[key] = inner;
      }
    }
  }
  return out ?? object;
}

/** Secret-looking runs inside free text: bearer credentials, password hashes, JWTs, URL user-info passwords, e-mail addresses. */
const SECRET_TEXT: [RegExp, string][] = [
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, `$1 ${CENSOR}`],
  [/\$argon2(?:id|i|d)\$[^\s"',]+/g, CENSOR],
  [/\$2[abxy]?\$\d{2}\$[./A-Za-z0-9]{53}/g, CENSOR],
  [/\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, CENSOR],
  [/\brk_[A-Za-z0-9_-]{20,}/g, CENSOR],
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^:/?#@\s]*:)[^@/?#\s]*@/gi, `$1${CENSOR}@`],
  // e-mail addresses (an SMTP server's refusal quotes the recipient): personal data, never logged
  [/(?<![\w.+-])[\w.+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})+/g, CENSOR],
];

/** Free text (a log message, an error message or stack) with secret-looking runs replaced by {@link CENSOR}. */
export function redactText(text: string): string {
  return SECRET_TEXT.reduce((out, [pattern, replacement]) => out.replace(pattern, replacement), text);
}

/** One `name=value` list (a query or fragment) with the values of secret-named parameters censored; other parameters stay byte for byte. */
function redactParams(params: string): string {
  return params
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq === -1) return pair;
      let name = pair.slice(0, eq);
      try {
        name = decodeURIComponent(name.replace(/\+/g, ' '));
      } catch {
        // an undecodable name is matched as sent
      }
      return SECRET_NAME.test(name) ? `${pair.slice(0, eq)}=${CENSOR}` : pair;
    })
    .join('&');
}

/**
 * A URL or path for the logs: the values of query and fragment parameters whose names match
 * {@link SECRET_NAME} (`code`, `client_secret`, `csrf_token`, `ACCESS_TOKEN`, …) become
 * `[REDACTED]`; everything else is kept as sent.
 */
export function redactUrl(url: string): string {
  const hash = url.indexOf('#');
  const beforeHash = hash === -1 ? url : url.slice(0, hash);
  const fragment = hash === -1 ? undefined : url.slice(hash + 1);
  const q = beforeHash.indexOf('?');
  const path = q === -1 ? beforeHash : beforeHash.slice(0, q);
  const query = q === -1 ? undefined : redactParams(beforeHash.slice(q + 1));
  return `${redactText(path)}${query === undefined ? '' : `?${query}`}${fragment === undefined ? '' : `#${redactParams(fragment)}`}`;
}

/**
 * An error as it may be logged: its class, `code` (the database's SQLSTATE or driver code, when
 * there is one) and message and stack run through {@link redactText}; never the SQL, its
 * parameters (a new user's password hash, say), the driver's detail or any other property.
 * Accepts an Error or pino's serialised form of one (the `err` serializer); anything else becomes `{type, message}`.
 */
export function safeError(error: unknown): { type: string; message: string; code?: string; stack?: string } {
  if (error === null || typeof error !== 'object') return { type: typeof error, message: redactText(String(error)) };
  const e = error as { type?: unknown; name?: unknown; message?: unknown; stack?: unknown; code?: unknown; driverError?: { code?: unknown } };
  const className = (error as { constructor?: { name?: unknown } }).constructor?.name;
  const type = [e.type, className, e.name].find((t): t is string => typeof t === 'string' && t !== '' && t !== 'Object') ?? 'Object';
  const code = [e.code, e.driverError?.code].find((c) => typeof c === 'string' || typeof c === 'number');
  const message = redactText(typeof e.message === 'string' ? e.message : '').slice(0, 500);
  const stack = typeof e.stack === 'string' ? redactText(e.stack) : undefined;
  return { type, message, ...(code !== undefined ? { code: String(code) } : {}), ...(stack ? { stack } : {}) };
}

/** The authenticated caller of a request (set by the authentication guard), as the request line shows it. */
function callerProps(req: IncomingMessage): { user_id?: number; auth_scheme?: string } | undefined {
  const user = (req as IncomingMessage & { user?: { id?: number; scheme?: string } }).user;
  return user ? { user_id: user.id, auth_scheme: user.scheme } : undefined;
}

/** The longest `User-Agent` a request line carries; a longer one is cut to this many characters. */
export const MAX_USER_AGENT = 256;

/**
 * The request as its line shows it (docs/operations.md#logs): the request id, method, URL (secret-named
 * parameters censored, {@link redactUrl}), the client address (`req.ip`: TRUST_PROXY-aware, as the
 * rate limits see it) and the `User-Agent` (at most {@link MAX_USER_AGENT} characters). No header
 * map: the credentials are in headers, and the rest made a line of a kilobyte or more.
 */
export function requestLine(req: IncomingMessage & { id?: unknown; originalUrl?: string; ip?: string }): Record<string, unknown> {
  const agent = req.headers['user-agent'];
  return {
    id: req.id,
    method: req.method,
    url: redactUrl(req.originalUrl || req.url || ''),
    client_address: req.ip ?? req.socket?.remoteAddress,
    ...(agent !== undefined ? { user_agent: agent.length > MAX_USER_AGENT ? agent.slice(0, MAX_USER_AGENT) : agent } : {}),
  };
}

/**
 * nestjs-pino options, the ONE logging path: request lines, application lines (start-up,
 * warnings) and error lines all go through this pino instance, so every line is redacted the same
 * way (docs/operations.md#logs). One JSON line per request with `req` ({@link requestLine}: id, method, URL,
 * client address, user agent), `user_id` and `auth_scheme` of the authenticated caller,
 * `res.statusCode` and `responseTime` (ms); no header maps. Redaction: URLs by parameter name
 * ({@link redactUrl}), errors to {@link safeError}, message strings through {@link redactText},
 * and {@link REDACTED_FIELDS} in any logged object ({@link redactFields}, pino's
 * `formatters.log`). Request bodies are never logged. With tracing on, every line written while a
 * span is active (all of a request's lines) carries its `trace_id` and `span_id` (docs/operations.md#traces).
 * `destination`: where the lines go (LoggingModule passes its asynchronous StdoutLog);
 * pino's synchronous standard output without one.
 *
 * Per request, the work is what the line needs: the serializers read the raw request and response
 * (`wrapSerializers: false`: no intermediate copy, no parse of the query string that is not
 * logged), and the caller joins the line's own fields rather than a second child logger.
 */
export function loggerParams(level: string, destination?: DestinationStream): Params {
  const traceIds = traceLogMixin();
  const options: Options = {
    level,
    // with tracing on, `trace_id` and `span_id` of the active span on every line written inside a traced request
    ...(traceIds ? { mixin: traceIds } : {}),
    genReqId: (req: IncomingMessage, res: ServerResponse) => ensureRequestId(req as IncomingMessage & { id?: unknown }, res),
    // REDACTED_FIELDS in every logged object, copying only what matches (pino's `redact` copies every line)
    formatters: { log: redactFields },
    wrapSerializers: false,
    serializers: {
      req: requestLine,
      res: (res: ServerResponse) => ({ statusCode: res.headersSent ? res.statusCode : null }),
      err: (error: unknown) => safeError(stdSerializers.err(error as Error)),
    },
    customSuccessObject: (req: IncomingMessage, _res: ServerResponse, line: object) => ({ ...callerProps(req), ...line }),
    customErrorObject: (req: IncomingMessage, _res: ServerResponse, _error: Error, line: object) => ({ ...callerProps(req), ...line }),
    hooks: {
      logMethod(args: unknown[], method: (...args: unknown[]) => void) {
        method.apply(
          this,
          args.map((arg) => (typeof arg === 'string' ? redactText(arg) : arg)),
        );
      },
    },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
  };
  return {
    pinoHttp: destination ? [options, destination] : options,
    // nestjs-pino's default route, version-neutral: mounted once, not once more per version path
    forRoutes: [{ path: '{/*splat}', method: RequestMethod.ALL, version: VERSION_NEUTRAL }],
  };
}
