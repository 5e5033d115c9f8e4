import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test, type TestingModuleBuilder } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { AppModule } from '../../src/app.module.js';
import type { ResourceRegistry } from '../../src/common/resources/resource-registry.js';
import { configureApp } from '../../src/app.setup.js';
import { SharedStore } from '../../src/store/shared-store.js';
import { openTestDataSource, truncateDataSource } from './database.js';
import { installResponseRecorder } from './openapi-validation.js';

export interface TestAppOptions {
  /**
   * When the tables are emptied. `after-init` (default): right after the application started.
   * `before-init`: through a plain DataSource (which applies pending migrations first) before the
   * application starts, so rows written at start-up — the ADMIN_USERNAME admin — are kept.
   */
  truncate?: 'after-init' | 'before-init';
  /** Replaces providers before compiling (Nest's `overrideProvider`), e.g. the logger's destination. */
  override?: (builder: TestingModuleBuilder) => TestingModuleBuilder;
  /** The resources served: the service's by default; a test's with `REGISTRY.with(THINGS)` (test/extending.e2e-spec.ts). */
  registry?: ResourceRegistry;
}

/**
 * Boots the real AppModule exactly as main.ts does (same pipeline, same configuration function)
 * on the e2e database, with every table and the shared state store emptied (see {@link TestAppOptions}). Every response it
 * sends is validated against its OpenAPI document (see openapi-validation.ts). Returns the
 * initialised application.
 */
export async function createTestApp(options: TestAppOptions = {}): Promise<NestExpressApplication> {
  if (options.truncate === 'before-init') {
    await (await openTestDataSource(1)).destroy();
  }
  const builder = Test.createTestingModule({ imports: [await AppModule.forRoot(options.registry)] });
  const moduleRef = await (options.override ? options.override(builder) : builder).compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>({ bodyParser: false });
  // first middleware: every response is checked against the served OpenAPI document (openapi-validation.ts)
  const recorder = installResponseRecorder(app);
  await configureApp(app);
  await app.init();
  await recorder.attach();
  if (options.truncate !== 'before-init') await truncateAll(app);
  // the shared state (sessions, deny list, counters) too: with REDIS_URL it outlives the app
  await app.get(SharedStore).clear();
  return app;
}

/** Empties every table and resets id sequences (SQLite and PostgreSQL). */
export async function truncateAll(app: INestApplication): Promise<void> {
  await truncateDataSource(app.get(DataSource));
}
