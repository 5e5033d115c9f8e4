import { createHash, createPrivateKey, createPublicKey, randomBytes, sign, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { ConfigError } from './config-error.js';
import { invalid, readSchema, type Schema } from './env-schema.js';
import { tracingEnabled } from './tracing.config.js';

/** Runtime environment names accepted in `NODE_ENV` (docs/operations.md#configuration). */
export type NodeEnv = 'development' | 'test' | 'production';

/**
 * What a process runs (docs/operations.md#roles-api-and-worker): `all` the HTTP API and the
 * background work (webhook deliveries, event retention, idempotency-record pruning); `api` the
 * HTTP API only; `worker` the background work only, with `/health/live`, `/health/ready` and
 * `/metrics` on PORT for probes.
 */
export type ProcessRole = 'all' | 'api' | 'worker';

/** The accepted values of ROLE. */
export const PROCESS_ROLES: readonly ProcessRole[] = ['all', 'api', 'worker'];

/** The validated, typed configuration. Keys are the environment variable names. */
export interface Env {
  NODE_ENV: NodeEnv;
  /** What this process runs (default `all`); `api` and `worker` need PostgreSQL. See {@link ProcessRole}. */
  ROLE: ProcessRole;
  /** TCP port the HTTP server listens on. */
  PORT: number;
  /** Unset or `sqlite:<path>` → SQLite; `postgres://…` → PostgreSQL. Normalised to one of both. */
  DATABASE_URL: string;
  /**
   * PostgreSQL only: the URL of the one dedicated connection on which a process running the
   * webhook worker (ROLE `all` or `worker`) LISTENs for wake-ups. It must reach PostgreSQL directly
   * or through a session-mode pooler (a transaction-mode pooler cannot carry LISTEN). Defaults to
   * DATABASE_URL; undefined on SQLite.
   */
  DATABASE_LISTEN_URL?: string;
  /** HS256 secret for access tokens. Generated per process when unset outside production. */
  JWT_SECRET: string;
  /**
   * HMAC secret of list cursors (docs/lists.md#cursor-paging): LIST_CURSOR_SECRET (at least 32 bytes in
   * production), else derived from JWT_SECRET when set, else from JWT_PRIVATE_KEY, else the
   * per-process JWT_SECRET. Every instance behind one load balancer must resolve to the same one.
   */
  LIST_CURSOR_SECRET: string;
  /** RS256 key pair (PEM); when both are set, access tokens are RS256 and the public key is at /.well-known/jwks.json. */
  JWT_PRIVATE_KEY?: string;
  JWT_PUBLIC_KEY?: string;
  /** Access-token lifetime in seconds (default 300). */
  ACCESS_TOKEN_TTL: number;
  /** Refresh-token lifetime in seconds (default 30 days). */
  REFRESH_TOKEN_TTL: number;
  ADMIN_USERNAME?: string;
  ADMIN_PASSWORD?: string;
  /** pino level: fatal, error, warn, info, debug, trace, silent. */
  LOG_LEVEL: string;
  /** Credentials for the docs page in production (HTTP Basic); docs are off in production without them. */
  DOCS_USERNAME?: string;
  DOCS_PASSWORD?: string;
  /** Maximum PostgreSQL pool size. */
  DB_POOL_SIZE: number;
  /** Requests per minute per API key (default 60; docs/limits.md#rates). */
  RATE_LIMIT_PER_MINUTE: number;
  /** Requests per minute per user, bearer token, cookie session or OAuth token alike (default 600; docs/limits.md#rates). */
  RATE_LIMIT_USER_PER_MINUTE: number;
  /** Anonymous requests per minute per client address, the costly operations aside (default 120; docs/limits.md#rates). */
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: number;
  /** Registrations (`POST /v{version}/users`) per hour per client address (default 20; docs/limits.md#rates). */
  RATE_LIMIT_REGISTRATIONS_PER_HOUR: number;
  /** Password sign-ins (login, session, OAuth sign-in form, together) per minute per client address (default 20; docs/limits.md#rates). */
  RATE_LIMIT_SIGN_INS_PER_MINUTE: number;
  /** Password changes (PUT or PATCH of a user with `password`) per hour per user (default 10; docs/limits.md#rates). */
  RATE_LIMIT_PASSWORD_CHANGES_PER_HOUR: number;
  /** Session cookie: seconds without use before a session ends, and its absolute lifetime. */
  SESSION_IDLE_TTL: number;
  SESSION_ABSOLUTE_TTL: number;
  /**
   * Express `trust proxy`: `false` (default: the client address is the socket's), a hop count, or
   * a comma-separated list of proxy addresses/subnets (`loopback`, `10.0.0.0/8`, …).
   */
  TRUST_PROXY: boolean | number | string;
  /**
   * `redis://[user:password@]host:port[/db]` or `rediss://…`: shared state (rate-limit counters,
   * sessions, deny list, login counters) in Redis for several instances; unset → in process.
   */
  REDIS_URL?: string;
  /** Milliseconds a Redis command may take before it fails (→ 503 or fail-open, see README). */
  REDIS_TIMEOUT_MS: number;
  /**
   * Seconds a response to a request with an `Idempotency-Key` is kept and replayed for the same
   * caller and key (default 86400, 24 h; 60 s to 30 days). See docs/writes.md.
   */
  IDEMPOTENCY_TTL: number;
  /**
   * Milliseconds the lame-duck period lasts (default 5000; 0 to 600000, 0 = none): from SIGTERM/SIGINT
   * readiness answers 503 while everything else is served as usual, so a load balancer moves the
   * traffic away before the drain (docs/operations.md#shutdown).
   */
  SHUTDOWN_DELAY_MS: number;
  /**
   * Milliseconds the drain after the lame-duck period may take (default 10000): requests still in
   * flight then have their connections closed. The whole shutdown takes at most
   * SHUTDOWN_DELAY_MS + SHUTDOWN_TIMEOUT_MS before the database closes.
   */
  SHUTDOWN_TIMEOUT_MS: number;
  /**
   * Milliseconds one database operation may take: PostgreSQL connect, pool wait and query
   * (`statement_timeout` on the server, `query_timeout` in the client), SQLite `busy_timeout`
   * (default 5000). Past it the request answers 503 `service_unavailable`.
   */
  DB_QUERY_TIMEOUT_MS: number;
  /**
   * `none` (default): PostgreSQL directly, `statement_timeout` and `jit=off` as start-up parameters.
   * `transaction`: through a transaction-mode pooler (PgBouncer, RDS Proxy, Supavisor): no start-up
   * parameters, the settings by `SET LOCAL` in each transaction (docs/operations.md#behind-a-connection-pooler).
   */
  DB_POOLER: 'none' | 'transaction';
  /** `false`: statements run unnamed, for poolers without protocol-level prepared statements (PgBouncer before 1.21); default true. */
  DB_PREPARED_STATEMENTS: boolean;
  /** Milliseconds each readiness check of GET /health/ready may take before it counts as down (default 2000). */
  HEALTH_CHECK_TIMEOUT_MS: number;
  /** PEM certificate (chain) and private key file paths: when both are set the service speaks HTTPS itself. */
  TLS_CERT?: string;
  TLS_KEY?: string;
  /** Origins allowed to call the API from a browser (CORS), normalised; empty: no CORS headers at all. */
  CORS_ORIGINS: string[];
  /** `Strict-Transport-Security` max-age in seconds, sent in production (default 31536000, one year; at least that). */
  HSTS_MAX_AGE: number;
  /** When API v1 is deprecated (its `Deprecation` header, docs/versioning.md#deprecation-and-sunset). Default 2026-12-01T00:00:00Z. */
  V1_DEPRECATED_AT: Date;
  /** When API v1 stops being served (its `Sunset` header); after V1_DEPRECATED_AT. Default 2027-06-30T00:00:00Z. */
  V1_SUNSET_AT: Date;
  /**
   * The API's base host name, e.g. `api.example.com`: a request to `v2.api.example.com` on an
   * unprefixed path is served by API v2 (docs/versioning.md#choosing-the-version). Unset: no version subdomains.
   */
  API_BASE_HOST?: string;
  /**
   * The OAuth 2.0 issuer identifier (RFC 8414, RFC 9207): the origin clients reach the service at,
   * e.g. `https://api.example.com` (https; http only for a loopback host). Unset → each request's
   * own origin (development and tests).
   */
  OAUTH_ISSUER?: string;
  /** `true`: PUT, PATCH and DELETE of a resource without `If-Match` → 428 `precondition_required` (RFC 6585 §3). Default false. */
  REQUIRE_IF_MATCH: boolean;
  /**
   * Whether traces are exported (OpenTelemetry): decided by the standard `OTEL_*` variables, see
   * {@link tracingEnabled}. Off → the OpenTelemetry SDK is not loaded.
   */
  TRACING: boolean;
  /**
   * Days an event stays in the event log (`GET /events`, docs/events.md) before the retention job
   * deletes it (default 30; 1 to 3650).
   */
  EVENT_RETENTION_DAYS: number;
  /** `true`: webhook URLs may be `http:` (development and tests); default false, https only. */
  WEBHOOK_ALLOW_HTTP: boolean;
  /**
   * `true`: webhook URLs may resolve to loopback, private, link-local, CGNAT, multicast or
   * unspecified addresses (tests, private deployments); default false (SSRF protection).
   */
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: boolean;
  /**
   * Seconds to wait before each retry of a failed webhook delivery, in order (one attempt, then one
   * retry per entry); ±10 % jitter is applied. Default 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h,
   * 24 h, 24 h: ten attempts over about 3.1 days.
   */
  WEBHOOK_RETRY_SCHEDULE: number[];
  /** Milliseconds one webhook delivery attempt may take in all (connect, send, response headers); default 10000. */
  WEBHOOK_TIMEOUT_MS: number;
  /** Milliseconds between two looks for due webhook deliveries (default 1000); committed events also wake the worker at once. */
  WEBHOOK_POLL_INTERVAL_MS: number;
  /** Seconds the previous secret of a webhook stays valid (signatures carry both) after a rotation; default 86400. */
  WEBHOOK_SECRET_GRACE_SECONDS: number;
  /** Consecutive failed deliveries (every attempt used) after which a webhook is disabled; default 5. */
  WEBHOOK_DISABLE_AFTER_FAILURES: number;
  /** Webhook delivery attempts one process runs at the same time; default 8. */
  WEBHOOK_CONCURRENCY: number;
  /** `false` removes GET /metrics and all metric collection (default true). */
  METRICS: boolean;
  /** Bearer token for GET /metrics in production (and on METRICS_PORT when set); unset in production → /metrics answers 404. */
  METRICS_TOKEN?: string;
  /** When set, /metrics is served on this separate port (plain HTTP; `0` a free port, logged) and not on PORT. */
  METRICS_PORT?: number;
  /** `true`: every response carries `Server-Timing: db;dur=<ms>, total;dur=<ms>` (default false). */
  SERVER_TIMING: boolean;
  /**
   * Where users open the links the service mails (docs/authentication.md#password-reset):
   * `<APP_URL>/reset-password#token=…`. Read it through {@link appUrlOf} (the default outside
   * production is `http://localhost:<PORT>`; in production unset turns password reset off).
   */
  APP_URL?: string;
  /**
   * The SMTP server mail goes out through (docs/operations.md#mail): `smtp://user:pass@host:587`
   * (STARTTLS when offered), `smtps://…:465` (implicit TLS). Unset outside production: mail is
   * written as `.eml` files under `data/mail/`; required in production while APP_URL is set.
   */
  SMTP_URL?: string;
  /** The `From` of every mail: `Name <address>` or an address; required in production while APP_URL is set. Read it through {@link mailFromOf}. */
  MAIL_FROM?: string;
  /** Seconds a password-reset token stays valid (default 1800; 60 to 86400). */
  PASSWORD_RESET_TTL: number;
  /** Seconds an e-mail verification token stays valid (docs/authentication.md#e-mail-verification; default 86400; 60 to 604800). */
  EMAIL_VERIFICATION_TTL: number;
  /**
   * `true`: password sign-in (`POST /login`, `POST /sessions`, the OAuth sign-in form) refuses an
   * account without a verified e-mail address with 403 (docs/authentication.md#e-mail-verification). Default false.
   */
  REQUIRE_VERIFIED_EMAIL: boolean;
  /**
   * The key two-factor secrets are encrypted under (AES-256-GCM, docs/authentication.md#two-factor-authentication-totp):
   * 32 bytes as 64 hex digits or base64. Unset outside production: a fixed development key (not a
   * secret); unset in production: two-factor enrolment is off (404). Read it through {@link totpKeyOf}.
   */
  TOTP_ENCRYPTION_KEY?: string;
  /** The issuer the authenticator app shows for the account (`otpauth://totp/<issuer>:<username>`); default `resource-api`. */
  TOTP_ISSUER: string;
  /**
   * `true`: an admin without two-factor authentication who signs in with a password gets a login
   * that can only enrol (everything else 403) (docs/authentication.md#requiring-two-factor-authentication-for-admins). Default false.
   */
  REQUIRE_ADMIN_TOTP: boolean;
  /** Seconds to wait before each retry of a mail the SMTP server did not accept, in order (±10 % jitter); default 10, 60, 300, 900, 1800, 3600, 3600: eight attempts over about 2.7 hours. */
  MAIL_RETRY_SCHEDULE: number[];
  /** Milliseconds between two looks for due mail (default 1000); a commit that queues mail also wakes the worker of its process at once. */
  MAIL_POLL_INTERVAL_MS: number;
}

export { ConfigError } from './config-error.js';

/** The default WEBHOOK_RETRY_SCHEDULE: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, 24 h, 24 h (about 3.1 days in all). */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = [5, 300, 1800, 7200, 18_000, 36_000, 36_000, 86_400, 86_400];

/** The default MAIL_RETRY_SCHEDULE: 10 s, 1 min, 5 min, 15 min, 30 min, 1 h, 1 h (eight attempts over about 2.7 hours). */
export const DEFAULT_MAIL_RETRY_SCHEDULE = [10, 60, 300, 900, 1800, 3600, 3600];

/** The `From` outside production when MAIL_FROM is unset. */
export const DEVELOPMENT_MAIL_FROM = 'resource-api <no-reply@localhost>';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const SQLITE_URL = /^sqlite:.+/;
const POSTGRES_URL = /^postgres(ql)?:\/\/.+/;

/** The upper limit of the rate-limit quotas (docs/limits.md#rates). */
const QUOTA_MAX = 1_000_000;
const DAY = 86_400;

/**
 * Parses CORS_ORIGINS: comma-separated origins (`scheme://host[:port]`, http or https, no path,
 * no wildcard). Returns them de-duplicated; `[]` when only separators are given.
 * @throws ConfigError naming CORS_ORIGINS and the refused entry.
 */
function corsOrigins(text: string): string[] {
  const origins = new Set<string>();
  for (const entry of text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0)) {
    let origin: string | undefined;
    try {
      const url = new URL(entry);
      if ((url.protocol === 'http:' || url.protocol === 'https:') && url.origin === entry && !entry.includes('*')) origin = url.origin;
    } catch {
      origin = undefined;
    }
    if (origin === undefined) {
      throw new ConfigError(
        `Invalid configuration: CORS_ORIGINS must be comma-separated origins such as https://app.example.com (lower case, no path, no wildcard; got ${JSON.stringify(entry)})`,
      );
    }
    origins.add(origin);
  }
  return [...origins];
}

