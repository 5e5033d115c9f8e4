import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { buildDataSourceOptions, schemaOf } from '../src/database/data-source.js';
import { POSTGRES_ONLY_INDEXES } from '../src/database/postgres-only-indexes.js';
import { RESOURCES } from '../src/resources.js';

const SCHEMA = schemaOf(RESOURCES);
const MIGRATIONS = SCHEMA.migrations;

/**
 * Entities and migrations agree, and migrations are frozen history (docs/extending.md
 * "Migrations"). On a database migrated from empty:
 * - TypeORM's schema builder — what `typeorm migration:generate` runs — has nothing to do; a
 *   failure lists the statements it would emit: the entity metadata no longer describes what the
 *   migrations create (an index's name or columns, a column's type, length, default or
 *   nullability, a foreign key, a unique constraint);
 * - every index has the name, the columns in the same order, the uniqueness and the partiality its
 *   entity declares — the schema builder compares an index's columns as a set, and the order is
 *   what makes a composite list index serve a sort;
 * and the migration files import nothing but TypeORM, so a change elsewhere cannot change what an
 * applied migration does.
 *
 * Runs on the database of the e2e run: SQLite in a fresh file of its own; PostgreSQL (when
 * DATABASE_URL=postgres://…) in a fresh schema of that database, made the connection's only
 * `search_path` entry so that migrations and schema builder see it as the default schema, as a
 * deployment sees `public`; the schema is dropped afterwards.
 */
const DATABASE_URL = process.env.DATABASE_URL ?? '';
const onPostgres = /^postgres(ql)?:\/\//.test(DATABASE_URL);
const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/database/migrations');

/** An index as compared: `table(column, …)` with ` UNIQUE` / ` WHERE …` when so; `(not synchronized)` for `synchronize: false`. */
type IndexDescriptions = Record<string, string>;

const describeIndex = (table: string, columns: string[], unique: boolean, partial: boolean) =>
  `${table}(${columns.join(', ')})${unique ? ' UNIQUE' : ''}${partial ? ' WHERE …' : ''}`;

