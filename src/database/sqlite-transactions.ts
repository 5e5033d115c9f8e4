import type { DataSource, QueryRunner } from 'typeorm';

/** What of TypeORM's SQLite query runner {@link syncSqliteTransactions} reads and resets. */
type SqliteQueryRunner = Omit<QueryRunner, 'broadcaster' | 'isTransactionActive'> & {
  transactionDepth: number;
  isTransactionActive: boolean;
  broadcaster: { broadcast(event: 'BeforeTransactionRollback' | 'AfterTransactionRollback'): Promise<unknown> };
};

/** The better-sqlite3 connection's view of the transaction: false once SQLite ended it, whoever did. */
interface SqliteConnection {
  readonly inTransaction: boolean;
}

/**
 * Keeps TypeORM's idea of the open transaction in step with SQLite's on a better-sqlite3 data source
 * (anything else is left alone), so that a storage fault ends with the failed write rolled back and
 * the next request served normally — the storage-fault rule of README.md#faults.
 *
 * SQLite rolls a transaction back by itself when a statement in it fails with SQLITE_FULL,
 * SQLITE_IOERR, SQLITE_NOMEM (or SQLITE_BUSY in some cases); TypeORM's `transaction()` then sends
 * `ROLLBACK`, which fails with "no transaction is active", swallows that error and leaves its one
 * shared query runner marked as inside a transaction. Every later `transaction()` then opened a
 * SAVEPOINT instead of a transaction, and the first rollback to it left a transaction open on the
 * connection for good: later writes answered 201 and were never committed. Here the runner's
 * rollback first asks the connection: when SQLite holds no transaction any more, there is nothing
 * to roll back, and the runner is reset to "no transaction" (depth 0) instead of sending `ROLLBACK`
 * — announcing a rollback of every level it unwinds to the transaction subscribers, as a
 * `ROLLBACK` would, so that they (the event outbox: its pending events and transaction level) see
 * the same.
 *
 * Call it once, after `initialize()`. Returns `dataSource`.
 */
export function syncSqliteTransactions(dataSource: DataSource): DataSource {
  if (dataSource.options.type !== 'better-sqlite3') return dataSource;
  // better-sqlite3: one connection, one query runner shared by every request (TypeORM's driver keeps it)
  const runner = dataSource.driver.createQueryRunner('master') as unknown as SqliteQueryRunner;
  const rollback = runner.rollbackTransaction.bind(runner);
  runner.rollbackTransaction = async () => {
    const connection = (await runner.connect()) as SqliteConnection;
    if (runner.isTransactionActive && !connection.inTransaction) {
      // SQLite already rolled back every level (savepoints end with their transaction)
      while (runner.transactionDepth > 0) {
        await runner.broadcaster.broadcast('BeforeTransactionRollback');
        if (runner.transactionDepth === 1) runner.isTransactionActive = false;
        runner.transactionDepth -= 1;
        await runner.broadcaster.broadcast('AfterTransactionRollback');
      }
      runner.isTransactionActive = false;
      return;
    }
    await rollback();
  };
  return dataSource;
}
