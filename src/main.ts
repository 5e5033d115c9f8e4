import 'reflect-metadata';

/**
 * Entry point: validates configuration, creates the application, applies migrations (on
 * database initialisation) and listens on PORT. A configuration or start-up error is printed as
 * one line and exits with status 1.
 */
async function main(): Promise<void> {
  try {
    // Validate first: ConfigModule.forRoot validates inside a promise Nest awaits later, which
    // would surface a bad value as an unhandled rejection with a stack trace.
    const { validateEnv } = await import('./config/env.validation.js');
    validateEnv(process.env);
    const { createApp } = await import('./app.setup.js');
    const { ConfigService } = await import('@nestjs/config');
    const app = await createApp();
    const port = app.get(ConfigService).get<number>('PORT') ?? 3000;
    await app.listen(port);
    app.get((await import('nestjs-pino')).Logger).log(`resource-api listening on http://localhost:${port} (docs at /docs)`);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`resource-api failed to start: ${message.split('\n')[0]}\n`);
    process.exit(1);
  }
}

void main();