/**
 * Parses WEBHOOK_RETRY_SCHEDULE: 1-50 comma-separated whole seconds (0 to 604800, one week) to
 * wait before each retry; blank → {@link DEFAULT_WEBHOOK_RETRY_SCHEDULE}.
 * @throws ConfigError naming `key` and echoing the value.
 */
function retrySchedule(text: string, key: string, fallback: readonly number[] = DEFAULT_WEBHOOK_RETRY_SCHEDULE): number[] {
  const trimmed = text.trim();
  if (trimmed === '') return [...fallback];
  const parts = trimmed.split(',').map((part) => part.trim());
  if (parts.length > 50 || parts.some((part) => !/^\d{1,6}$/.test(part) || Number(part) > 604_800)) {
    invalid(key, '1-50 comma-separated whole seconds from 0 to 604800, e.g. 5,300,1800', trimmed);
  }
  return parts.map(Number);
}

/**
 * Parses TRUST_PROXY: `false`, a hop count (0-99) or a list of proxy addresses/subnets; `true`
 * (trust every proxy, so clients could spoof their address) is refused.
 * @throws ConfigError naming `key`.
 */
function trustProxy(text: string, key: string): boolean | number | string {
  if (text === 'false') return false;
  if (/^\d{1,2}$/.test(text)) return Number(text);
  if (/^[0-9A-Za-z.:/_,\s-]+$/.test(text) && text !== 'true') return text;
  return invalid(key, 'false, a hop count, or a comma-separated list of proxy addresses (never "true")');
}

