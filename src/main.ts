import 'reflect-metadata';
import module from 'node:module';
import type { AddressInfo } from 'node:net';
import v8 from 'node:v8';

// Node keeps the compiled code of every module on disk (os.tmpdir()/node-compile-cache), so later
// start-ups skip most of the parsing. Enabled before the application's modules are imported below.
module.enableCompileCache();

// Under load V8 lets the old generation grow to about four times the live heap (~45 MiB) before a
// major collection, so the peak RSS was ~245–300 MiB of garbage waiting. Growing it by at most
// 2× per collection (`--heap-growing-percent=100`) took the peak to ~195 MiB at the same CPU per
// request in A/B runs (README, "Performance"); it is no cap, a large response still gets the heap it
// needs. Set here because NODE_OPTIONS does not accept this V8 flag, and before the application's
// modules load; V8 reads it at every collection. A `--heap-growing-percent` given to node wins.
if (!process.execArgv.some((arg) => arg.startsWith('--heap-growing-percent'))) v8.setFlagsFromString('--heap-growing-percent=100');

/**
 * Entry point: validates configuration, starts OpenTelemetry tracing when the OTEL_* variables
 * configure an exporter (before the application loads), creates the application (HTTPS with TLS_CERT/TLS_KEY),
 * applies migrations (on database initialisation) and listens on PORT (`0`: a free port, logged);
 * then, for ROLE `all` and `worker`, starts the webhook worker and its LISTEN wake-up, and the mail worker
 * (docs/operations.md#roles-api-and-worker; the retention and pruning timers start with the application).
 * A configuration or start-up error is printed as one line and exits with status 1.
 *
 * SIGTERM and SIGINT close the application once (Nest's shutdown hooks, the only signal
 * handlers): readiness turns 503 while requests are served as usual for SHUTDOWN_DELAY_MS, then
 * the HTTP server drains (GracefulShutdown, at most SHUTDOWN_TIMEOUT_MS), the database closes,
 * the spans still buffered are exported, and the process exits 0 (1 if closing failed).
 */
async function main(): Promise<void> {
  try {
    // Validate first: ConfigModule.forRoot validates inside a promise Nest awaits later, which
    // would surface a bad value as an unhandled rejection with a stack trace.
    const { validateEnv } = await import('./config/env.validation.js');
    const env = validateEnv(process.env);
    const { runsBackgroundWork } = await import('./config/process-role.js');
    // before the application's modules load: the instrumentations patch them as they are loaded.
    // Off (no OTEL_* exporter configured): no OpenTelemetry module is loaded at all.
    if (env.TRACING) await (await import('./observability/tracing/start-tracing.js')).startTracing(process.env);
    const { createApp } = await import('./app.setup.js');
    const app = await createApp(env);
    app.enableShutdownHooks(['SIGTERM', 'SIGINT'], { useProcessExit: true });
    await app.listen(env.PORT);
    const { port } = app.getHttpServer().address() as AddressInfo;
    const scheme = env.TLS_CERT ? 'https' : 'http';
    // webhook deliveries start once the server listens (and resume the pending ones of earlier runs),
    // with the LISTEN connection that wakes them (PostgreSQL); not in an API-only process
    if (runsBackgroundWork(env.ROLE)) {
      app.get((await import('./webhooks/webhook-worker.js')).WebhookWorker).start();
      app.get((await import('./webhooks/webhook-wake.js')).WebhookWakeListener).start();
      app.get((await import('./mail/mail-worker.js')).MailWorker).start();
    }
    const serves = env.ROLE === 'worker' ? 'ROLE=worker: /health/live, /health/ready and /metrics only' : `ROLE=${env.ROLE}; docs at /docs`;
    app.get((await import('nestjs-pino')).Logger).log(`resource-api listening on ${scheme}://localhost:${port} (${serves})`);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`resource-api failed to start: ${message.split('\n')[0]}\n`);
    process.exit(1);
  }
}

void main();
