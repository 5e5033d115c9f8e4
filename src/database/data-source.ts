import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { RESOURCE_ENTITIES } from '../resources.js';
import { InitialSchema1763700000000 } from './migrations/1763700000000-initial-schema.js';
import { ArticlesCommentsTagsOrders1763800000000 } from './migrations/1763800000000-articles-comments-tags-orders.js';
import { ApiKeysSessions1763900000000 } from './migrations/1763900000000-api-keys-sessions.js';
import { OAuth1764000000000 } from './migrations/1764000000000-oauth.js';
import { SessionsToSharedStore1764100000000 } from './migrations/1764100000000-sessions-to-shared-store.js';
import { ListIndexes1764200000000 } from './migrations/1764200000000-list-indexes.js';
import { ResourceVersions1764300000000 } from './migrations/1764300000000-resource-versions.js';
import { SyncIndexes1764420000000 } from './migrations/1764420000000-sync-indexes.js';
import { Events1764500000000 } from './migrations/1764500000000-events.js';
import { Webhooks1764510000000 } from './migrations/1764510000000-webhooks.js';
import { EventTraceContext1764520000000 } from './migrations/1764520000000-event-trace-context.js';
import { IdempotencyKeys1764600000000 } from './migrations/1764600000000-idempotency-keys.js';
import { IdempotencyRecord } from '../common/idempotency/idempotency-record.entity.js';
import { preparingClient } from './pg-client.js';
import { loadSqliteDriver } from './sqlite-driver.js';
import { installSqliteConnectionGate } from './sqlite-transactions.js';

/** Every entity of the service: those of the declarations in src/resources.ts (a resource declares its own), and the idempotency records of the common kernel. */
export const ENTITIES = [...RESOURCE_ENTITIES, IdempotencyRecord];

/** Every migration, in order; a new resource adds its migration here. */
export const MIGRATIONS = [InitialSchema1763700000000, ArticlesCommentsTagsOrders1763800000000, ApiKeysSessions1763900000000, OAuth1764000000000, SessionsToSharedStore1764100000000, ListIndexes1764200000000, ResourceVersions1764300000000, SyncIndexes1764420000000, Events1764500000000, Webhooks1764510000000, EventTraceContext1764520000000, IdempotencyKeys1764600000000];

/**
 * TypeORM options for a `DATABASE_URL` (SPEC §10): `postgres://…` → PostgreSQL with a pool of
 * `poolSize` connections; `sqlite:<path>` → a better-sqlite3 file (its folder is created) in WAL
 * mode. Migrations run on initialisation; `synchronize` is never on.
 *
 * `timeoutMs` (DB_QUERY_TIMEOUT_MS) bounds every database operation so that a down or slow
 * database turns into a 503 instead of a hanging request (see database-errors.ts):
 * - PostgreSQL: connecting and waiting for a pool slot (`connectionTimeoutMillis`), each statement
 *   on the server (`statement_timeout` → error 57014) and, for a dead network, in the client
 *   (`query_timeout`, one second later so the server's cancel normally wins); TCP keep-alive
 *   finds dead peers. Connections are named `resource-api` (`application_name`). Statements with
 *   parameters run as named prepared statements ({@link preparingClient}: parsed and planned once
 *   per connection); JIT compilation is off for these short OLTP statements (`-c jit=off`: compiling
 *   costs more than they run).
 * - SQLite: how long a write waits for the file lock (`busy_timeout` → SQLITE_BUSY).
 */
export function buildDataSourceOptions(databaseUrl: string, poolSize = 10, timeoutMs = 5000): DataSourceOptions {
  const common = { entities: ENTITIES, migrations: MIGRATIONS, migrationsRun: true, synchronize: false, logging: false } as const;
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    return {
      ...common,
      type: 'postgres',
      url: databaseUrl,
      poolSize,
      applicationName: 'resource-api',
      extra: {
        max: poolSize,
        connectionTimeoutMillis: timeoutMs,
        statement_timeout: timeoutMs,
        query_timeout: timeoutMs + 1000,
        keepAlive: true,
        Client: preparingClient(),
        options: '-c jit=off',
      },
    };
  }
  const file = databaseUrl.replace(/^sqlite:/, '');
  if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  return {
    ...common,
    type: 'better-sqlite3',
    driver: loadSqliteDriver(),
    database: file,
    enableWAL: true,
    // better-sqlite3's busy timeout (ms); openDataSource also bounds the wait for the connection with it
    timeout: Math.trunc(timeoutMs),
    prepareDatabase: (db: { pragma: (sql: string) => unknown }) => {
      db.pragma(`busy_timeout = ${Math.trunc(timeoutMs)}`);
      db.pragma('synchronous = NORMAL');
    },
  };
}

/**
 * Creates and initialises (migrations applied) the data source for `options`, then, on SQLite,
 * installs the connection gate that gives each transaction the one connection to itself until it
 * ends (docs/writes.md#transactions-on-sqlite; a wait longer than the options' `timeout`, i.e.
 * DB_QUERY_TIMEOUT_MS, fails as SQLITE_BUSY → 503). Every data source of the service is opened here: the application's,
 * the import command's and the tests'.
 * @throws what TypeORM's initialisation throws (unreachable database, failed migration)
 */
export async function openDataSource(options: DataSourceOptions): Promise<DataSource> {
  const dataSource = await new DataSource(options).initialize();
  installSqliteConnectionGate(dataSource, options.type === 'better-sqlite3' ? (options.timeout ?? 5000) : 0);
  return dataSource;
}
