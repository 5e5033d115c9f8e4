import { DataSource, EntityManager, type QueryRunner } from 'typeorm';
import { requestContext, type TransactionOwner, withRequestContext } from '../context/request-context.js';

/** The SQLite transaction owner of the code running now (the request context's `sqliteOwner`; undefined outside every transaction). */
function currentOwner(): TransactionOwner | undefined {
  return requestContext()?.sqliteOwner;
}

/** Runs `fn` as a new transaction owner (see {@link TransactionOwner}: the request context's `sqliteOwner`); returns what `fn` returns. */
export function runAsOwner<T>(owner: TransactionOwner, fn: () => T): T {
  return withRequestContext({ sqliteOwner: owner }, fn);
}

/** One request for the connection, waiting in line. */
interface Waiter {
  owner: TransactionOwner | undefined;
  grant: () => void;
}

/**
 * SQLite's single connection, shared by every request, handed to one transaction at a time
 * (docs/writes.md#transactions-on-sqlite). TypeORM runs every SQLite statement on one connection, so
 * without this a second request's transaction would become a savepoint inside the first, and a
 * plain statement of another request would run inside an open transaction — and one request's
 * rollback (or failed COMMIT) would undo writes other requests had already been told were done.
 *
 * The rule: a top-level transaction takes the connection at `BEGIN` and keeps it until its
 * `COMMIT` or `ROLLBACK` ended; meanwhile statements and transactions of every other async
 * context wait in line (first come, first served), while those of the holder (its owner token,
 * carried by the request context) run — nested transactions of the holder stay savepoints. A plain
 * statement takes the connection for itself only while it runs. A wait longer than `timeoutMs`
 * (DB_QUERY_TIMEOUT_MS) fails with an error coded `SQLITE_BUSY` — a 503 with `Retry-After`, as a
 * file lock held past `busy_timeout` is.
 */
export class SqliteConnectionGate {
  private holder: TransactionOwner | undefined;
  /** True while the holder is a statement or a transaction of no known owner (e.g. TypeORM's own). */
  private held = false;
  private readonly line: Waiter[] = [];

  constructor(private readonly timeoutMs: number) {}

  /** Whether `owner` may use the connection now without waiting. */
  private mayRun(owner: TransactionOwner | undefined): boolean {
    if (!this.held) return this.line.length === 0;
    return owner !== undefined && owner === this.holder;
  }

  /**
   * Takes the connection for `owner` (resolves at once when free or already its own).
   * @throws Error coded `SQLITE_BUSY` after `timeoutMs` in line
   */
  acquire(owner: TransactionOwner | undefined): Promise<void> | undefined {
    if (this.mayRun(owner)) {
      if (!this.held) {
        this.held = true;
        this.holder = owner;
      }
      return undefined;
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        owner,
        grant: () => {
          clearTimeout(timer);
          this.held = true;
          this.holder = owner;
          resolve();
        },
      };
      const timer = setTimeout(() => {
        const index = this.line.indexOf(waiter);
        if (index >= 0) this.line.splice(index, 1);
        reject(Object.assign(new Error(`SQLITE_BUSY: waited more than ${this.timeoutMs} ms for the database connection`), { code: 'SQLITE_BUSY' }));
      }, this.timeoutMs);
      this.line.push(waiter);
    });
  }

  /** Gives the connection up if `owner` holds it (a no-op otherwise: it was given up already). */
  releaseBy(owner: TransactionOwner | undefined): void {
    if (this.holds(owner)) this.release();
  }

  /** Gives the connection up (its holder is no longer active) and hands it to the next in line. */
  release(): void {
    if (this.holder) this.holder.active = false;
    this.held = false;
    this.holder = undefined;
    this.line.shift()?.grant();
  }

  /** Whether `owner` holds the connection now. */
  holds(owner: TransactionOwner | undefined): boolean {
    return this.held && owner !== undefined && this.holder === owner;
  }
}

/** The gate of each SQLite data source that has one. */
const gates = new WeakMap<DataSource, SqliteConnectionGate>();

/** A query runner's transaction state as TypeORM keeps it (the fields it reads and writes). */
interface RunnerState {
  isTransactionActive: boolean;
  transactionDepth: number;
}

/** better-sqlite3's connection (`inTransaction`: whether SQLite has an open transaction). */
interface SqliteConnection {
  inTransaction: boolean;
}

type QueryRunnerMethod = (...args: unknown[]) => Promise<unknown>;

/**
 * Installs a {@link SqliteConnectionGate} on an initialised better-sqlite3 `dataSource` (a no-op on
 * any other database): its one query runner's `query`, `startTransaction`, `commitTransaction` and
 * `rollbackTransaction` go through the gate, and `EntityManager.transaction` gives each top-level
 * transaction an owner token. When SQLite rolled a transaction back by itself (a statement or the
 * `COMMIT` failing with SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM…), the rollback sends nothing and
 * resets TypeORM's state to "no transaction" (announcing each unwound level to the transaction
 * subscribers), so the next transaction starts with `BEGIN`, not a stray savepoint inside a
 * transaction left open for good — where later writes would answer 201 and never be committed.
 * `timeoutMs`: the longest wait in line, in milliseconds.
 */
