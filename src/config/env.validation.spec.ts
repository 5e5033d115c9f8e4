import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { appUrlOf, ConfigError, mailFromOf, totpKeyOf, validateEnv } from './env.validation.js';

const SECRET_32 = 'x'.repeat(32);
const ISSUER = 'https://api.example.com';

/** Runs validateEnv and returns the ConfigError it throws; fails the test when it throws nothing or something else. */
function configError(raw: Record<string, unknown>): ConfigError {
  try {
    validateEnv(raw);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(raw)}`);
}

/** Asserts the clear start-up message of docs/operations.md#configuration: one line, naming the variable. */
function expectOneLineNaming(error: ConfigError, variable: string): void {
  expect(error).toBeInstanceOf(Error);
  expect(error.name).toBe('ConfigError');
  expect(error.message).not.toMatch(/[\r\n]/);
  expect(error.message).toMatch(/^Invalid configuration: /);
  expect(error.message).toContain(variable);
}

describe('validateEnv', () => {
  describe('defaults', () => {
    it('fills every default for an empty environment', () => {
      const env = validateEnv({});
      expect(env).toEqual({
        NODE_ENV: 'development',
        ROLE: 'all',
        PORT: 3000,
        DATABASE_URL: 'sqlite:data/app.sqlite',
        DATABASE_LISTEN_URL: undefined,
        JWT_SECRET: expect.any(String),
        LIST_CURSOR_SECRET: `jwt:${env.JWT_SECRET}`,
        ACCESS_TOKEN_TTL: 300,
        REFRESH_TOKEN_TTL: 30 * 86_400,
        ADMIN_USERNAME: undefined,
        ADMIN_PASSWORD: undefined,
        LOG_LEVEL: 'info',
        DOCS_USERNAME: undefined,
        DOCS_PASSWORD: undefined,
        DB_POOL_SIZE: 10,
        JWT_PRIVATE_KEY: undefined,
        JWT_PUBLIC_KEY: undefined,
        RATE_LIMIT_PER_MINUTE: 60,
        RATE_LIMIT_USER_PER_MINUTE: 600,
        RATE_LIMIT_ANONYMOUS_PER_MINUTE: 120,
        RATE_LIMIT_REGISTRATIONS_PER_HOUR: 20,
        RATE_LIMIT_SIGN_INS_PER_MINUTE: 20,
        RATE_LIMIT_PASSWORD_CHANGES_PER_HOUR: 10,
        REQUIRE_IF_MATCH: false,
        SESSION_IDLE_TTL: 1800,
        SESSION_ABSOLUTE_TTL: 43_200,
        TRUST_PROXY: false,
        REDIS_URL: undefined,
        REDIS_TIMEOUT_MS: 1000,
        IDEMPOTENCY_TTL: 86_400,
        SHUTDOWN_DELAY_MS: 5000,
        SHUTDOWN_TIMEOUT_MS: 10_000,
        DB_QUERY_TIMEOUT_MS: 5000,
        DB_POOLER: 'none',
        DB_PREPARED_STATEMENTS: true,
        HEALTH_CHECK_TIMEOUT_MS: 2000,
        TLS_CERT: undefined,
        TLS_KEY: undefined,
        CORS_ORIGINS: [],
        HSTS_MAX_AGE: 31_536_000,
        V1_DEPRECATED_AT: new Date('2026-12-01T00:00:00.000Z'),
        V1_SUNSET_AT: new Date('2027-06-30T00:00:00.000Z'),
        API_BASE_HOST: undefined,
        TRACING: false,
        EVENT_RETENTION_DAYS: 30,
        WEBHOOK_ALLOW_HTTP: false,
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: false,
        WEBHOOK_RETRY_SCHEDULE: [5, 300, 1800, 7200, 18_000, 36_000, 36_000, 86_400, 86_400],
        WEBHOOK_TIMEOUT_MS: 10_000,
        WEBHOOK_POLL_INTERVAL_MS: 1000,
        WEBHOOK_SECRET_GRACE_SECONDS: 86_400,
        WEBHOOK_DISABLE_AFTER_FAILURES: 5,
        WEBHOOK_CONCURRENCY: 8,
        METRICS: true,
        METRICS_TOKEN: undefined,
        METRICS_PORT: undefined,
        SERVER_TIMING: false,
        PASSWORD_RESET_TTL: 1800,
        EMAIL_VERIFICATION_TTL: 86_400,
        REQUIRE_VERIFIED_EMAIL: false,
        TOTP_ENCRYPTION_KEY: undefined,
        TOTP_ISSUER: 'resource-api',
        REQUIRE_ADMIN_TOTP: false,
        MAIL_RETRY_SCHEDULE: [10, 60, 300, 900, 1800, 3600, 3600],
        MAIL_POLL_INTERVAL_MS: 1000,
      });
    });

    it('generates a random JWT secret of at least 32 bytes outside production', () => {
      const first = validateEnv({}).JWT_SECRET;
      const second = validateEnv({ NODE_ENV: 'test' }).JWT_SECRET;
      expect(Buffer.byteLength(first)).toBeGreaterThanOrEqual(32);
      expect(first).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(second).not.toBe(first);
    });

    it('treats empty strings as unset', () => {
      const env = validateEnv({ NODE_ENV: '', PORT: '', DATABASE_URL: '', LOG_LEVEL: '', JWT_SECRET: '', ADMIN_USERNAME: '', ADMIN_PASSWORD: '' });
      expect(env).toMatchObject({ NODE_ENV: 'development', PORT: 3000, DATABASE_URL: 'sqlite:data/app.sqlite', LOG_LEVEL: 'info' });
      expect(env.ADMIN_USERNAME).toBeUndefined();
      expect(env.ADMIN_PASSWORD).toBeUndefined();
      expect(Buffer.byteLength(env.JWT_SECRET)).toBeGreaterThanOrEqual(32);
    });

    it('is silent by default in test, info otherwise', () => {
      expect(validateEnv({ NODE_ENV: 'test' }).LOG_LEVEL).toBe('silent');
      expect(validateEnv({ NODE_ENV: 'development' }).LOG_LEVEL).toBe('info');
      expect(validateEnv({ NODE_ENV: 'production', JWT_SECRET: SECRET_32, OAUTH_ISSUER: ISSUER }).LOG_LEVEL).toBe('info');
    });

    it('takes the given values', () => {
      const env = validateEnv({
        NODE_ENV: 'production',
        OAUTH_ISSUER: ISSUER,
        PORT: '8080',
        DATABASE_URL: 'postgres://app:pw@db:5432/app',
        JWT_SECRET: SECRET_32,
        ACCESS_TOKEN_TTL: '600',
        REFRESH_TOKEN_TTL: '3600',
        ADMIN_USERNAME: 'root_admin',
        ADMIN_PASSWORD: 'a long admin password',
        LOG_LEVEL: 'debug',
        DOCS_USERNAME: 'docs',
        DOCS_PASSWORD: 'docs-password',
        DB_POOL_SIZE: '25',
        RATE_LIMIT_PER_MINUTE: '120',
        RATE_LIMIT_USER_PER_MINUTE: '1000',
        RATE_LIMIT_ANONYMOUS_PER_MINUTE: '30',
        RATE_LIMIT_REGISTRATIONS_PER_HOUR: '5',
        RATE_LIMIT_SIGN_INS_PER_MINUTE: '6',
        RATE_LIMIT_PASSWORD_CHANGES_PER_HOUR: '3',
        SESSION_IDLE_TTL: '600',
        SESSION_ABSOLUTE_TTL: '7200',
        TRUST_PROXY: '10.0.0.0/8, loopback',
        REDIS_URL: 'redis://:secret@redis.internal:6380/3',
        REDIS_TIMEOUT_MS: '250',
        IDEMPOTENCY_TTL: '3600',
        SHUTDOWN_DELAY_MS: '15000',
        SHUTDOWN_TIMEOUT_MS: '0',
        DB_QUERY_TIMEOUT_MS: '1500',
        DB_POOLER: 'Transaction',
        DB_PREPARED_STATEMENTS: 'false',
        HEALTH_CHECK_TIMEOUT_MS: '500',
        CORS_ORIGINS: 'https://app.example.com, http://localhost:5173,https://app.example.com',
        HSTS_MAX_AGE: '63072000',
        V1_DEPRECATED_AT: '2027-01-01',
        V1_SUNSET_AT: '2027-12-31T23:59:59Z',
        API_BASE_HOST: 'api.example.com',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        EVENT_RETENTION_DAYS: '7',
        METRICS: 'TRUE',
        METRICS_TOKEN: 'scrape-token-of-32-characters-ok',
        METRICS_PORT: '9464',
        SERVER_TIMING: 'true',
        ROLE: 'worker',
        DATABASE_LISTEN_URL: 'postgres://app:pw@db-direct:5432/app',
      });
      expect(env).toEqual({
        NODE_ENV: 'production',
        ROLE: 'worker',
        OAUTH_ISSUER: ISSUER,
        PORT: 8080,
        DATABASE_URL: 'postgres://app:pw@db:5432/app',
        DATABASE_LISTEN_URL: 'postgres://app:pw@db-direct:5432/app',
        JWT_SECRET: SECRET_32,
        LIST_CURSOR_SECRET: `jwt:${SECRET_32}`,
        ACCESS_TOKEN_TTL: 600,
        REFRESH_TOKEN_TTL: 3600,
        ADMIN_USERNAME: 'root_admin',
        ADMIN_PASSWORD: 'a long admin password',
        LOG_LEVEL: 'debug',
        DOCS_USERNAME: 'docs',
        DOCS_PASSWORD: 'docs-password',
        DB_POOL_SIZE: 25,
        JWT_PRIVATE_KEY: undefined,
        JWT_PUBLIC_KEY: undefined,
        RATE_LIMIT_PER_MINUTE: 120,
        RATE_LIMIT_USER_PER_MINUTE: 1000,
        RATE_LIMIT_ANONYMOUS_PER_MINUTE: 30,
        RATE_LIMIT_REGISTRATIONS_PER_HOUR: 5,
        RATE_LIMIT_SIGN_INS_PER_MINUTE: 6,
        RATE_LIMIT_PASSWORD_CHANGES_PER_HOUR: 3,
        SESSION_IDLE_TTL: 600,
        SESSION_ABSOLUTE_TTL: 7200,
        TRUST_PROXY: '10.0.0.0/8, loopback',
        REDIS_URL: 'redis://:secret@redis.internal:6380/3',
        REDIS_TIMEOUT_MS: 250,
        IDEMPOTENCY_TTL: 3600,
        SHUTDOWN_DELAY_MS: 15_000,
        SHUTDOWN_TIMEOUT_MS: 0,
        DB_QUERY_TIMEOUT_MS: 1500,
        DB_POOLER: 'transaction',
        DB_PREPARED_STATEMENTS: false,
        HEALTH_CHECK_TIMEOUT_MS: 500,
        TLS_CERT: undefined,
        TLS_KEY: undefined,
        CORS_ORIGINS: ['https://app.example.com', 'http://localhost:5173'],
        HSTS_MAX_AGE: 63_072_000,
        V1_DEPRECATED_AT: new Date('2027-01-01T00:00:00.000Z'),
        V1_SUNSET_AT: new Date('2027-12-31T23:59:59.000Z'),
        API_BASE_HOST: 'api.example.com',
        REQUIRE_IF_MATCH: false,
        TRACING: true,
        EVENT_RETENTION_DAYS: 7,
        WEBHOOK_ALLOW_HTTP: false,
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: false,
        WEBHOOK_RETRY_SCHEDULE: [5, 300, 1800, 7200, 18_000, 36_000, 36_000, 86_400, 86_400],
        WEBHOOK_TIMEOUT_MS: 10_000,
        WEBHOOK_POLL_INTERVAL_MS: 1000,
        WEBHOOK_SECRET_GRACE_SECONDS: 86_400,
        WEBHOOK_DISABLE_AFTER_FAILURES: 5,
        WEBHOOK_CONCURRENCY: 8,
        METRICS: true,
        METRICS_TOKEN: 'scrape-token-of-32-characters-ok',
        METRICS_PORT: 9464,
        SERVER_TIMING: true,
        PASSWORD_RESET_TTL: 1800,
        EMAIL_VERIFICATION_TTL: 86_400,
        REQUIRE_VERIFIED_EMAIL: false,
        TOTP_ENCRYPTION_KEY: undefined,
        TOTP_ISSUER: 'resource-api',
        REQUIRE_ADMIN_TOTP: false,
        MAIL_RETRY_SCHEDULE: [10, 60, 300, 900, 1800, 3600, 3600],
        MAIL_POLL_INTERVAL_MS: 1000,
      });
    });

    it('ignores variables it does not know', () => {
      expect(validateEnv({ HOME: '/root', PATH: '/bin' })).not.toHaveProperty('HOME');
    });
  });

  describe('ROLE and DATABASE_LISTEN_URL', () => {
    const PG = 'postgres://app:pw@db:5432/app';

    it('defaults to all; takes api and worker (any case, trimmed) on PostgreSQL', () => {
      expect(validateEnv({}).ROLE).toBe('all');
      expect(validateEnv({ ROLE: '' }).ROLE).toBe('all');
      expect(validateEnv({ ROLE: 'all', DATABASE_URL: PG }).ROLE).toBe('all');
      expect(validateEnv({ ROLE: 'api', DATABASE_URL: PG }).ROLE).toBe('api');
      expect(validateEnv({ ROLE: ' Worker ', DATABASE_URL: PG }).ROLE).toBe('worker');
    });

    it.each(['both', 'workers', 'web', '1'])('rejects ROLE=%j with one line naming ROLE', (value) => {
      const error = configError({ ROLE: value, DATABASE_URL: PG });
      expectOneLineNaming(error, 'ROLE');
      expect(error.message).toBe(`Invalid configuration: ROLE must be all, api or worker (got ${JSON.stringify(value)})`);
    });

    it.each(['api', 'worker'])('refuses ROLE=%s on SQLite (one process runs everything there)', (value) => {
      expectOneLineNaming(configError({ ROLE: value }), 'ROLE');
      expect(() => validateEnv({ ROLE: value, DATABASE_URL: 'sqlite:/tmp/x.sqlite' })).toThrow(`ROLE=${value} needs PostgreSQL`);
    });

    it('DATABASE_LISTEN_URL defaults to DATABASE_URL on PostgreSQL, is undefined on SQLite, and may name another postgres URL', () => {
      expect(validateEnv({ DATABASE_URL: PG }).DATABASE_LISTEN_URL).toBe(PG);
      expect(validateEnv({}).DATABASE_LISTEN_URL).toBeUndefined();
      expect(validateEnv({ DATABASE_URL: PG, DATABASE_LISTEN_URL: 'postgresql://app:pw@db-direct:5432/app' }).DATABASE_LISTEN_URL).toBe(
        'postgresql://app:pw@db-direct:5432/app',
      );
    });

    it('rejects a DATABASE_LISTEN_URL that is not postgres://, or with SQLite', () => {
      expectOneLineNaming(configError({ DATABASE_URL: PG, DATABASE_LISTEN_URL: 'redis://db:6379' }), 'DATABASE_LISTEN_URL');
      expect(() => validateEnv({ DATABASE_LISTEN_URL: PG })).toThrow('DATABASE_LISTEN_URL is for PostgreSQL only');
    });
  });

  describe('EVENT_RETENTION_DAYS', () => {
    it.each(['0', '3651', '-1', '1.5', 'month'])('rejects %j with one line naming EVENT_RETENTION_DAYS', (value) => {
      expectOneLineNaming(configError({ EVENT_RETENTION_DAYS: value }), 'EVENT_RETENTION_DAYS');
    });
  });

  describe('REQUIRE_IF_MATCH', () => {
    it.each([
      ['true', true],
      ['TRUE', true],
      ['false', false],
      [' false ', false],
    ])('takes %j', (value, expected) => {
      expect(validateEnv({ REQUIRE_IF_MATCH: value }).REQUIRE_IF_MATCH).toBe(expected);
    });

    it.each(['1', 'yes', 'on', 'truthy'])('rejects %j with one line naming REQUIRE_IF_MATCH', (value) => {
      expectOneLineNaming(configError({ REQUIRE_IF_MATCH: value }), 'REQUIRE_IF_MATCH');
    });
  });

  describe('REQUIRE_VERIFIED_EMAIL', () => {
    it.each([
      ['true', true],
      ['TRUE', true],
      ['false', false],
      [' false ', false],
    ])('takes %j', (value, expected) => {
      expect(validateEnv({ REQUIRE_VERIFIED_EMAIL: value }).REQUIRE_VERIFIED_EMAIL).toBe(expected);
    });

    it.each(['1', 'yes', 'on', 'truthy'])('rejects %j with one line naming REQUIRE_VERIFIED_EMAIL', (value) => {
      expectOneLineNaming(configError({ REQUIRE_VERIFIED_EMAIL: value }), 'REQUIRE_VERIFIED_EMAIL');
    });
  });

  describe('SHUTDOWN_DELAY_MS and SHUTDOWN_TIMEOUT_MS', () => {
    it('take 0 (no lame duck; destroy at once) to 600000 each, independently', () => {
      expect(validateEnv({ SHUTDOWN_DELAY_MS: '0' })).toMatchObject({ SHUTDOWN_DELAY_MS: 0, SHUTDOWN_TIMEOUT_MS: 10_000 });
      expect(validateEnv({ SHUTDOWN_DELAY_MS: ' 600000 ', SHUTDOWN_TIMEOUT_MS: '0' })).toMatchObject({ SHUTDOWN_DELAY_MS: 600_000, SHUTDOWN_TIMEOUT_MS: 0 });
      expect(validateEnv({ SHUTDOWN_DELAY_MS: '' }).SHUTDOWN_DELAY_MS).toBe(5000);
    });
  });

  describe('METRICS, METRICS_TOKEN, METRICS_PORT, SERVER_TIMING', () => {
    it('turns metrics off with false and Server-Timing on with true; refuses other words', () => {
      expect(validateEnv({ METRICS: 'false' }).METRICS).toBe(false);
      expect(validateEnv({ SERVER_TIMING: 'true' }).SERVER_TIMING).toBe(true);
      expect(() => validateEnv({ METRICS: 'off' })).toThrow('METRICS must be true or false (got "off")');
      expect(() => validateEnv({ SERVER_TIMING: '1' })).toThrow('SERVER_TIMING must be true or false');
    });

    it.each(['short-token', 'has a space in it somewhere', `${'x'.repeat(513)}`, 'non-ascii-token-é-0123456789'])('refuses METRICS_TOKEN %p', (token) => {
      expect(() => validateEnv({ METRICS_TOKEN: token })).toThrow('METRICS_TOKEN must be 16-512 printable ASCII characters without spaces');
    });

    it('takes METRICS_PORT 0-65535 (0: a free port), never the same as PORT', () => {
      expect(validateEnv({ METRICS_PORT: '0' }).METRICS_PORT).toBe(0);
      expect(validateEnv({ METRICS_PORT: '9464', PORT: '3000' }).METRICS_PORT).toBe(9464);
      expect(validateEnv({ METRICS_PORT: '0', PORT: '0' }).METRICS_PORT).toBe(0);
      expect(() => validateEnv({ METRICS_PORT: '3000' })).toThrow('METRICS_PORT must differ from PORT (both 3000)');
      expect(() => validateEnv({ METRICS_PORT: '70000' })).toThrow('METRICS_PORT must be an integer from 0 to 65535');
    });
  });

  describe('REDIS_URL', () => {
    it.each(['redis://127.0.0.1:6379', 'redis://127.0.0.1:6379/2', 'rediss://user:pw@cache.example.com:6380/0', 'redis://redis'])('accepts %j', (value) => {
      expect(validateEnv({ REDIS_URL: value }).REDIS_URL).toBe(value);
    });

    it.each(['127.0.0.1:6379', 'http://redis:6379', 'redis://', 'redis://host:6379/db', 'redis://host/1/2'])(
      'rejects %j with one line naming REDIS_URL',
      (value) => {
        expectOneLineNaming(configError({ REDIS_URL: value }), 'REDIS_URL');
      },
    );

    it.each(['0', '49', '60001', 'fast'])('rejects REDIS_TIMEOUT_MS=%j with one line naming it', (value) => {
      expectOneLineNaming(configError({ REDIS_TIMEOUT_MS: value }), 'REDIS_TIMEOUT_MS');
    });
  });

  describe('IDEMPOTENCY_TTL', () => {
    it('takes 60 seconds to 30 days', () => {
      expect(validateEnv({ IDEMPOTENCY_TTL: '60' }).IDEMPOTENCY_TTL).toBe(60);
      expect(validateEnv({ IDEMPOTENCY_TTL: '2592000' }).IDEMPOTENCY_TTL).toBe(2_592_000);
    });

    it.each(['0', '59', '2592001', '24h', '1.5'])('rejects IDEMPOTENCY_TTL=%j with one line naming it', (value) => {
      expectOneLineNaming(configError({ IDEMPOTENCY_TTL: value }), 'IDEMPOTENCY_TTL');
    });
  });

  describe('V1_DEPRECATED_AT and V1_SUNSET_AT', () => {
    it('takes ISO 8601 dates (midnight UTC) and date-times with an offset', () => {
      const env = validateEnv({ V1_DEPRECATED_AT: '2027-01-15', V1_SUNSET_AT: '2027-09-01T12:30:00+02:00' });
      expect(env.V1_DEPRECATED_AT.toISOString()).toBe('2027-01-15T00:00:00.000Z');
      expect(env.V1_SUNSET_AT.toISOString()).toBe('2027-09-01T10:30:00.000Z');
    });

    it.each([
      ['V1_DEPRECATED_AT', '01.12.2026'],
      ['V1_DEPRECATED_AT', '2026-02-30'],
      ['V1_SUNSET_AT', 'next summer'],
      ['V1_SUNSET_AT', '2027-06-30T00:00:00'],
    ])('refuses %s=%s with one line', (variable, value) => {
      expectOneLineNaming(configError({ [variable]: value }), variable);
    });

    it('refuses a sunset that is not after the deprecation', () => {
      const error = configError({ V1_DEPRECATED_AT: '2027-07-01', V1_SUNSET_AT: '2027-06-30' });
      expectOneLineNaming(error, 'V1_SUNSET_AT');
      expect(error.message).toContain('V1_DEPRECATED_AT');
      expectOneLineNaming(configError({ V1_DEPRECATED_AT: '2027-06-30', V1_SUNSET_AT: '2027-06-30' }), 'V1_SUNSET_AT');
    });
  });

  describe('API_BASE_HOST', () => {
    it('takes a host name, lower-cased', () => {
      expect(validateEnv({ API_BASE_HOST: 'API.Example.com' }).API_BASE_HOST).toBe('api.example.com');
    });

    it.each(['https://api.example.com', 'api.example.com:8080', 'api..example.com', '-api.example.com'])('refuses %s with one line', (value) => {
      expectOneLineNaming(configError({ API_BASE_HOST: value }), 'API_BASE_HOST');
    });
  });

  describe('TRUST_PROXY', () => {
    it.each([
      ['false', false],
      ['1', 1],
      ['2', 2],
      ['loopback', 'loopback'],
      ['10.0.0.0/8,192.168.1.1', '10.0.0.0/8,192.168.1.1'],
    ])('accepts %j', (value, expected) => {
      expect(validateEnv({ TRUST_PROXY: value }).TRUST_PROXY).toEqual(expected);
    });

    it.each(['true', 'yes please!', '1; rm'])('refuses %j (trusting every proxy would let clients spoof their address)', (value) => {
      const error = configError({ TRUST_PROXY: value });
      expectOneLineNaming(error, 'TRUST_PROXY');
    });
  });

  describe('OAUTH_ISSUER', () => {
    it('is required in production (else a forged Host header would name the issuer)', () => {
      expectOneLineNaming(configError({ NODE_ENV: 'production', JWT_SECRET: SECRET_32 }), 'OAUTH_ISSUER');
      expect(validateEnv({ NODE_ENV: 'development' }).OAUTH_ISSUER).toBeUndefined();
    });

    it.each([
      ['https://api.example.com', 'https://api.example.com'],
      ['https://api.example.com/', 'https://api.example.com'],
      ['https://api.example.com:8443', 'https://api.example.com:8443'],
      ['http://127.0.0.1:3000', 'http://127.0.0.1:3000'],
      ['http://localhost:3000', 'http://localhost:3000'],
    ])('accepts %j', (value, expected) => {
      expect(validateEnv({ OAUTH_ISSUER: value }).OAUTH_ISSUER).toBe(expected);
    });

    it.each([
      'http://api.example.com',
      'https://api.example.com/v1',
      'https://api.example.com?x=1',
      'https://api.example.com#f',
      'https://u:p@api.example.com',
      'api.example.com',
    ])('refuses %j (an issuer is an https origin; RFC 8414 §2)', (value) => {
      expectOneLineNaming(configError({ OAUTH_ISSUER: value }), 'OAUTH_ISSUER');
    });
  });

  describe('PORT', () => {
    it.each([
      ['0', 0],
      ['65535', 65_535],
      [' 8080 ', 8080],
      [3001, 3001],
    ])('accepts %j', (value, port) => {
      expect(validateEnv({ PORT: value }).PORT).toBe(port);
    });

    it.each(['abc', '-1', '65536', '80.5', '0x50', '1e3', '+80', '80 81', 'NaN'])('rejects %j with one line naming PORT', (value) => {
      const error = configError({ PORT: value });
      expectOneLineNaming(error, 'PORT');
      expect(error.message).toBe(`Invalid configuration: PORT must be an integer from 0 to 65535 (got "${value.trim()}")`);
    });

    it('keeps the message on one line when the value holds a line break', () => {
      const error = configError({ PORT: '80\n81' });
      expectOneLineNaming(error, 'PORT');
    });
  });

  describe('other integers', () => {
    it.each([
      ['ACCESS_TOKEN_TTL', '0', 'ACCESS_TOKEN_TTL must be an integer from 1 to 86400'],
      ['ACCESS_TOKEN_TTL', '86401', 'ACCESS_TOKEN_TTL must be an integer from 1 to 86400'],
      ['REFRESH_TOKEN_TTL', '59', 'REFRESH_TOKEN_TTL must be an integer from 60 to 31536000'],
      ['DB_POOL_SIZE', '0', 'DB_POOL_SIZE must be an integer from 1 to 200'],
      ['DB_POOL_SIZE', 'ten', 'DB_POOL_SIZE must be an integer from 1 to 200'],
      ['SHUTDOWN_DELAY_MS', '-1', 'SHUTDOWN_DELAY_MS must be an integer from 0 to 600000'],
      ['SHUTDOWN_DELAY_MS', '600001', 'SHUTDOWN_DELAY_MS must be an integer from 0 to 600000'],
      ['SHUTDOWN_DELAY_MS', '5s', 'SHUTDOWN_DELAY_MS must be an integer from 0 to 600000'],
      ['SHUTDOWN_TIMEOUT_MS', '-1', 'SHUTDOWN_TIMEOUT_MS must be an integer from 0 to 600000'],
      ['SHUTDOWN_TIMEOUT_MS', '10s', 'SHUTDOWN_TIMEOUT_MS must be an integer from 0 to 600000'],
      ['DB_QUERY_TIMEOUT_MS', '99', 'DB_QUERY_TIMEOUT_MS must be an integer from 100 to 600000'],
      ['HEALTH_CHECK_TIMEOUT_MS', '60001', 'HEALTH_CHECK_TIMEOUT_MS must be an integer from 100 to 60000'],
      ['HSTS_MAX_AGE', '86400', 'HSTS_MAX_AGE must be an integer from 31536000 to 315360000'],
      ['RATE_LIMIT_PER_MINUTE', '0', 'RATE_LIMIT_PER_MINUTE must be an integer from 1 to 1000000'],
      ['RATE_LIMIT_USER_PER_MINUTE', '0', 'RATE_LIMIT_USER_PER_MINUTE must be an integer from 1 to 1000000'],
      ['RATE_LIMIT_USER_PER_MINUTE', '1000001', 'RATE_LIMIT_USER_PER_MINUTE must be an integer from 1 to 1000000'],
      ['RATE_LIMIT_ANONYMOUS_PER_MINUTE', '0', 'RATE_LIMIT_ANONYMOUS_PER_MINUTE must be an integer from 1 to 1000000'],
      ['RATE_LIMIT_ANONYMOUS_PER_MINUTE', '60/min', 'RATE_LIMIT_ANONYMOUS_PER_MINUTE must be an integer from 1 to 1000000'],
      ['RATE_LIMIT_REGISTRATIONS_PER_HOUR', '0', 'RATE_LIMIT_REGISTRATIONS_PER_HOUR must be an integer from 1 to 1000000'],
      ['RATE_LIMIT_REGISTRATIONS_PER_HOUR', '-5', 'RATE_LIMIT_REGISTRATIONS_PER_HOUR must be an integer from 1 to 1000000'],
      ['RATE_LIMIT_SIGN_INS_PER_MINUTE', '0', 'RATE_LIMIT_SIGN_INS_PER_MINUTE must be an integer from 1 to 1000000'],
      ['RATE_LIMIT_SIGN_INS_PER_MINUTE', '2.5', 'RATE_LIMIT_SIGN_INS_PER_MINUTE must be an integer from 1 to 1000000'],
      ['RATE_LIMIT_PASSWORD_CHANGES_PER_HOUR', '0', 'RATE_LIMIT_PASSWORD_CHANGES_PER_HOUR must be an integer from 1 to 1000000'],
      ['RATE_LIMIT_PASSWORD_CHANGES_PER_HOUR', '1000001', 'RATE_LIMIT_PASSWORD_CHANGES_PER_HOUR must be an integer from 1 to 1000000'],
    ])('rejects %s=%j', (variable, value, message) => {
      const error = configError({ [variable]: value });
      expectOneLineNaming(error, variable);
      expect(error.message).toBe(`Invalid configuration: ${message} (got "${value}")`);
    });
  });

  describe('DB_POOLER and DB_PREPARED_STATEMENTS (a connection pooler)', () => {
    it.each([
      ['none', 'none'],
      ['transaction', 'transaction'],
      [' TRANSACTION ', 'transaction'],
      ['', 'none'],
    ])('DB_POOLER=%j → %s', (value, expected) => {
      expect(validateEnv({ DB_POOLER: value }).DB_POOLER).toBe(expected);
    });

    it.each(['session', 'statement', 'pgbouncer', 'true'])('rejects DB_POOLER=%j with one line naming it', (value) => {
      const error = configError({ DB_POOLER: value });
      expectOneLineNaming(error, 'DB_POOLER');
      expect(error.message).toBe(
        `Invalid configuration: DB_POOLER must be none (PostgreSQL directly) or transaction (a transaction-mode pooler such as PgBouncer) (got "${value}")`,
      );
    });

    it.each([
      [undefined, true],
      ['true', true],
      ['FALSE', false],
    ])('DB_PREPARED_STATEMENTS=%j → %s', (value, expected) => {
      expect(validateEnv({ DB_PREPARED_STATEMENTS: value }).DB_PREPARED_STATEMENTS).toBe(expected);
    });

    it.each(['0', 'no', 'off'])('rejects DB_PREPARED_STATEMENTS=%j with one line naming it', (value) => {
      const error = configError({ DB_PREPARED_STATEMENTS: value });
      expectOneLineNaming(error, 'DB_PREPARED_STATEMENTS');
      expect(error.message).toBe(`Invalid configuration: DB_PREPARED_STATEMENTS must be true or false (got "${value}")`);
    });
  });

  describe('NODE_ENV', () => {
    it.each(['development', 'test'])('accepts %s', (value) => {
      expect(validateEnv({ NODE_ENV: value }).NODE_ENV).toBe(value);
    });

    it.each(['prod', 'Production', 'staging', 'dev'])('rejects %j with one line naming NODE_ENV', (value) => {
      const error = configError({ NODE_ENV: value });
      expectOneLineNaming(error, 'NODE_ENV');
      expect(error.message).toBe(`Invalid configuration: NODE_ENV must be development, test or production (got "${value}")`);
    });

    it('keeps the message on one line when the value holds a line break', () => {
      expectOneLineNaming(configError({ NODE_ENV: 'test\nproduction' }), 'NODE_ENV');
    });
  });

  describe('LOG_LEVEL', () => {
    it.each(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])('accepts %s', (value) => {
      expect(validateEnv({ LOG_LEVEL: value }).LOG_LEVEL).toBe(value);
    });

    it.each(['verbose', 'INFO', 'warning'])('rejects %j with one line naming LOG_LEVEL', (value) => {
      const error = configError({ LOG_LEVEL: value });
      expectOneLineNaming(error, 'LOG_LEVEL');
      expect(error.message).toBe(`Invalid configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "${value}")`);
    });

    it('keeps the message on one line when the value holds a line break', () => {
      expectOneLineNaming(configError({ LOG_LEVEL: 'info\r\ndebug' }), 'LOG_LEVEL');
    });
  });

  describe('DATABASE_URL', () => {
    it.each(['sqlite:data/app.sqlite', 'sqlite:/tmp/x.sqlite', 'sqlite::memory:', 'postgres://app@localhost:5432/app', 'postgresql://app:pw@db/app'])(
      'accepts %s unchanged',
      (url) => {
        expect(validateEnv({ DATABASE_URL: url }).DATABASE_URL).toBe(url);
      },
    );

    it.each(['mysql://app@localhost/app', 'sqlite:', 'postgres://', 'data/app.sqlite', 'http://db'])('rejects %j with one line naming DATABASE_URL', (url) => {
      const error = configError({ DATABASE_URL: url });
      expectOneLineNaming(error, 'DATABASE_URL');
      expect(error.message).toBe('Invalid configuration: DATABASE_URL must be sqlite:<path> or postgres://user@host:port/db');
    });

    it('does not echo the URL (it may hold a password)', () => {
      const error = configError({ DATABASE_URL: 'mysql://app:s3cret@db/app' });
      expect(error.message).not.toContain('s3cret');
    });
  });

  describe('JWT_PRIVATE_KEY / JWT_PUBLIC_KEY', () => {
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const privatePem = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const publicPem = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const otherPublic = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();

    it('accepts a matching RSA pair, also with \\n escapes, and then needs no JWT_SECRET in production', () => {
      const env = validateEnv({ NODE_ENV: 'production', OAUTH_ISSUER: ISSUER, JWT_PRIVATE_KEY: privatePem.replace(/\n/g, '\\n'), JWT_PUBLIC_KEY: publicPem });
      expect(env.JWT_PRIVATE_KEY).toBe(privatePem);
      expect(env.JWT_PUBLIC_KEY).toBe(publicPem);
    });

    it('needs both', () => {
      const error = configError({ JWT_PRIVATE_KEY: privatePem });
      expectOneLineNaming(error, 'JWT_PRIVATE_KEY');
      expect(error.message).toBe('Invalid configuration: JWT_PRIVATE_KEY and JWT_PUBLIC_KEY must be set together');
    });

    it('refuses a key that is not PEM, without echoing it', () => {
      const error = configError({ JWT_PRIVATE_KEY: 'not-a-key-secret', JWT_PUBLIC_KEY: publicPem });
      expect(error.message).toBe('Invalid configuration: JWT_PRIVATE_KEY is not a PEM private key');
      expect(error.message).not.toContain('not-a-key-secret');
    });

    it('refuses a public key of another pair', () => {
      const error = configError({ JWT_PRIVATE_KEY: privatePem, JWT_PUBLIC_KEY: otherPublic });
      expect(error.message).toBe('Invalid configuration: JWT_PUBLIC_KEY does not belong to JWT_PRIVATE_KEY');
    });
  });

  describe('LIST_CURSOR_SECRET (list cursors, docs/lists.md#cursor-paging)', () => {
    it('is taken as given, else derived from JWT_SECRET, else from the RS256 private key', () => {
      expect(validateEnv({ LIST_CURSOR_SECRET: 'c'.repeat(40), JWT_SECRET: SECRET_32 }).LIST_CURSOR_SECRET).toBe('c'.repeat(40));
      expect(validateEnv({ JWT_SECRET: SECRET_32 }).LIST_CURSOR_SECRET).toBe(`jwt:${SECRET_32}`);
      // two instances with the same JWT_SECRET share the cursor secret; a generated JWT_SECRET is per process
      expect(validateEnv({ JWT_SECRET: SECRET_32 }).LIST_CURSOR_SECRET).toBe(validateEnv({ JWT_SECRET: SECRET_32 }).LIST_CURSOR_SECRET);
      expect(validateEnv({}).LIST_CURSOR_SECRET).not.toBe(validateEnv({}).LIST_CURSOR_SECRET);
    });

    it('must be at least 32 bytes in production when set, without echoing it', () => {
      const error = configError({ NODE_ENV: 'production', JWT_SECRET: SECRET_32, OAUTH_ISSUER: ISSUER, LIST_CURSOR_SECRET: 'y'.repeat(31) });
      expectOneLineNaming(error, 'LIST_CURSOR_SECRET');
      expect(error.message).toBe('Invalid configuration: LIST_CURSOR_SECRET must be at least 32 bytes in production');
      expect(error.message).not.toContain('y'.repeat(31));
    });
  });

  describe('JWT_SECRET', () => {
    it('is required in production', () => {
      const error = configError({ NODE_ENV: 'production' });
      expectOneLineNaming(error, 'JWT_SECRET');
      expect(error.message).toBe('Invalid configuration: JWT_SECRET is required in production (or JWT_PRIVATE_KEY/JWT_PUBLIC_KEY for RS256)');
    });

    it('must be at least 32 bytes in production', () => {
      const error = configError({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(31) });
      expectOneLineNaming(error, 'JWT_SECRET');
      expect(error.message).toBe('Invalid configuration: JWT_SECRET must be at least 32 bytes in production');
      expect(error.message).not.toContain('x'.repeat(31));
    });

    it('accepts exactly 32 bytes in production', () => {
      expect(validateEnv({ NODE_ENV: 'production', JWT_SECRET: SECRET_32, OAUTH_ISSUER: ISSUER }).JWT_SECRET).toBe(SECRET_32);
    });

    it('counts bytes, not characters', () => {
      const sixteenTwoByteChars = 'é'.repeat(16);
      expect(validateEnv({ NODE_ENV: 'production', JWT_SECRET: sixteenTwoByteChars, OAUTH_ISSUER: ISSUER }).JWT_SECRET).toBe(sixteenTwoByteChars);
      expectOneLineNaming(configError({ NODE_ENV: 'production', JWT_SECRET: 'é'.repeat(15) + 'x' }), 'JWT_SECRET');
    });

    it('accepts a short secret outside production', () => {
      expect(validateEnv({ NODE_ENV: 'development', JWT_SECRET: 'short' }).JWT_SECRET).toBe('short');
      expect(validateEnv({ NODE_ENV: 'test', JWT_SECRET: 'short' }).JWT_SECRET).toBe('short');
    });
  });

  describe('ADMIN_USERNAME and ADMIN_PASSWORD', () => {
    it('rejects ADMIN_USERNAME without ADMIN_PASSWORD', () => {
      const error = configError({ ADMIN_USERNAME: 'root_admin' });
      expectOneLineNaming(error, 'ADMIN_PASSWORD');
      expect(error.message).toBe('Invalid configuration: ADMIN_USERNAME and ADMIN_PASSWORD must be set together');
    });

    it('rejects ADMIN_PASSWORD without ADMIN_USERNAME', () => {
      const error = configError({ ADMIN_PASSWORD: 'a long admin password' });
      expectOneLineNaming(error, 'ADMIN_USERNAME');
      expect(error.message).toBe('Invalid configuration: ADMIN_USERNAME and ADMIN_PASSWORD must be set together');
    });

    it('rejects ADMIN_USERNAME with an empty ADMIN_PASSWORD', () => {
      expect(configError({ ADMIN_USERNAME: 'root_admin', ADMIN_PASSWORD: '' }).message).toBe(
        'Invalid configuration: ADMIN_USERNAME and ADMIN_PASSWORD must be set together',
      );
    });

    it.each(['ab', 'Root', 'root-admin', 'a'.repeat(33)])('rejects ADMIN_USERNAME=%j (the username rule)', (username) => {
      const error = configError({ ADMIN_USERNAME: username, ADMIN_PASSWORD: 'a long admin password' });
      expectOneLineNaming(error, 'ADMIN_USERNAME');
      expect(error.message).toBe('Invalid configuration: ADMIN_USERNAME must be 3-32 characters of a-z, 0-9 and _');
    });

    it.each(['1234567', 'p'.repeat(129)])('rejects an ADMIN_PASSWORD outside 8-128 characters (case %#) without echoing it', (password) => {
      const error = configError({ ADMIN_USERNAME: 'root_admin', ADMIN_PASSWORD: password });
      expectOneLineNaming(error, 'ADMIN_PASSWORD');
      expect(error.message).toBe('Invalid configuration: ADMIN_PASSWORD must be 8-128 characters');
      expect(error.message).not.toContain(password);
    });

    it('accepts a valid pair', () => {
      expect(validateEnv({ ADMIN_USERNAME: 'abc', ADMIN_PASSWORD: '12345678' })).toMatchObject({ ADMIN_USERNAME: 'abc', ADMIN_PASSWORD: '12345678' });
    });
  });

  describe('DOCS_USERNAME and DOCS_PASSWORD', () => {
    it.each([{ DOCS_USERNAME: 'docs' }, { DOCS_PASSWORD: 'pw' }])('must be set together (%j)', (raw) => {
      const error = configError(raw);
      expectOneLineNaming(error, 'DOCS_PASSWORD');
      expect(error.message).toBe('Invalid configuration: DOCS_USERNAME and DOCS_PASSWORD must be set together');
    });
  });

  describe('CORS_ORIGINS', () => {
    it.each([
      ['', []],
      [' , ', []],
      ['https://app.example.com', ['https://app.example.com']],
      ['http://localhost:5173, https://a.example.org:8443', ['http://localhost:5173', 'https://a.example.org:8443']],
    ])('accepts %j', (value, expected) => {
      expect(validateEnv({ CORS_ORIGINS: value }).CORS_ORIGINS).toEqual(expected);
    });

    it.each([
      '*',
      'app.example.com',
      'https://app.example.com/',
      'https://app.example.com/path',
      'ftp://files.example.com',
      'https://App.example.com',
      'https://*.example.com',
      'null',
    ])('refuses %j with one line naming CORS_ORIGINS', (value) => {
      expectOneLineNaming(configError({ CORS_ORIGINS: `https://ok.example.com,${value}` }), 'CORS_ORIGINS');
    });
  });

  describe('order of the checks', () => {
    it("reports a variable's own rule before a rule that combines variables", () => {
      expect(configError({ ADMIN_USERNAME: 'ab' }).message).toBe('Invalid configuration: ADMIN_USERNAME must be 3-32 characters of a-z, 0-9 and _');
      expect(configError({ DATABASE_LISTEN_URL: 'redis://db:6379' }).message).toBe(
        'Invalid configuration: DATABASE_LISTEN_URL must be postgres://user@host:port/db',
      );
      expect(configError({ ROLE: 'api', PORT: 'abc' }).message).toBe('Invalid configuration: PORT must be an integer from 0 to 65535 (got "abc")');
    });
  });

  describe('TLS_CERT and TLS_KEY', () => {
    let dir: string;
    let cert: string;
    let key: string;
    let otherKey: string;

    beforeAll(() => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'resource-api-tls-'));
      cert = path.join(dir, 'cert.pem');
      key = path.join(dir, 'key.pem');
      otherKey = path.join(dir, 'other-key.pem');
      execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost'], {
        stdio: 'ignore',
      });
      writeFileSync(otherKey, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('accepts a readable certificate with its key', () => {
      expect(validateEnv({ TLS_CERT: cert, TLS_KEY: key })).toMatchObject({ TLS_CERT: cert, TLS_KEY: key });
    });

    it.each([{ TLS_CERT: 'cert.pem' }, { TLS_KEY: 'key.pem' }])('must be set together (%j)', (raw) => {
      expect(configError(raw).message).toBe('Invalid configuration: TLS_CERT and TLS_KEY must be set together (file paths of a PEM certificate and its key)');
    });

    it('names the unreadable file', () => {
      const error = configError({ TLS_CERT: path.join(dir, 'missing.pem'), TLS_KEY: key });
      expectOneLineNaming(error, 'TLS_CERT');
      expect(error.message).toContain('ENOENT');
    });

    it('refuses a key as certificate, a certificate as key, and a key of another pair', () => {
      expectOneLineNaming(configError({ TLS_CERT: key, TLS_KEY: key }), 'TLS_CERT');
      expectOneLineNaming(configError({ TLS_CERT: cert, TLS_KEY: cert }), 'TLS_KEY');
      expect(configError({ TLS_CERT: cert, TLS_KEY: otherKey }).message).toBe(
        'Invalid configuration: TLS_CERT and TLS_KEY do not belong together (or the certificate is not valid PEM)',
      );
    });
  });
});

