import type { DataSource } from 'typeorm';
import { validateEnv } from '../../src/config/env.validation.js';
import { buildDataSourceOptions, openDataSource, schemaOf } from '../../src/database/data-source.js';
import { RESOURCES } from '../../src/resources.js';

/**
 * A plain TypeORM DataSource on the e2e database (DATABASE_URL from global-setup.ts: the run's
 * SQLite file, or PostgreSQL), with the production options (buildDataSourceOptions: entities,
 * migrations applied on initialisation; DB_POOLER and DB_PREPARED_STATEMENTS as the application's) and every table emptied. For tests below HTTP — the
 * service tier (test/services) — and for createTestApp's `before-init` truncation. Destroy it after use.
 */
export async function openTestDataSource(poolSize = 2): Promise<DataSource> {
  const env = validateEnv(process.env);
  const dataSource = await openDataSource(
    buildDataSourceOptions(env.DATABASE_URL, schemaOf(RESOURCES), poolSize, undefined, {
      pooler: env.DB_POOLER,
      preparedStatements: env.DB_PREPARED_STATEMENTS,
    }),
  );
  try {
    await truncateDataSource(dataSource);
  } catch (error) {
    await dataSource.destroy();
    throw error;
  }
  return dataSource;
}

/** Empties every table and resets id sequences (SQLite and PostgreSQL). */
export async function truncateDataSource(dataSource: DataSource): Promise<void> {
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
