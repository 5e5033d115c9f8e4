// Runs in every e2e test file before anything is imported: the configuration of the test app.
process.env.NODE_ENV = 'test';
process.env.LOG_LEVEL ??= 'silent';
process.env.JWT_SECRET ??= 'e2e-test-secret-that-is-at-least-32-bytes-long';
// an app that listens drains at once when closed, without the lame-duck period of a real shutdown
process.env.SHUTDOWN_DELAY_MS ??= '0';