describe('webhook settings (docs/webhooks.md)', () => {
  it('defaults: https only, no private networks, about three days of retries, 10 s timeout, 1 s poll, one day of grace, 5 failures, 8 at a time', () => {
    const env = validateEnv({});
    expect([env.WEBHOOK_ALLOW_HTTP, env.WEBHOOK_ALLOW_PRIVATE_NETWORKS]).toEqual([false, false]);
    expect(env.WEBHOOK_RETRY_SCHEDULE).toEqual([5, 300, 1800, 7200, 18_000, 36_000, 36_000, 86_400, 86_400]);
    expect([
      env.WEBHOOK_TIMEOUT_MS,
      env.WEBHOOK_POLL_INTERVAL_MS,
      env.WEBHOOK_SECRET_GRACE_SECONDS,
      env.WEBHOOK_DISABLE_AFTER_FAILURES,
      env.WEBHOOK_CONCURRENCY,
    ]).toEqual([10_000, 1000, 86_400, 5, 8]);
  });

  it('parses WEBHOOK_RETRY_SCHEDULE as comma-separated seconds, white space allowed', () => {
    expect(validateEnv({ WEBHOOK_RETRY_SCHEDULE: '1, 2,4' }).WEBHOOK_RETRY_SCHEDULE).toEqual([1, 2, 4]);
    expect(validateEnv({ WEBHOOK_RETRY_SCHEDULE: '0' }).WEBHOOK_RETRY_SCHEDULE).toEqual([0]);
  });

  it('refuses a bad schedule, timeout or flag with one line naming the variable', () => {
    for (const value of ['1,,2', '-1', '1.5', 'soon', '604801', Array(51).fill('1').join(',')]) {
      expectOneLineNaming(configError({ WEBHOOK_RETRY_SCHEDULE: value }), 'WEBHOOK_RETRY_SCHEDULE');
    }
    expectOneLineNaming(configError({ WEBHOOK_TIMEOUT_MS: '10' }), 'WEBHOOK_TIMEOUT_MS');
    expectOneLineNaming(configError({ WEBHOOK_ALLOW_HTTP: 'yes' }), 'WEBHOOK_ALLOW_HTTP');
    expectOneLineNaming(configError({ WEBHOOK_CONCURRENCY: '0' }), 'WEBHOOK_CONCURRENCY');
  });
});

