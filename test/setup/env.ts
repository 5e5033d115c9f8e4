// Runs in every e2e test file before anything is imported: the configuration of the test app.
process.env.NODE_ENV = 'test';
process.env.LOG_LEVEL ??= 'silent';
process.env.JWT_SECRET ??= 'e2e-test-secret-that-is-at-least-32-bytes-long';
// an app that listens drains at once when closed, without the lame-duck period of a real shutdown
process.env.SHUTDOWN_DELAY_MS ??= '0';
// every caller is rate limited (docs/limits.md#rates); the suite makes thousands of requests per
// user and address, so these limits are out of reach (API keys keep the default 60 a minute, which
// test/api-keys.e2e-spec.ts relies on) — test/rate-limits.e2e-spec.ts sets small ones
for (const variable of [
  'RATE_LIMIT_USER_PER_MINUTE',
  'RATE_LIMIT_ANONYMOUS_PER_MINUTE',
  'RATE_LIMIT_REGISTRATIONS_PER_HOUR',
  'RATE_LIMIT_SIGN_INS_PER_MINUTE',
  'RATE_LIMIT_PASSWORD_CHANGES_PER_HOUR',
]) {
  process.env[variable] ??= '1000000';
}