/** True for `https://host[:port]` (or `http://` with a loopback host), without path, query or fragment. */
function isIssuerOrigin(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  return (url.protocol === 'https:' || (url.protocol === 'http:' && loopback)) && url.origin === value.replace(/\/$/, '') && !url.username && !url.password;
}

/** True for an `http:` or `https:` URL without user info, query or fragment (a path is allowed). */
function isAppUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password && !url.search && !url.hash && !/[?#]/.test(value);
}

/** True for an `smtp:` or `smtps:` URL with a host (user info and a port allowed). */
function isSmtpUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (url.protocol === 'smtp:' || url.protocol === 'smtps:') && url.hostname !== '';
}

/** A PEM given on one line with `\n` escapes, as several lines. */
const unescapeNewlines = (pem: string): string => pem.replace(/\\n/g, '\n');

/** What the schema reads: {@link Env}, except that the two secrets may be unset (the rules settle them). */
type EnvRead = Omit<Env, 'JWT_SECRET' | 'LIST_CURSOR_SECRET'> & { JWT_SECRET?: string; LIST_CURSOR_SECRET?: string };

/**
 * The environment schema (docs/operations.md#configuration; the README's configuration table
 * lists the same variables): per variable its type, default, bounds or allowed values and meaning.
 * Unset and empty are the same; integers, booleans, dates, ROLE, DB_POOLER and API_BASE_HOST are
 * trimmed. A refused value stops start-up with `Invalid configuration: <VARIABLE> must be …`,
 * echoing the value only where it cannot be a secret. The rules that combine variables follow in
 * {@link applyRules}.
 */