describe('mail and password reset (docs/operations.md#mail)', () => {
  const PRODUCTION = { NODE_ENV: 'production', JWT_SECRET: SECRET_32, OAUTH_ISSUER: ISSUER };

  it('outside production: APP_URL defaults to http://localhost:<PORT>, MAIL_FROM to a local address, SMTP_URL stays unset (.eml files)', () => {
    const env = validateEnv({ PORT: '8081' });
    expect(env.APP_URL).toBeUndefined();
    expect(appUrlOf(env)).toBe('http://localhost:8081');
    expect(mailFromOf(env)).toBe('resource-api <no-reply@localhost>');
    expect(env.SMTP_URL).toBeUndefined();
    expect(env.PASSWORD_RESET_TTL).toBe(1800);
    expect(env.MAIL_RETRY_SCHEDULE).toEqual([10, 60, 300, 900, 1800, 3600, 3600]);
  });

  it('production without APP_URL: the mail features are off and nothing more is required', () => {
    expect(appUrlOf(validateEnv(PRODUCTION))).toBeUndefined();
  });

  it('production with REQUIRE_VERIFIED_EMAIL=true needs APP_URL (no one could verify otherwise): one line naming both', () => {
    const error = configError({ ...PRODUCTION, REQUIRE_VERIFIED_EMAIL: 'true' });
    expectOneLineNaming(error, 'REQUIRE_VERIFIED_EMAIL');
    expect(error.message).toContain('APP_URL');
    expect(validateEnv({ REQUIRE_VERIFIED_EMAIL: 'true' }).REQUIRE_VERIFIED_EMAIL).toBe(true);
  });

  it('TOTP_ENCRYPTION_KEY: 32 bytes as hex or base64, never quoted when refused; a development key outside production, none in production', () => {
    const hex = 'ab'.repeat(32);
    expect(totpKeyOf(validateEnv({ TOTP_ENCRYPTION_KEY: hex }))).toEqual(Buffer.from(hex, 'hex'));
    const base64 = Buffer.alloc(32, 7).toString('base64');
    expect(totpKeyOf(validateEnv({ TOTP_ENCRYPTION_KEY: base64 }))).toEqual(Buffer.alloc(32, 7));
    expect(totpKeyOf(validateEnv({ TOTP_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64url') }))).toEqual(Buffer.alloc(32, 7));
    const short = configError({ TOTP_ENCRYPTION_KEY: 'ab'.repeat(31) });
    expectOneLineNaming(short, 'TOTP_ENCRYPTION_KEY');
    expect(short.message).not.toContain('ab'.repeat(31));
    expect(totpKeyOf(validateEnv({}))?.length).toBe(32);
    expect(totpKeyOf(validateEnv(PRODUCTION))).toBeUndefined();
    expectOneLineNaming(configError({ ...PRODUCTION, REQUIRE_ADMIN_TOTP: 'true' }), 'REQUIRE_ADMIN_TOTP');
    expect(validateEnv({ ...PRODUCTION, REQUIRE_ADMIN_TOTP: 'true', TOTP_ENCRYPTION_KEY: hex }).REQUIRE_ADMIN_TOTP).toBe(true);
    expectOneLineNaming(configError({ TOTP_ISSUER: 'a:b' }), 'TOTP_ISSUER');
  });

  it('production with APP_URL needs SMTP_URL, then MAIL_FROM: one line naming each', () => {
    expectOneLineNaming(configError({ ...PRODUCTION, APP_URL: 'https://app.example.com' }), 'SMTP_URL');
    expectOneLineNaming(configError({ ...PRODUCTION, APP_URL: 'https://app.example.com', SMTP_URL: 'smtps://u:p@mail.example.com' }), 'MAIL_FROM');
    const env = validateEnv({
      ...PRODUCTION,
      APP_URL: 'https://app.example.com/',
      SMTP_URL: 'smtps://u:p@mail.example.com',
      MAIL_FROM: 'Example <no-reply@example.com>',
    });
    expect(appUrlOf(env)).toBe('https://app.example.com');
    expect(mailFromOf(env)).toBe('Example <no-reply@example.com>');
  });

  it('refuses a bad SMTP_URL without quoting it (it holds a password), a bad APP_URL, MAIL_FROM, PASSWORD_RESET_TTL or MAIL_RETRY_SCHEDULE', () => {
    const smtp = configError({ SMTP_URL: 'http://user:hunter2@mail.example.com' });
    expectOneLineNaming(smtp, 'SMTP_URL');
    expect(smtp.message).not.toContain('hunter2');
    expectOneLineNaming(configError({ APP_URL: 'https://app.example.com/?x=1' }), 'APP_URL');
    expectOneLineNaming(configError({ APP_URL: 'ftp://app.example.com' }), 'APP_URL');
    expectOneLineNaming(configError({ MAIL_FROM: 'not an address' }), 'MAIL_FROM');
    expectOneLineNaming(configError({ PASSWORD_RESET_TTL: '59' }), 'PASSWORD_RESET_TTL');
    expectOneLineNaming(configError({ EMAIL_VERIFICATION_TTL: '59' }), 'EMAIL_VERIFICATION_TTL');
    expectOneLineNaming(configError({ EMAIL_VERIFICATION_TTL: String(7 * 86_400 + 1) }), 'EMAIL_VERIFICATION_TTL');
    expectOneLineNaming(configError({ MAIL_RETRY_SCHEDULE: '1,x' }), 'MAIL_RETRY_SCHEDULE');
  });
});
