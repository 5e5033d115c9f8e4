import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { entitiesOf, type EntityClass, type MigrationClass, migrationsOf, type ResourceDeclaration } from '../common/resources/define-resource.js';
import { InitialSchema1763700000000 } from './migrations/1763700000000-initial-schema.js';
import { ArticlesCommentsTagsOrders1763800000000 } from './migrations/1763800000000-articles-comments-tags-orders.js';
import { ApiKeysSessions1763900000000 } from './migrations/1763900000000-api-keys-sessions.js';
import { OAuth1764000000000 } from './migrations/1764000000000-oauth.js';
import { SessionsToSharedStore1764100000000 } from './migrations/1764100000000-sessions-to-shared-store.js';
import { ListIndexes1764200000000 } from './migrations/1764200000000-list-indexes.js';
import { ResourceVersions1764300000000 } from './migrations/1764300000000-resource-versions.js';
import { SyncIndexes1764420000000 } from './migrations/1764420000000-sync-indexes.js';
import { IdempotencyKeys1764600000000 } from './migrations/1764600000000-idempotency-keys.js';
import { FilterOperatorIndexes1764650000000 } from './migrations/1764650000000-filter-operator-indexes.js';
import { MailPasswordResets1764700000000 } from './migrations/1764700000000-mail-password-resets.js';
import { FullTextSearch1764710000000 } from './migrations/1764710000000-full-text-search.js';
import { EmailVerification1764800000000 } from './migrations/1764800000000-email-verification.js';
import { Logins1764900000000 } from './migrations/1764900000000-logins.js';
import { SearchTables1764950000000 } from './migrations/1764950000000-search-tables.js';
import { Totp1765000000000 } from './migrations/1765000000000-totp.js';
import { IdempotencyRecord } from '../idempotency/idempotency-record.entity.js';
import { MailMessage } from '../mail/mail-message.entity.js';
import { poolClient, transactionSettings, type PoolClientOptions } from './pg-client.js';
import { installSqliteConnectionGate } from './sqlite-transactions.js';

// better-sqlite3 loaded with `require`, not `import`: tracing patches it through require hooks
// (src/observability/tracing/sqlite-instrumentation.ts), which an ES import of it would bypass
const Database = createRequire(import.meta.url)('better-sqlite3') as typeof import('better-sqlite3');

/**
 * The migrations that are the database's own: those that shaped several resources at once (before
 * declarations carried theirs; the indexes of the filter operators; the mail outbox with the
 * password-reset tokens and the users' `password_changed_at`; the full-text search; the e-mail
 * verification tokens and the users' `email_verified_at`; the logins; the search tables; the TOTP
 * secrets and recovery codes), and the idempotency records' of the common kernel. A resource's
 * migrations are in its declaration (`migrations`).
 */
export const SHARED_MIGRATIONS = [
  InitialSchema1763700000000,
  ArticlesCommentsTagsOrders1763800000000,
  ApiKeysSessions1763900000000,
  OAuth1764000000000,
  SessionsToSharedStore1764100000000,
  ListIndexes1764200000000,
  ResourceVersions1764300000000,
  SyncIndexes1764420000000,
  IdempotencyKeys1764600000000,
  FilterOperatorIndexes1764650000000,
  MailPasswordResets1764700000000,
  FullTextSearch1764710000000,
  EmailVerification1764800000000,
  Logins1764900000000,
  SearchTables1764950000000,
  Totp1765000000000,
];

/** What a DataSource maps and migrates: entities and migrations (in the order they run). */
export interface DatabaseSchema {
  readonly entities: readonly EntityClass[];
  readonly migrations: readonly MigrationClass[];
}

/**
 * The schema of `resources` (the declarations of src/resources.ts, or a test's): their entities,
 * the idempotency records of the common kernel and the mail outbox (docs/operations.md#mail);
 * their migrations and {@link SHARED_MIGRATIONS}, in timestamp order.
 */
