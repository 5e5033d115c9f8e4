import { createPrivateKey, createPublicKey, randomBytes, sign, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { ConfigError } from './config-error.js';
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
}

export { ConfigError } from './config-error.js';

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

/** Checks TLS_CERT/TLS_KEY: both or neither, readable, PEM, and a certificate with its own key. */
function checkTls(cert: string | undefined, key: string | undefined): void {
  if ((cert === undefined) !== (key === undefined)) {
    throw new ConfigError('Invalid configuration: TLS_CERT and TLS_KEY must be set together (file paths of a PEM certificate and its key)');
  }
  if (cert === undefined || key === undefined) return;
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
 * Parses CORS_ORIGINS: comma-separated origins (`scheme://host[:port]`, http or https, no path,
 * no wildcard). Returns them de-duplicated; `[]` for unset or empty.
 */
function corsOrigins(raw: Record<string, unknown>): string[] {
  const text = optional(raw, 'CORS_ORIGINS');
  if (text === undefined) return [];
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

/** The default WEBHOOK_RETRY_SCHEDULE: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, 24 h, 24 h (about 3.1 days in all). */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = [5, 300, 1800, 7200, 18_000, 36_000, 36_000, 86_400, 86_400];

/**
 * Parses WEBHOOK_RETRY_SCHEDULE: 1-50 comma-separated whole seconds (0 to 604800, one week) to
 * wait before each retry; unset or empty → {@link DEFAULT_WEBHOOK_RETRY_SCHEDULE}.
 */
function retrySchedule(raw: Record<string, unknown>): number[] {
  const text = optional(raw, 'WEBHOOK_RETRY_SCHEDULE')?.trim();
  if (text === undefined || text === '') return [...DEFAULT_WEBHOOK_RETRY_SCHEDULE];
  const parts = text.split(',').map((part) => part.trim());
  if (parts.length > 50 || parts.some((part) => !/^\d{1,6}$/.test(part) || Number(part) > 604_800)) {
    throw new ConfigError(
      `Invalid configuration: WEBHOOK_RETRY_SCHEDULE must be 1-50 comma-separated whole seconds from 0 to 604800, e.g. 5,300,1800 (got ${JSON.stringify(text)})`,
    );
  }
  return parts.map(Number);
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function int(raw: Record<string, unknown>, key: string, def: number, min: number, max: number): number {
  const value = raw[key];
  if (value === undefined || value === '') return def;
  const text = String(value).trim();
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new ConfigError(`Invalid configuration: ${key} must be an integer from ${min} to ${max} (got ${JSON.stringify(text)})`);
  }
  return Number(text);
}

/** ISO 8601 date (`2026-12-01`, midnight UTC) or date-time with `Z` or an offset. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/;

function date(raw: Record<string, unknown>, key: string, def: string): Date {
  const text = optional(raw, key)?.trim() ?? def;
  const value = new Date(/T/.test(text) ? text : `${text}T00:00:00Z`);
  // the round trip refuses calendar overflows such as 2026-02-30
  if (!ISO_DATE.test(text) || Number.isNaN(value.getTime()) || (!/T/.test(text) && value.toISOString().slice(0, 10) !== text)) {
    throw new ConfigError(
      `Invalid configuration: ${key} must be an ISO 8601 date or date-time, e.g. 2026-12-01 or 2026-12-01T00:00:00Z (got ${JSON.stringify(text)})`,
    );
  }
  return value;
}

/** `true` or `false` (any case); unset or empty → `def`. */
function bool(raw: Record<string, unknown>, key: string, def: boolean): boolean {
  const text = optional(raw, key)?.trim().toLowerCase();
  if (text === undefined) return def;
  if (text !== 'true' && text !== 'false') throw new ConfigError(`Invalid configuration: ${key} must be true or false (got ${JSON.stringify(text)})`);
  return text === 'true';
}

function optional(raw: Record<string, unknown>, key: string): string | undefined {
  const value = raw[key];
  return value === undefined || value === '' ? undefined : String(value);
}

/**
 * Validates and normalises the environment (docs/operations.md#configuration: validated at start-up; a bad value stops
 * start-up with a clear message). Takes `process.env`-shaped input, returns {@link Env}.
 * @throws ConfigError with a one-line message naming the variable.
 */
export function validateEnv(raw: Record<string, unknown>): Env {
  const nodeEnv = optional(raw, 'NODE_ENV') ?? 'development';
  if (!['development', 'test', 'production'].includes(nodeEnv)) {
    throw new ConfigError(`Invalid configuration: NODE_ENV must be development, test or production (got ${JSON.stringify(nodeEnv)})`);
  }
  const url = optional(raw, 'DATABASE_URL') ?? 'sqlite:data/app.sqlite';
  if (!/^sqlite:.+/.test(url) && !/^postgres(ql)?:\/\/.+/.test(url)) {
    throw new ConfigError('Invalid configuration: DATABASE_URL must be sqlite:<path> or postgres://user@host:port/db');
  }
  const postgres = url.startsWith('postgres');
  const role = (optional(raw, 'ROLE')?.trim().toLowerCase() ?? 'all') as ProcessRole;
  if (!PROCESS_ROLES.includes(role)) {
    throw new ConfigError(`Invalid configuration: ROLE must be all, api or worker (got ${JSON.stringify(role)})`);
  }
  if (role !== 'all' && !postgres) {
    // SQLite is one process: an api process alone would never deliver, a worker would be a second process on the file
    throw new ConfigError(`Invalid configuration: ROLE=${role} needs PostgreSQL (DATABASE_URL=postgres://…); on SQLite one process runs everything (ROLE=all)`);
  }
  const listenUrl = optional(raw, 'DATABASE_LISTEN_URL');
  if (listenUrl !== undefined && !postgres) {
    throw new ConfigError('Invalid configuration: DATABASE_LISTEN_URL is for PostgreSQL only (DATABASE_URL is SQLite)');
  }
  if (listenUrl !== undefined && !/^postgres(ql)?:\/\/.+/.test(listenUrl)) {
    throw new ConfigError('Invalid configuration: DATABASE_LISTEN_URL must be postgres://user@host:port/db');
  }
  const privateKey = optional(raw, 'JWT_PRIVATE_KEY')?.replace(/\\n/g, '\n');
  const publicKey = optional(raw, 'JWT_PUBLIC_KEY')?.replace(/\\n/g, '\n');
  if ((privateKey === undefined) !== (publicKey === undefined)) {
    throw new ConfigError('Invalid configuration: JWT_PRIVATE_KEY and JWT_PUBLIC_KEY must be set together');
  }
  if (privateKey !== undefined && publicKey !== undefined) checkRsaKeyPair(privateKey, publicKey);
  let secret = optional(raw, 'JWT_SECRET');
  if (secret === undefined) {
    if (nodeEnv === 'production' && privateKey === undefined) {
      throw new ConfigError('Invalid configuration: JWT_SECRET is required in production (or JWT_PRIVATE_KEY/JWT_PUBLIC_KEY for RS256)');
    }
    secret = randomBytes(32).toString('base64url');
  } else if (nodeEnv === 'production' && Buffer.byteLength(secret) < 32) {
    throw new ConfigError('Invalid configuration: JWT_SECRET must be at least 32 bytes in production');
  }
  const cursorSecret = optional(raw, 'LIST_CURSOR_SECRET');
  if (cursorSecret !== undefined && nodeEnv === 'production' && Buffer.byteLength(cursorSecret) < 32) {
    throw new ConfigError('Invalid configuration: LIST_CURSOR_SECRET must be at least 32 bytes in production');
  }
  const listCursorSecret =
    cursorSecret ?? (optional(raw, 'JWT_SECRET') !== undefined ? `jwt:${secret}` : privateKey !== undefined ? `rsa:${privateKey}` : `jwt:${secret}`);
  const logLevel = optional(raw, 'LOG_LEVEL') ?? (nodeEnv === 'test' ? 'silent' : 'info');
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`Invalid configuration: LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got ${JSON.stringify(logLevel)})`);
  }
  const adminUsername = optional(raw, 'ADMIN_USERNAME');
  const adminPassword = optional(raw, 'ADMIN_PASSWORD');
  if ((adminUsername === undefined) !== (adminPassword === undefined)) {
    throw new ConfigError('Invalid configuration: ADMIN_USERNAME and ADMIN_PASSWORD must be set together');
  }
  if (adminUsername !== undefined && !/^[a-z0-9_]{3,32}$/.test(adminUsername)) {
    throw new ConfigError('Invalid configuration: ADMIN_USERNAME must be 3-32 characters of a-z, 0-9 and _');
  }
  if (adminPassword !== undefined && (adminPassword.length < 8 || adminPassword.length > 128)) {
    throw new ConfigError('Invalid configuration: ADMIN_PASSWORD must be 8-128 characters');
  }
  const docsUsername = optional(raw, 'DOCS_USERNAME');
  const docsPassword = optional(raw, 'DOCS_PASSWORD');
  if ((docsUsername === undefined) !== (docsPassword === undefined)) {
    throw new ConfigError('Invalid configuration: DOCS_USERNAME and DOCS_PASSWORD must be set together');
  }
  const trustProxyText = optional(raw, 'TRUST_PROXY') ?? 'false';
  let trustProxy: boolean | number | string;
  if (trustProxyText === 'false') trustProxy = false;
  else if (/^\d{1,2}$/.test(trustProxyText)) trustProxy = Number(trustProxyText);
  else if (/^[0-9A-Za-z.:/_,\s-]+$/.test(trustProxyText) && trustProxyText !== 'true') trustProxy = trustProxyText;
  else {
    throw new ConfigError('Invalid configuration: TRUST_PROXY must be false, a hop count, or a comma-separated list of proxy addresses (never "true")');
  }
  const redisUrl = optional(raw, 'REDIS_URL');
  if (redisUrl !== undefined && !/^rediss?:\/\/[^\s/]+(\/\d{1,2})?\/?$/.test(redisUrl)) {
    throw new ConfigError('Invalid configuration: REDIS_URL must be redis://[user:password@]host:port[/db] or rediss://…');
  }
  const tlsCert = optional(raw, 'TLS_CERT');
  const tlsKey = optional(raw, 'TLS_KEY');
  checkTls(tlsCert, tlsKey);
  const deprecatedAt = date(raw, 'V1_DEPRECATED_AT', '2026-12-01');
  const sunsetAt = date(raw, 'V1_SUNSET_AT', '2027-06-30');
  if (sunsetAt.getTime() <= deprecatedAt.getTime()) {
    throw new ConfigError(`Invalid configuration: V1_SUNSET_AT (${sunsetAt.toISOString()}) must be after V1_DEPRECATED_AT (${deprecatedAt.toISOString()})`);
  }
  const baseHost = optional(raw, 'API_BASE_HOST')?.trim().toLowerCase();
  if (baseHost !== undefined && !/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(baseHost)) {
    throw new ConfigError(
      `Invalid configuration: API_BASE_HOST must be a host name such as api.example.com, without scheme or port (got ${JSON.stringify(baseHost)})`,
    );
  }
  const issuer = optional(raw, 'OAUTH_ISSUER');
  if (issuer !== undefined && !isIssuerOrigin(issuer)) {
    throw new ConfigError(
      'Invalid configuration: OAUTH_ISSUER must be an origin such as https://api.example.com (https, or http for a loopback host; no path, query or fragment)',
    );
  }
  if (issuer === undefined && nodeEnv === 'production') {
    // taken from the request's Host otherwise: a forged Host would then name another issuer (RFC 9207 mix-up)
    throw new ConfigError(
      'Invalid configuration: OAUTH_ISSUER is required in production (the origin clients reach the service at, e.g. https://api.example.com)',
    );
  }
  const metricsToken = optional(raw, 'METRICS_TOKEN');
  if (metricsToken !== undefined && !/^[\x21-\x7e]{16,512}$/.test(metricsToken)) {
    throw new ConfigError('Invalid configuration: METRICS_TOKEN must be 16-512 printable ASCII characters without spaces');
  }
  const pooler = optional(raw, 'DB_POOLER')?.trim().toLowerCase() ?? 'none';
  if (pooler !== 'none' && pooler !== 'transaction') {
    throw new ConfigError(
      `Invalid configuration: DB_POOLER must be none (PostgreSQL directly) or transaction (a transaction-mode pooler such as PgBouncer) (got ${JSON.stringify(pooler)})`,
    );
  }
  const port = int(raw, 'PORT', 3000, 0, 65535);
  const metricsPort = optional(raw, 'METRICS_PORT') === undefined ? undefined : int(raw, 'METRICS_PORT', 0, 0, 65535);
  if (metricsPort !== undefined && metricsPort !== 0 && metricsPort === port) {
    throw new ConfigError(`Invalid configuration: METRICS_PORT must differ from PORT (both ${port})`);
  }
  return {
    NODE_ENV: nodeEnv as NodeEnv,
    ROLE: role,
    PORT: port,
    DATABASE_URL: url,
    DATABASE_LISTEN_URL: postgres ? (listenUrl ?? url) : undefined,
    JWT_SECRET: secret,
    LIST_CURSOR_SECRET: listCursorSecret,
    JWT_PRIVATE_KEY: privateKey,
    JWT_PUBLIC_KEY: publicKey,
    ACCESS_TOKEN_TTL: int(raw, 'ACCESS_TOKEN_TTL', 300, 1, 86_400),
    REFRESH_TOKEN_TTL: int(raw, 'REFRESH_TOKEN_TTL', 30 * 86_400, 60, 365 * 86_400),
    ADMIN_USERNAME: adminUsername,
    ADMIN_PASSWORD: adminPassword,
    LOG_LEVEL: logLevel,
    DOCS_USERNAME: docsUsername,
    DOCS_PASSWORD: docsPassword,
    DB_POOL_SIZE: int(raw, 'DB_POOL_SIZE', 10, 1, 200),
    RATE_LIMIT_PER_MINUTE: int(raw, 'RATE_LIMIT_PER_MINUTE', 60, 1, 1_000_000),
    RATE_LIMIT_USER_PER_MINUTE: int(raw, 'RATE_LIMIT_USER_PER_MINUTE', 600, 1, 1_000_000),
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: int(raw, 'RATE_LIMIT_ANONYMOUS_PER_MINUTE', 120, 1, 1_000_000),
    RATE_LIMIT_REGISTRATIONS_PER_HOUR: int(raw, 'RATE_LIMIT_REGISTRATIONS_PER_HOUR', 20, 1, 1_000_000),
    RATE_LIMIT_SIGN_INS_PER_MINUTE: int(raw, 'RATE_LIMIT_SIGN_INS_PER_MINUTE', 20, 1, 1_000_000),
    RATE_LIMIT_PASSWORD_CHANGES_PER_HOUR: int(raw, 'RATE_LIMIT_PASSWORD_CHANGES_PER_HOUR', 10, 1, 1_000_000),
    SESSION_IDLE_TTL: int(raw, 'SESSION_IDLE_TTL', 1800, 60, 30 * 86_400),
    SESSION_ABSOLUTE_TTL: int(raw, 'SESSION_ABSOLUTE_TTL', 12 * 3600, 60, 90 * 86_400),
    TRUST_PROXY: trustProxy,
    REDIS_URL: redisUrl,
    REDIS_TIMEOUT_MS: int(raw, 'REDIS_TIMEOUT_MS', 1000, 50, 60_000),
    IDEMPOTENCY_TTL: int(raw, 'IDEMPOTENCY_TTL', 86_400, 60, 30 * 86_400),
    SHUTDOWN_DELAY_MS: int(raw, 'SHUTDOWN_DELAY_MS', 5000, 0, 600_000),
    SHUTDOWN_TIMEOUT_MS: int(raw, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    DB_QUERY_TIMEOUT_MS: int(raw, 'DB_QUERY_TIMEOUT_MS', 5000, 100, 600_000),
    DB_POOLER: pooler,
    DB_PREPARED_STATEMENTS: bool(raw, 'DB_PREPARED_STATEMENTS', true),
    HEALTH_CHECK_TIMEOUT_MS: int(raw, 'HEALTH_CHECK_TIMEOUT_MS', 2000, 100, 60_000),
    TLS_CERT: tlsCert,
    TLS_KEY: tlsKey,
    CORS_ORIGINS: corsOrigins(raw),
    HSTS_MAX_AGE: int(raw, 'HSTS_MAX_AGE', 31_536_000, 31_536_000, 315_360_000),
    V1_DEPRECATED_AT: deprecatedAt,
    V1_SUNSET_AT: sunsetAt,
    API_BASE_HOST: baseHost,
    OAUTH_ISSUER: issuer?.replace(/\/$/, ''),
    REQUIRE_IF_MATCH: bool(raw, 'REQUIRE_IF_MATCH', false),
    TRACING: tracingEnabled(raw),
    EVENT_RETENTION_DAYS: int(raw, 'EVENT_RETENTION_DAYS', 30, 1, 3650),
    WEBHOOK_ALLOW_HTTP: bool(raw, 'WEBHOOK_ALLOW_HTTP', false),
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: bool(raw, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
    WEBHOOK_RETRY_SCHEDULE: retrySchedule(raw),
    WEBHOOK_TIMEOUT_MS: int(raw, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
    WEBHOOK_POLL_INTERVAL_MS: int(raw, 'WEBHOOK_POLL_INTERVAL_MS', 1000, 50, 3_600_000),
    WEBHOOK_SECRET_GRACE_SECONDS: int(raw, 'WEBHOOK_SECRET_GRACE_SECONDS', 86_400, 0, 30 * 86_400),
    WEBHOOK_DISABLE_AFTER_FAILURES: int(raw, 'WEBHOOK_DISABLE_AFTER_FAILURES', 5, 1, 1000),
    WEBHOOK_CONCURRENCY: int(raw, 'WEBHOOK_CONCURRENCY', 8, 1, 256),
    METRICS: bool(raw, 'METRICS', true),
    METRICS_TOKEN: metricsToken,
    METRICS_PORT: metricsPort,
    SERVER_TIMING: bool(raw, 'SERVER_TIMING', false),
  };
}
