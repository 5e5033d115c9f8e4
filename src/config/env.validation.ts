import { createPrivateKey, createPublicKey, randomBytes, sign, verify } from 'node:crypto';

/** Runtime environment names accepted in `NODE_ENV` (SPEC §10). */
export type NodeEnv = 'development' | 'test' | 'production';

/** The validated, typed configuration. Keys are the environment variable names. */
export interface Env {
  NODE_ENV: NodeEnv;
  /** TCP port the HTTP server listens on. */
  PORT: number;
  /** Unset or `sqlite:<path>` → SQLite; `postgres://…` → PostgreSQL. Normalised to one of both. */
  DATABASE_URL: string;
  /** HS256 secret for access tokens. Generated per process when unset outside production. */
  JWT_SECRET: string;
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
  /** Requests per minute per API key (SPEC §7). */
  RATE_LIMIT_PER_MINUTE: number;
  /** Session cookie: seconds without use before a session ends, and its absolute lifetime. */
  SESSION_IDLE_TTL: number;
  SESSION_ABSOLUTE_TTL: number;
  /**
   * Express `trust proxy`: `false` (default: the client address is the socket's), a hop count, or
   * a comma-separated list of proxy addresses/subnets (`loopback`, `10.0.0.0/8`, …).
   */
  TRUST_PROXY: boolean | number | string;
  /**
   * The OAuth 2.0 issuer identifier (RFC 8414, RFC 9207): the origin clients reach the service at,
   * e.g. `https://api.example.com` (https; http only for a loopback host). Unset → each request's
   * own origin (development and tests).
   */
  OAUTH_ISSUER?: string;
}

/** Thrown for a bad environment value; its message is one line naming the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

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

function optional(raw: Record<string, unknown>, key: string): string | undefined {
  const value = raw[key];
  return value === undefined || value === '' ? undefined : String(value);
}

/**
 * Validates and normalises the environment (SPEC §10: "validated at start-up; a bad value stops
 * start-up with a clear message"). Takes `process.env`-shaped input, returns {@link Env}.
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
  const issuer = optional(raw, 'OAUTH_ISSUER');
  if (issuer !== undefined && !isIssuerOrigin(issuer)) {
    throw new ConfigError('Invalid configuration: OAUTH_ISSUER must be an origin such as https://api.example.com (https, or http for a loopback host; no path, query or fragment)');
  }
  return {
    NODE_ENV: nodeEnv as NodeEnv,
    PORT: int(raw, 'PORT', 3000, 0, 65535),
    DATABASE_URL: url,
    JWT_SECRET: secret,
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
    SESSION_IDLE_TTL: int(raw, 'SESSION_IDLE_TTL', 1800, 60, 30 * 86_400),
    SESSION_ABSOLUTE_TTL: int(raw, 'SESSION_ABSOLUTE_TTL', 12 * 3600, 60, 90 * 86_400),
    TRUST_PROXY: trustProxy,
    OAUTH_ISSUER: issuer?.replace(/\/$/, ''),
  };
}