export function installSqliteConnectionGate(dataSource: DataSource, timeoutMs: number): void {
  if (dataSource.options.type !== 'better-sqlite3' || gates.has(dataSource)) return;
  const gate = new SqliteConnectionGate(timeoutMs);
  gates.set(dataSource, gate);
  patchEntityManager();
  const runner = dataSource.createQueryRunner() as QueryRunner & RunnerState & Record<string, unknown>;
  const proto = Object.getPrototypeOf(runner) as Record<string, QueryRunnerMethod>;
  const connection = () => (dataSource.driver as unknown as { databaseConnection: SqliteConnection }).databaseConnection;
  /** Resets TypeORM's state to "no transaction" when SQLite has none open (after it rolled back by itself). */
  const resync = () => {
    if (!connection().inTransaction) {
      runner.isTransactionActive = false;
      runner.transactionDepth = 0;
    }
  };

  runner.query = async function query(this: QueryRunner, ...args: unknown[]) {
    const owner = currentOwner();
    if (gate.holds(owner)) return proto.query.apply(this, args);
    await gate.acquire(owner);
    try {
      return await proto.query.apply(this, args);
    } finally {
      gate.release();
    }
  } as QueryRunner['query'];

  runner.startTransaction = async function startTransaction(this: QueryRunner, ...args: unknown[]) {
    const owner = currentOwner();
    // without an owner its own statements could not be told from other requests'
    if (!owner) throw new Error('a transaction on SQLite needs an owner: start it with EntityManager.transaction or inside runAsOwner()');
    if (gate.holds(owner) && runner.transactionDepth > 0) return proto.startTransaction.apply(this, args) as Promise<void>;
    await gate.acquire(owner);
    owner.active = true;
    try {
      resync();
      await proto.startTransaction.apply(this, args);
    } catch (error) {
      gate.release();
      throw error;
    }
  } as QueryRunner['startTransaction'];

  // a failed COMMIT leaves the transaction to the caller's ROLLBACK (TypeORM's transaction() and
  // the request transaction always send one), which then ends it — or finds it ended by SQLite
  runner.commitTransaction = async function commitTransaction(this: QueryRunner, ...args: unknown[]) {
    const owner = currentOwner();
    await proto.commitTransaction.apply(this, args);
    if (runner.transactionDepth === 0) gate.releaseBy(owner);
  } as QueryRunner['commitTransaction'];

  runner.rollbackTransaction = async function rollbackTransaction(this: QueryRunner, ...args: unknown[]) {
    const owner = currentOwner();
    if (runner.isTransactionActive && !connection().inTransaction) {
      // SQLite rolled the whole transaction back by itself (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM…),
      // savepoints included: nothing to send; every level is unwound and announced to the
      // transaction subscribers as a ROLLBACK would be (the event outbox drops its pending events)
      const broadcaster = (runner as unknown as { broadcaster: { broadcast(event: string): Promise<unknown> } }).broadcaster;
      while (runner.transactionDepth > 0) {
        await broadcaster.broadcast('BeforeTransactionRollback');
        if (runner.transactionDepth === 1) runner.isTransactionActive = false;
        runner.transactionDepth -= 1;
        await broadcaster.broadcast('AfterTransactionRollback');
      }
      resync();
      gate.releaseBy(owner);
      return;
    }
    try {
      await proto.rollbackTransaction.apply(this, args);
    } catch (error) {
      if (!connection().inTransaction) {
        resync();
        gate.releaseBy(owner);
      }
      throw error;
    }
    if (runner.transactionDepth === 0) gate.releaseBy(owner);
  } as QueryRunner['rollbackTransaction'];
}

let patched = false;

/** The EntityManager methods that may start a transaction: `transaction` and the persist operations (`save`, `remove`…, which wrap their statements in one). */
const TRANSACTIONAL_METHODS = ['transaction', 'save', 'remove', 'softRemove', 'recover'] as const;

/**
 * Makes the EntityManager methods that start transactions ({@link TRANSACTIONAL_METHODS}) run as a
 * new {@link TransactionOwner} on a data source with a gate, unless they are nested in a
 * transaction of an owner that holds the connection (then TypeORM makes a savepoint, or no
 * transaction, of them, as before). Installed once, for every data source; data sources without a
 * gate are not affected.
 */
function patchEntityManager(): void {
  if (patched) return;
  patched = true;
  const prototype = EntityManager.prototype as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const name of TRANSACTIONAL_METHODS) {
    const original = prototype[name];
    prototype[name] = function owned(this: EntityManager, ...args: unknown[]) {
      if (!gates.has(this.connection) || currentOwner()?.active) return original.apply(this, args);
      return runAsOwner({ active: false }, () => original.apply(this, args));
    };
  }
}