describe(`migrations on a freshly migrated ${onPostgres ? 'PostgreSQL' : 'SQLite'} database`, () => {
  const suffix = `${process.pid}_${randomBytes(4).toString('hex')}`;
  const schema = `migration_drift_${suffix}`;
  const sqliteFile = path.join(os.tmpdir(), `resource-api-migration-drift-${suffix}.sqlite`);
  let dataSource: DataSource;

  /** Runs one statement on the e2e PostgreSQL database outside TypeORM (creating and dropping the schema). */
  async function onServer(sql: string): Promise<void> {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  }

  /**
   * The indexes of the migrated database, by name (not those behind a primary key or a unique
   * constraint, which the schema builder checks as constraints), with their columns in index order.
   */
  async function databaseIndexes(): Promise<Array<{ name: string; table: string; columns: string[]; unique: boolean; partial: boolean }>> {
    if (onPostgres) {
      const rows: Array<{ name: string; table: string; columns: Array<string | null>; unique: boolean; partial: boolean }> = await dataSource.query(`
        SELECT i.relname AS name, t.relname AS "table", x.indisunique AS "unique", x.indpred IS NOT NULL AS partial,
               array_agg(a.attname::text ORDER BY k.ord) AS columns
          FROM pg_index x
          JOIN pg_class i ON i.oid = x.indexrelid
          JOIN pg_class t ON t.oid = x.indrelid
          JOIN pg_namespace n ON n.oid = t.relnamespace
          CROSS JOIN LATERAL unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
          LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
         WHERE n.nspname = current_schema() AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)
         GROUP BY x.indexrelid, i.relname, t.relname, x.indisunique, x.indpred IS NOT NULL`);
      // an expression column has no attribute name
      return rows.map((row) => ({ ...row, columns: row.columns.map((column) => column ?? '(expression)') }));
    }
    const indexes: Array<{ name: string; table: string; sql: string }> = await dataSource.query(
      `SELECT name, tbl_name AS "table", sql FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'`,
    );
    return Promise.all(
      indexes.map(async ({ name, table, sql }) => {
        const columns: Array<{ name: string | null }> = await dataSource.query(`SELECT name FROM pragma_index_info(?) ORDER BY seqno`, [name]);
        return {
          name,
          table,
          columns: columns.map((column) => column.name ?? '(expression)'),
          unique: /^CREATE UNIQUE/i.test(sql),
          partial: /\sWHERE\s/i.test(sql),
        };
      }),
    );
  }

  beforeAll(async () => {
    let options: DataSourceOptions;
    if (onPostgres) {
      // pg_trgm in the database's default schema, as a deployment has it: the migration then finds it there
      // (created in this test's schema, it would go with the schema's DROP … CASCADE)
      await onServer('CREATE EXTENSION IF NOT EXISTS pg_trgm');
      await onServer(`CREATE SCHEMA "${schema}"`);
      const base = buildDataSourceOptions(DATABASE_URL, SCHEMA, 2) as DataSourceOptions & { type: 'postgres' };
      options = { ...base, extra: { ...base.extra, options: `-c search_path=${schema}` } };
    } else {
      options = buildDataSourceOptions(`sqlite:${sqliteFile}`, SCHEMA);
    }
    // migrationsRun is on, as in the application: initialize applies every migration
    dataSource = new DataSource(options);
    await dataSource.initialize();
  });

  afterAll(async () => {
    if (dataSource?.isInitialized) await dataSource.destroy();
    if (onPostgres) await onServer(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    else for (const end of ['', '-wal', '-shm']) rmSync(sqliteFile + end, { force: true });
  });

  it('applied every migration of the folder, in order', async () => {
    const applied: Array<{ name: string }> = await dataSource.query(`SELECT name FROM migrations ORDER BY id`);
    expect(applied.map((row) => row.name)).toEqual(MIGRATIONS.map((migration) => migration.name));
    // a file in the folder that data-source.ts does not list would never run
    const files = readdirSync(MIGRATIONS_DIR).filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts'));
    expect(files.map((file) => file.split('-')[0])).toEqual(MIGRATIONS.map((migration) => migration.name.slice(-13)));
  });

  it('leaves nothing for the schema builder to do (migration:generate would emit nothing)', async () => {
    const pending = await dataSource.driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((query) => query.query)).toEqual([]);
  });

  it('has every index the entities declare, with its columns in the declared order, and no other', async () => {
    const declared: IndexDescriptions = {};
    const notSynchronized = new Set<string>();
    for (const metadata of dataSource.entityMetadatas) {
      for (const index of metadata.indices) {
        if (!index.name) throw new Error(`an index of ${metadata.tableName} has no name: name it as its migration does`);
        if (index.synchronize === false) {
          notSynchronized.add(index.name);
          // a PostgreSQL-only index (a collation or an operator class SQLite lacks) is absent on SQLite
          if (!onPostgres && POSTGRES_ONLY_INDEXES.has(index.name)) continue;
          declared[index.name] = `${metadata.tableName} (not synchronized)`;
        } else {
          declared[index.name] = describeIndex(
            metadata.tableName,
            index.columns.map((column) => column.databaseName),
            index.isUnique,
            Boolean(index.where),
          );
        }
      }
    }
    const found: IndexDescriptions = {};
    // the entities' tables (the search tables beside them — FTS5's, PostgreSQL's `<table>_search` — are no entity's)
    const entityTables = new Set(dataSource.entityMetadatas.map((metadata) => metadata.tableName));
    for (const { name, table, columns, unique, partial } of (await databaseIndexes()).filter((index) => entityTables.has(index.table))) {
      found[name] = notSynchronized.has(name) ? `${table} (not synchronized)` : describeIndex(table, columns, unique, partial);
    }
    expect(found).toEqual(declared);
  });

  it('are frozen: a migration imports nothing but TypeORM', () => {
    const files = readdirSync(MIGRATIONS_DIR).filter((file) => file.endsWith('.ts'));
    const imports = files.flatMap((file) =>
      [...readFileSync(path.join(MIGRATIONS_DIR, file), 'utf8').matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+'([^']+)'/gm)].map(
        (match) => `${file}: ${match[1]}`,
      ),
    );
    expect(imports.filter((line) => !line.endsWith(': typeorm'))).toEqual([]);
    expect(imports.length).toBeGreaterThan(0);
  });
});
