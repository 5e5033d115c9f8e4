import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { AppModule } from '../../src/app.module.js';
import { configureApp } from '../../src/app.setup.js';

/**
 * Boots the real AppModule exactly as main.ts does (same pipeline, same configuration function)
 * on the e2e database, after emptying every table. Returns the initialised application.
 */
export async function createTestApp(): Promise<NestExpressApplication> {
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>({ bodyParser: false });
  await configureApp(app);
  await app.init();
  await truncateAll(app);
  return app;
}

/** Empties every table and resets id sequences (SQLite and PostgreSQL). */
export async function truncateAll(app: INestApplication): Promise<void> {
  const dataSource = app.get(DataSource);
  const tables = dataSource.entityMetadatas.map((m) => m.tableName);
  if (dataSource.options.type === 'postgres') {
    await dataSource.query(`TRUNCATE ${tables.map((t) => `"${t}"`).join(', ')} RESTART IDENTITY CASCADE`);
  } else {
    await dataSource.query('PRAGMA foreign_keys = OFF');
    for (const table of tables) await dataSource.query(`DELETE FROM "${table}"`);
    await dataSource.query('DELETE FROM sqlite_sequence');
    await dataSource.query('PRAGMA foreign_keys = ON');
  }
}