export function schemaOf(resources: readonly ResourceDeclaration[]): DatabaseSchema {
  return { entities: [...entitiesOf(resources), IdempotencyRecord, MailMessage], migrations: migrationsOf(resources, SHARED_MIGRATIONS) };
}

/**
 * How the service reaches PostgreSQL (DB_POOLER, DB_PREPARED_STATEMENTS; README "Operating" ›
 * "Behind a connection pooler", docs/operations.md#behind-a-connection-pooler).
 */
export interface PostgresConnectionOptions {
  /**
   * `none` (default): a direct connection; the settings go as start-up parameters (free: no extra
   * statement). `transaction`: through a pooler that hands a server connection to a client per
   * transaction (PgBouncer, RDS Proxy, Supavisor), which refuses or drops start-up parameters: the
   * settings go with `SET LOCAL` at the start of each transaction instead.
   */
  pooler?: 'none' | 'transaction';
  /** `false`: no named prepared statements, for poolers without protocol-level support for them. Default true. */
  preparedStatements?: boolean;
}

/**
 * TypeORM options for a `DATABASE_URL` (README "Configuration") and the `schema` of the
 * application's declarations ({@link schemaOf}): `postgres://…` → PostgreSQL with a pool of
 * `poolSize` connections; `sqlite:<path>` → a better-sqlite3 file (its folder is created) in WAL
 * mode. Migrations run on initialisation; `synchronize` is never on.
 *
 * `timeoutMs` (DB_QUERY_TIMEOUT_MS) bounds every database operation so that a down or slow
 * database turns into a 503 instead of a hanging request (see database-errors.ts):
 * - PostgreSQL: connecting and waiting for a pool slot (`connectionTimeoutMillis`), each statement
 *   in the client (`query_timeout`, `timeoutMs` + 1 s: the bound that always holds, also for a dead
 *   network or a pooler that keeps the statement waiting) and on the server (`statement_timeout`
 *   → error 57014; one second earlier than the client's, so the server's cancel normally wins);
 *   TCP keep-alive finds dead peers. Connections are named `resource-api` (`application_name`).
 *   JIT compilation is off for these short OLTP statements (compiling costs more than they run).
 *   With `connection.pooler` `none`, `statement_timeout` and `jit=off` are start-up parameters of
 *   each connection; with `transaction` they are set by `SET LOCAL` in the round trip of each
 *   `START TRANSACTION` (a statement outside a transaction then has the role's settings, see
 *   docs/operations.md#behind-a-connection-pooler). Statements with parameters run as named
 *   prepared statements ({@link poolClient}: parsed and planned once per connection) unless
 *   `connection.preparedStatements` is false.
 * - SQLite: how long a write waits for the file lock (`busy_timeout` → SQLITE_BUSY); `connection` does not apply.
 */
export function buildDataSourceOptions(
  databaseUrl: string,
  schema: DatabaseSchema,
  poolSize = 10,
  timeoutMs = 5000,
  connection: PostgresConnectionOptions = {},
): DataSourceOptions {
  const entities = [...schema.entities];
  const migrations = [...schema.migrations];
  const common = { entities, migrations, migrationsRun: true, synchronize: false, logging: false } as const;
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    const pooled = connection.pooler === 'transaction';
    const client: PoolClientOptions = {
      preparedStatements: connection.preparedStatements !== false,
      transactionSettings: pooled ? transactionSettings(timeoutMs) : undefined,
    };
    return {
      ...common,
      type: 'postgres',
      url: databaseUrl,
      poolSize,
      applicationName: 'resource-api',
      extra: {
        max: poolSize,
        connectionTimeoutMillis: timeoutMs,
        query_timeout: timeoutMs + 1000,
        keepAlive: true,
        Client: poolClient(),
        ...client,
        // start-up parameters: a transaction-mode pooler refuses them (or drops them unseen)
        ...(pooled ? {} : { statement_timeout: timeoutMs, options: '-c jit=off' }),
      },
    };
  }
  const file = databaseUrl.replace(/^sqlite:/, '');
  if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  return {
    ...common,
    type: 'better-sqlite3',
    driver: Database,
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