const ENV_SCHEMA: Schema<EnvRead> = {
  NODE_ENV: {
    type: 'text',
    values: ['development', 'test', 'production'],
    rule: 'development, test or production',
    echo: true,
    default: 'development',
    meaning: 'runtime environment',
  },
  ROLE: {
    type: 'text',
    values: PROCESS_ROLES,
    caseInsensitive: true,
    rule: 'all, api or worker',
    echo: true,
    default: 'all',
    meaning: 'what the process runs; api and worker need PostgreSQL',
  },
  PORT: { type: 'int', min: 0, max: 65_535, default: 3000, meaning: 'HTTP(S) port; 0 picks a free one' },
  DATABASE_URL: {
    type: 'text',
    valid: (url) => SQLITE_URL.test(url) || POSTGRES_URL.test(url),
    rule: 'sqlite:<path> or postgres://user@host:port/db',
    default: 'sqlite:data/app.sqlite',
    meaning: 'the database: a SQLite file or PostgreSQL',
  },
  DATABASE_LISTEN_URL: {
    type: 'text',
    valid: POSTGRES_URL,
    rule: 'postgres://user@host:port/db',
    default: (env) => (POSTGRES_URL.test(env.DATABASE_URL) ? env.DATABASE_URL : undefined),
    meaning: 'PostgreSQL only: the connection the webhook worker LISTENs on (DATABASE_URL by default)',
  },
  JWT_SECRET: { type: 'text', meaning: 'HS256 secret of access tokens (generated per process when unset outside production)' },
  LIST_CURSOR_SECRET: { type: 'text', meaning: 'HMAC secret of list cursors (derived from the JWT secret or key when unset)' },
  JWT_PRIVATE_KEY: { type: 'text', output: unescapeNewlines, meaning: 'RS256 private key (PEM, `\\n` escapes allowed)' },
  JWT_PUBLIC_KEY: { type: 'text', output: unescapeNewlines, meaning: 'RS256 public key (PEM), served at /.well-known/jwks.json' },
  ACCESS_TOKEN_TTL: { type: 'int', min: 1, max: DAY, default: 300, meaning: 'access-token lifetime, seconds' },
  REFRESH_TOKEN_TTL: { type: 'int', min: 60, max: 365 * DAY, default: 30 * DAY, meaning: 'refresh-token lifetime, seconds' },
  ADMIN_USERNAME: {
    type: 'text',
    valid: /^[a-z0-9_]{3,32}$/,
    rule: '3-32 characters of a-z, 0-9 and _',
    meaning: 'admin created at start-up when none exists',
  },
  ADMIN_PASSWORD: { type: 'text', valid: (pw) => pw.length >= 8 && pw.length <= 128, rule: '8-128 characters', meaning: "that admin's password" },
  LOG_LEVEL: {
    type: 'text',
    values: LOG_LEVELS,
    rule: `one of ${LOG_LEVELS.join(', ')}`,
    echo: true,
    default: (env) => (env.NODE_ENV === 'test' ? 'silent' : 'info'),
    meaning: 'pino level (silent in test, else info)',
  },
  DOCS_USERNAME: { type: 'text', meaning: 'HTTP Basic user of the docs in production (off without it)' },
  DOCS_PASSWORD: { type: 'text', meaning: 'HTTP Basic password of the docs in production' },
  DB_POOL_SIZE: { type: 'int', min: 1, max: 200, default: 10, meaning: 'PostgreSQL connection pool size' },
  RATE_LIMIT_PER_MINUTE: { type: 'int', min: 1, max: QUOTA_MAX, default: 60, meaning: 'requests per minute per API key' },
  RATE_LIMIT_USER_PER_MINUTE: { type: 'int', min: 1, max: QUOTA_MAX, default: 600, meaning: 'requests per minute per user' },
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: { type: 'int', min: 1, max: QUOTA_MAX, default: 120, meaning: 'anonymous requests per minute per client address' },
  RATE_LIMIT_REGISTRATIONS_PER_HOUR: { type: 'int', min: 1, max: QUOTA_MAX, default: 20, meaning: 'registrations per hour per client address' },
  RATE_LIMIT_SIGN_INS_PER_MINUTE: { type: 'int', min: 1, max: QUOTA_MAX, default: 20, meaning: 'password sign-ins per minute per client address' },
  RATE_LIMIT_PASSWORD_CHANGES_PER_HOUR: { type: 'int', min: 1, max: QUOTA_MAX, default: 10, meaning: 'password changes per hour per user' },
  SESSION_IDLE_TTL: { type: 'int', min: 60, max: 30 * DAY, default: 1800, meaning: 'seconds unused after which a cookie session ends' },
  SESSION_ABSOLUTE_TTL: { type: 'int', min: 60, max: 90 * DAY, default: 12 * 3600, meaning: 'seconds after sign-in at which a cookie session ends' },
  TRUST_PROXY: { type: 'custom', parse: trustProxy, default: false, meaning: 'Express trust proxy: false, a hop count or proxy addresses' },
  REDIS_URL: {
    type: 'text',
    valid: /^rediss?:\/\/[^\s/]+(\/\d{1,2})?\/?$/,
    rule: 'redis://[user:password@]host:port[/db] or rediss://…',
    meaning: 'shared state in Redis for several instances (unset: in process)',
  },
  REDIS_TIMEOUT_MS: { type: 'int', min: 50, max: 60_000, default: 1000, meaning: 'milliseconds before a Redis command counts as failed' },
  IDEMPOTENCY_TTL: { type: 'int', min: 60, max: 30 * DAY, default: DAY, meaning: 'seconds an idempotent response is kept and replayed' },
  SHUTDOWN_DELAY_MS: { type: 'int', min: 0, max: 600_000, default: 5000, meaning: 'lame-duck period on SIGTERM/SIGINT (readiness 503)' },
  SHUTDOWN_TIMEOUT_MS: { type: 'int', min: 0, max: 600_000, default: 10_000, meaning: 'how long the drain after it may take' },
  DB_QUERY_TIMEOUT_MS: { type: 'int', min: 100, max: 600_000, default: 5000, meaning: 'bound of one database operation (then 503)' },
  DB_POOLER: {
    type: 'text',
    values: ['none', 'transaction'],
    caseInsensitive: true,
    rule: 'none (PostgreSQL directly) or transaction (a transaction-mode pooler such as PgBouncer)',
    echo: true,
    default: 'none',
    meaning: 'whether PostgreSQL is reached through a transaction-mode pooler',
  },
  DB_PREPARED_STATEMENTS: { type: 'bool', default: true, meaning: 'false: statements run unnamed (poolers without prepared statements)' },
  HEALTH_CHECK_TIMEOUT_MS: { type: 'int', min: 100, max: 60_000, default: 2000, meaning: 'bound of each readiness check' },
  TLS_CERT: { type: 'text', meaning: 'PEM certificate (chain) file: HTTPS with TLS_KEY' },
  TLS_KEY: { type: 'text', meaning: 'PEM private key file of TLS_CERT' },
  CORS_ORIGINS: { type: 'custom', parse: corsOrigins, default: () => [], meaning: 'origins allowed to call the API from a browser' },
  HSTS_MAX_AGE: { type: 'int', min: 365 * DAY, max: 3650 * DAY, default: 365 * DAY, meaning: 'Strict-Transport-Security max-age in production, seconds' },
  V1_DEPRECATED_AT: { type: 'date', default: '2026-12-01', meaning: 'when API v1 is deprecated (Deprecation header)' },
  V1_SUNSET_AT: { type: 'date', default: '2027-06-30', meaning: 'when API v1 stops being served (Sunset header)' },
  API_BASE_HOST: {
    type: 'text',
    caseInsensitive: true,
    valid: /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/,
    rule: 'a host name such as api.example.com, without scheme or port',
    echo: true,
    meaning: 'base host of the version subdomains (v2.<host>)',
  },
  OAUTH_ISSUER: {
    type: 'text',
    valid: isIssuerOrigin,
    output: (origin) => origin.replace(/\/$/, ''),
    rule: 'an origin such as https://api.example.com (https, or http for a loopback host; no path, query or fragment)',
    meaning: 'OAuth issuer identifier (unset: the request origin; required in production)',
  },
  REQUIRE_IF_MATCH: { type: 'bool', default: false, meaning: 'true: PUT, PATCH and DELETE without If-Match are 428' },
  TRACING: { type: 'derived', from: tracingEnabled, meaning: 'whether traces are exported, decided by the standard OTEL_* variables' },
  EVENT_RETENTION_DAYS: { type: 'int', min: 1, max: 3650, default: 30, meaning: 'days an event stays in the event log' },
  WEBHOOK_ALLOW_HTTP: { type: 'bool', default: false, meaning: 'true: webhook URLs may be http:' },
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: { type: 'bool', default: false, meaning: 'true: webhook URLs may resolve to private addresses' },
  WEBHOOK_RETRY_SCHEDULE: {
    type: 'custom',
    parse: retrySchedule,
    default: () => [...DEFAULT_WEBHOOK_RETRY_SCHEDULE],
    meaning: 'seconds before each retry of a failed delivery',
  },
  WEBHOOK_TIMEOUT_MS: { type: 'int', min: 100, max: 120_000, default: 10_000, meaning: 'bound of one delivery attempt' },
  WEBHOOK_POLL_INTERVAL_MS: { type: 'int', min: 50, max: 3_600_000, default: 1000, meaning: 'milliseconds between two looks for due deliveries' },
  WEBHOOK_SECRET_GRACE_SECONDS: { type: 'int', min: 0, max: 30 * DAY, default: DAY, meaning: 'seconds the previous secret signs after a rotation' },
  WEBHOOK_DISABLE_AFTER_FAILURES: { type: 'int', min: 1, max: 1000, default: 5, meaning: 'failed deliveries in a row that disable a webhook' },
  WEBHOOK_CONCURRENCY: { type: 'int', min: 1, max: 256, default: 8, meaning: 'delivery attempts one process makes at the same time' },
  METRICS: { type: 'bool', default: true, meaning: 'false: no GET /metrics and no collection' },
  METRICS_TOKEN: {
    type: 'text',
    valid: /^[\x21-\x7e]{16,512}$/,
    rule: '16-512 printable ASCII characters without spaces',
    meaning: 'bearer token of GET /metrics in production and on METRICS_PORT',
  },
  METRICS_PORT: { type: 'int', min: 0, max: 65_535, meaning: 'separate plain-HTTP port of /metrics (0: a free one)' },
  SERVER_TIMING: { type: 'bool', default: false, meaning: 'true: every response carries Server-Timing' },
  APP_URL: {
    type: 'text',
    valid: isAppUrl,
    output: (url) => url.replace(/\/+$/, ''),
    rule: 'an http(s) URL such as https://app.example.com (a path is allowed; no user info, query or fragment)',
    echo: true,
    meaning: 'where the links the service mails point (default outside production http://localhost:<PORT>)',
  },
  SMTP_URL: {
    type: 'text',
    valid: isSmtpUrl,
    rule: 'an smtp:// or smtps:// URL such as smtp://user:pass@mail.example.com:587',
    meaning: 'the SMTP server mail goes out through (unset outside production: .eml files under data/mail/)',
  },
  MAIL_FROM: {
    type: 'text',
    valid: /^(?:[^<>\r\n"]{0,100}<[^\s<>@]{1,64}@[^\s<>@]{1,253}>|[^\s<>@]{1,64}@[^\s<>@]{1,253})$/,
    rule: 'an address such as no-reply@example.com or "Example <no-reply@example.com>"',
    meaning: 'the From of every mail',
  },
  PASSWORD_RESET_TTL: { type: 'int', min: 60, max: DAY, default: 1800, meaning: 'seconds a password-reset token stays valid' },
  EMAIL_VERIFICATION_TTL: { type: 'int', min: 60, max: 7 * DAY, default: DAY, meaning: 'seconds an e-mail verification token stays valid' },
  REQUIRE_VERIFIED_EMAIL: { type: 'bool', default: false, meaning: 'true: password sign-in refuses accounts without a verified e-mail address' },
  TOTP_ENCRYPTION_KEY: {
    type: 'text',
    valid: (value) => totpKeyBytes(value) !== undefined,
    rule: '32 bytes as 64 hex digits or base64 (e.g. openssl rand -base64 32)',
    meaning: 'the 32-byte key (hex or base64) two-factor secrets are encrypted under (unset in production: two-factor enrolment is off)',
  },
  TOTP_ISSUER: {
    type: 'text',
    valid: /^[^:\p{Cc}]{1,64}$/u,
    rule: 'a name of 1 to 64 characters without ":" or control characters',
    echo: true,
    default: 'resource-api',
    meaning: 'the issuer name authenticator apps show for two-factor accounts',
  },
  REQUIRE_ADMIN_TOTP: { type: 'bool', default: false, meaning: 'true: an admin without two-factor authentication signs in only to enrol' },
  MAIL_RETRY_SCHEDULE: {
    type: 'custom',
    parse: (text, key) => retrySchedule(text, key, DEFAULT_MAIL_RETRY_SCHEDULE),
    default: () => [...DEFAULT_MAIL_RETRY_SCHEDULE],
    meaning: 'seconds before each retry of a mail the SMTP server did not accept',
  },
  MAIL_POLL_INTERVAL_MS: { type: 'int', min: 50, max: 3_600_000, default: 1000, meaning: 'milliseconds between two looks for due mail' },
};

/** Variables set together or not at all, with what the message adds. */
const PAIRS: readonly [keyof EnvRead, keyof EnvRead, string][] = [
  ['JWT_PRIVATE_KEY', 'JWT_PUBLIC_KEY', ''],
  ['ADMIN_USERNAME', 'ADMIN_PASSWORD', ''],
  ['DOCS_USERNAME', 'DOCS_PASSWORD', ''],
  ['TLS_CERT', 'TLS_KEY', ' (file paths of a PEM certificate and its key)'],
];

/** Checks that two PEM strings are an RSA key pair of at least 2048 bits that belong together. */
function checkRsaKeyPair(privatePem: string, publicPem: string): void {
  let privateKey;
  let publicKey;
  try {
    privateKey = createPrivateKey(privatePem);
  } catch {
    throw new ConfigError('Invalid configuration: JWT_PRIVATE_KEY is not a PEM private key');
  }
  try {
    publicKey = createPublicKey(publicPem);
  } catch {
    throw new ConfigError('Invalid configuration: JWT_PUBLIC_KEY is not a PEM public key');
  }
  if (privateKey.asymmetricKeyType !== 'rsa' || (privateKey.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) {
    throw new ConfigError('Invalid configuration: JWT_PRIVATE_KEY must be an RSA key of at least 2048 bits');
  }
  const probe = Buffer.from('resource-api key check');
  if (!verify('sha256', probe, publicKey, sign('sha256', probe, privateKey))) {
    throw new ConfigError('Invalid configuration: JWT_PUBLIC_KEY does not belong to JWT_PRIVATE_KEY');
  }
}

/** Reads a file named by an environment variable; a missing or unreadable file is a one-line ConfigError. */
function readConfiguredFile(key: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    const code = (error as { code?: string }).code ?? 'unreadable';
    throw new ConfigError(`Invalid configuration: ${key} file ${JSON.stringify(file)} cannot be read (${code})`);
  }
}

/** Checks the files of TLS_CERT and TLS_KEY: readable, PEM, and a certificate with its own key. */
function checkTls(cert: string, key: string): void {
  const certPem = readConfiguredFile('TLS_CERT', cert);
  const keyPem = readConfiguredFile('TLS_KEY', key);
  if (!certPem.includes('-----BEGIN CERTIFICATE-----')) throw new ConfigError('Invalid configuration: TLS_CERT is not a PEM certificate');
  try {
    createPrivateKey(keyPem);
  } catch {
    throw new ConfigError('Invalid configuration: TLS_KEY is not a PEM private key (an encrypted key is not supported)');
  }
  try {
    createSecureContext({ cert: certPem, key: keyPem });
  } catch {
    throw new ConfigError('Invalid configuration: TLS_CERT and TLS_KEY do not belong together (or the certificate is not valid PEM)');
  }
}

/**
 * The rules that combine variables, after the schema: ROLE `api`/`worker` and DATABASE_LISTEN_URL
 * need PostgreSQL; the {@link PAIRS} are set together; the RS256 pair and the TLS files belong
 * together; production needs JWT_SECRET (or the RS256 pair) and OAUTH_ISSUER, and 32 bytes of each
 * secret set; V1_SUNSET_AT is after V1_DEPRECATED_AT; METRICS_PORT differs from PORT (unless 0);
 * production with APP_URL (the mail features on) needs SMTP_URL and MAIL_FROM.
 * Then settles the unset secrets: a random JWT_SECRET per process; the list-cursor secret derived
 * from JWT_SECRET, else the RS256 private key. (APP_URL and MAIL_FROM keep their unset state: their
 * defaults are {@link appUrlOf} and {@link mailFromOf}, so that Nest's ConfigModule, which writes
 * the validated values back into `process.env`, never makes a default look set.)
 * @throws ConfigError with a one-line message naming the variable.
 */
function applyRules(env: EnvRead): Env {
  const production = env.NODE_ENV === 'production';
  const postgres = POSTGRES_URL.test(env.DATABASE_URL);
  if (env.ROLE !== 'all' && !postgres) {
    // SQLite is one process: an api process alone would never deliver, a worker would be a second process on the file
    throw new ConfigError(
      `Invalid configuration: ROLE=${env.ROLE} needs PostgreSQL (DATABASE_URL=postgres://…); on SQLite one process runs everything (ROLE=all)`,
    );
  }
  if (env.DATABASE_LISTEN_URL !== undefined && !postgres) {
    throw new ConfigError('Invalid configuration: DATABASE_LISTEN_URL is for PostgreSQL only (DATABASE_URL is SQLite)');
  }
  for (const [first, second, note] of PAIRS) {
    if ((env[first] === undefined) !== (env[second] === undefined))
      throw new ConfigError(`Invalid configuration: ${first} and ${second} must be set together${note}`);
  }
  if (env.JWT_PRIVATE_KEY !== undefined && env.JWT_PUBLIC_KEY !== undefined) checkRsaKeyPair(env.JWT_PRIVATE_KEY, env.JWT_PUBLIC_KEY);
  if (production && env.JWT_SECRET === undefined && env.JWT_PRIVATE_KEY === undefined) {
    throw new ConfigError('Invalid configuration: JWT_SECRET is required in production (or JWT_PRIVATE_KEY/JWT_PUBLIC_KEY for RS256)');
  }
  for (const key of ['JWT_SECRET', 'LIST_CURSOR_SECRET'] as const) {
    const secret = env[key];
    if (production && secret !== undefined && Buffer.byteLength(secret) < 32)
      throw new ConfigError(`Invalid configuration: ${key} must be at least 32 bytes in production`);
  }
  if (env.TLS_CERT !== undefined && env.TLS_KEY !== undefined) checkTls(env.TLS_CERT, env.TLS_KEY);
  if (env.V1_SUNSET_AT.getTime() <= env.V1_DEPRECATED_AT.getTime()) {
    throw new ConfigError(
      `Invalid configuration: V1_SUNSET_AT (${env.V1_SUNSET_AT.toISOString()}) must be after V1_DEPRECATED_AT (${env.V1_DEPRECATED_AT.toISOString()})`,
    );
  }
  if (production && env.OAUTH_ISSUER === undefined) {
    // taken from the request's Host otherwise: a forged Host would then name another issuer (RFC 9207 mix-up)
    throw new ConfigError(
      'Invalid configuration: OAUTH_ISSUER is required in production (the origin clients reach the service at, e.g. https://api.example.com)',
    );
  }
  if (env.METRICS_PORT !== undefined && env.METRICS_PORT !== 0 && env.METRICS_PORT === env.PORT) {
    throw new ConfigError(`Invalid configuration: METRICS_PORT must differ from PORT (both ${env.PORT})`);
  }
  if (production && env.APP_URL !== undefined) {
    // the mail features are on: they must reach a real mail server, from a real address
    for (const key of ['SMTP_URL', 'MAIL_FROM'] as const) {
      if (env[key] === undefined) {
        throw new ConfigError(
          `Invalid configuration: ${key} is required in production while APP_URL is set (password reset sends mail; unset APP_URL to turn it off)`,
        );
      }
    }
  }
  if (production && env.REQUIRE_VERIFIED_EMAIL && env.APP_URL === undefined) {
    // no verification mail goes out without APP_URL: nobody could ever sign in again
    throw new ConfigError('Invalid configuration: REQUIRE_VERIFIED_EMAIL=true needs APP_URL in production (the verification mail links to it)');
  }
  if (production && env.REQUIRE_ADMIN_TOTP && env.TOTP_ENCRYPTION_KEY === undefined) {
    // enrolment is off without the key in production: no admin could ever enrol
    throw new ConfigError('Invalid configuration: REQUIRE_ADMIN_TOTP=true needs TOTP_ENCRYPTION_KEY in production (two-factor enrolment is off without it)');
  }
  const jwtSecret = env.JWT_SECRET ?? randomBytes(32).toString('base64url');
  const listCursorSecret =
    env.LIST_CURSOR_SECRET ?? (env.JWT_SECRET === undefined && env.JWT_PRIVATE_KEY !== undefined ? `rsa:${env.JWT_PRIVATE_KEY}` : `jwt:${jwtSecret}`);
  return { ...env, JWT_SECRET: jwtSecret, LIST_CURSOR_SECRET: listCursorSecret };
}

/**
 * The base of the links the service mails (docs/authentication.md#password-reset): APP_URL, else
 * outside production `http://localhost:<PORT>`; undefined in production without APP_URL (password
 * reset is off).
 */
export function appUrlOf(env: Pick<Env, 'APP_URL' | 'NODE_ENV' | 'PORT'>): string | undefined {
  return env.APP_URL ?? (env.NODE_ENV === 'production' ? undefined : `http://localhost:${env.PORT}`);
}

/** The `From` of every mail: MAIL_FROM, else (outside production; production requires it) {@link DEVELOPMENT_MAIL_FROM}. */
export function mailFromOf(env: Pick<Env, 'MAIL_FROM'>): string {
  return env.MAIL_FROM ?? DEVELOPMENT_MAIL_FROM;
}

/** A TOTP_ENCRYPTION_KEY's 32 bytes (64 hex digits, or base64 / base64url of 32 bytes); undefined for any other value. */
function totpKeyBytes(text: string): Buffer | undefined {
  const value = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) return undefined;
  const bytes = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length === 32 ? bytes : undefined;
}

/**
 * The key of two-factor secrets (docs/authentication.md#two-factor-authentication-totp):
 * TOTP_ENCRYPTION_KEY, else outside production a fixed development key (SHA-256 of a constant:
 * not a secret, so development data is readable after a restart); undefined in production without
 * it (two-factor enrolment is off).
 */
export function totpKeyOf(env: Pick<Env, 'TOTP_ENCRYPTION_KEY' | 'NODE_ENV'>): Buffer | undefined {
  if (env.TOTP_ENCRYPTION_KEY !== undefined) return totpKeyBytes(env.TOTP_ENCRYPTION_KEY);
  return env.NODE_ENV === 'production' ? undefined : createHash('sha256').update('resource-api development TOTP key').digest();
}

/**
 * Validates and normalises the environment (docs/operations.md#configuration: validated at start-up; a bad value stops
 * start-up with a clear message): each variable by {@link ENV_SCHEMA}, then the rules that combine
 * them ({@link applyRules}). Takes `process.env`-shaped input, returns {@link Env}.
 * @throws ConfigError with a one-line message naming the variable.
 */
export function validateEnv(raw: Record<string, unknown>): Env {
  return applyRules(readSchema(ENV_SCHEMA, raw));
}
