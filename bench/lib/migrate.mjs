/**
 * Child process: applies the project's own migrations (dist/src/database/data-source.js, the
 * options the service itself uses) to the database named by DATABASE_URL, then exits 0.
 * Run as a separate process because entity column types are chosen from DATABASE_URL at import
 * time (src/config/database-kind.ts). Exits 1 with one line on stderr on failure.
 */
import 'reflect-metadata';
import { DataSource } from 'typeorm';

const url = process.env.DATABASE_URL;
try {
  const { buildDataSourceOptions, schemaOf } = await import('../../dist/src/database/data-source.js');
  const { RESOURCES } = await import('../../dist/src/resources.js');
  const dataSource = new DataSource({ ...buildDataSourceOptions(url, schemaOf(RESOURCES), 1, 600_000), migrationsRun: false });
  await dataSource.initialize();
  const applied = await dataSource.runMigrations({ transaction: 'each' });
  await dataSource.destroy();
  process.stdout.write(`${applied.length} migrations applied\n`);
} catch (error) {
  process.stderr.write(`migration failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
