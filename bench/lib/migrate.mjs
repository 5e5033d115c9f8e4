/**
 * Child process: applies the project's own migrations (dist/src/database/data-source.js, the
 * options the service itself uses) to the database named by DATABASE_URL, then exits 0.
 * Run as a separate process because entity column types are chosen from DATABASE_URL at import
 * time (src/config/database-kind.ts). Exits 1 with one line on stderr on failure.
 *
 * bench/ab.mjs copies this file into builds of other commits, so it works with both kinds of build,
 * told apart by what dist/src/database/data-source.js exports (feature detection, not commit ids):
 * - with the resource registry: `schemaOf` is exported and `buildDataSourceOptions(url, schema,
 *   poolSize, timeoutMs)` takes the schema of the declarations, `schemaOf(RESOURCES)` with
 *   `RESOURCES` from dist/src/resources.js (what src/cli/import.ts passes);
 * - before it: no `schemaOf`; `buildDataSourceOptions(url, poolSize, timeoutMs)` takes the entities
 *   and migrations from the module's own `ENTITIES` and `MIGRATIONS`.
 * Anything else (neither shape) fails with a message naming what is missing.
 */
import 'reflect-metadata';
import { DataSource } from 'typeorm';

const url = process.env.DATABASE_URL;
const POOL_SIZE = 1;
const TIMEOUT_MS = 600_000;

/** The build's DataSource options for `url`, whichever kind of build this is (see the header). */
async function dataSourceOptions() {
  const dataSource = await import('../../dist/src/database/data-source.js');
  if (typeof dataSource.buildDataSourceOptions !== 'function') throw new Error('dist/src/database/data-source.js exports no buildDataSourceOptions');
  if (typeof dataSource.schemaOf === 'function') {
    const { RESOURCES } = await import('../../dist/src/resources.js');
    if (!Array.isArray(RESOURCES)) throw new Error('dist/src/database/data-source.js exports schemaOf but dist/src/resources.js exports no RESOURCES list');
    return dataSource.buildDataSourceOptions(url, dataSource.schemaOf(RESOURCES), POOL_SIZE, TIMEOUT_MS);
  }
  if (!Array.isArray(dataSource.MIGRATIONS)) throw new Error('dist/src/database/data-source.js exports neither schemaOf nor MIGRATIONS');
  return dataSource.buildDataSourceOptions(url, POOL_SIZE, TIMEOUT_MS);
}

try {
  const dataSource = new DataSource({ ...(await dataSourceOptions()), migrationsRun: false });
  await dataSource.initialize();
  const applied = await dataSource.runMigrations({ transaction: 'each' });
  await dataSource.destroy();
  process.stdout.write(`${applied.length} migrations applied\n`);
} catch (error) {
  process.stderr.write(`migration failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
