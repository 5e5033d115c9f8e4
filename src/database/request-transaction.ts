import type { DataSource, QueryRunner } from 'typeorm';
import { requestContext, type TransactionOwner, type TransactionScope, withRequestContext } from '../context/request-context.js';

/** Data sources whose `createQueryRunner` routes into the current request transaction. */
const routed = new WeakSet<DataSource>();

/** The query runner methods that need the transaction begun first (the others only read state). */
const BEGINNING = new Set<PropertyKey>(['query', 'startTransaction', 'commitTransaction', 'rollbackTransaction', 'stream']);

/**
 * One transaction around everything a request does on a data source (docs/writes.md#retrying-safely-idempotency-key):
 * while {@link run}'s callback runs, every statement it issues on `dataSource` — through
 * repositories, query builders, `dataSource.query` — goes to this transaction's one query runner,
 * and the services' own `transaction()` calls become savepoints inside it. Nothing is committed
 * until {@link commit}: a keyed request writes its idempotency record in the same transaction as
 * its effect, and the two commit together or not at all.
 *
 * The transaction begins lazily, at the first statement; on SQLite it then holds the connection
 * until it ends (its owner is active from the start, so transactions begun in it nest in it). Work
 * started in the callback's async context after {@link commit} or {@link rollback} no longer joins it.
 */
export class RequestTransaction implements TransactionScope {
  private runner?: QueryRunner;
  private proxy?: QueryRunner;
  private begun?: Promise<void>;
  private open = true;
  /** The SQLite connection gate's owner of this transaction (see sqlite-transactions.ts). */
  private readonly owner: TransactionOwner = { active: true };

  constructor(private readonly dataSource: DataSource) {
    routeQueryRunners(dataSource);
  }

  /** Runs `fn` inside this transaction (see the class comment; the request context's `transaction` and `sqliteOwner`); returns what `fn` returns. */
  run<T>(fn: () => T): T {
    return withRequestContext({ transaction: this, sqliteOwner: this.owner }, fn);
  }

  /**
   * Commits (a no-op when nothing ran). The transaction is closed from here on, whatever happens.
   * @throws what COMMIT throws (then nothing of it was written, or — a connection lost during the
   *   COMMIT — the database alone knows: the idempotency record tells a retry)
   */
  async commit(): Promise<void> {
    this.open = false;
    if (!this.begun || !this.runner) return;
    const runner = this.runner;
    try {
      await this.begun;
      await this.run(() => runner.commitTransaction());
    } catch (error) {
      await this.run(() => runner.rollbackTransaction()).catch(() => undefined);
      throw error;
    } finally {
      await runner.release().catch(() => undefined);
    }
  }

  /** Rolls back (a no-op when nothing ran); never throws. The transaction is closed from here on. */
  async rollback(): Promise<void> {
    this.open = false;
    if (!this.begun || !this.runner) return;
    const runner = this.runner;
    try {
      await this.begun;
      if (runner.isTransactionActive) await this.run(() => runner.rollbackTransaction());
    } catch {
      // the transaction is gone either way (a lost connection ends it on the server)
    } finally {
      await runner.release().catch(() => undefined);
    }
  }

  /** The query runner statements of this transaction go to (a view whose `release` is a no-op). */
  queryRunner(create: () => QueryRunner): QueryRunner {
    if (this.proxy) return this.proxy;
    const runner = (this.runner = create());
    const begin = () => (this.begun ??= this.run(() => runner.startTransaction()));
    this.proxy = new Proxy(runner, {
      get: (target, property, receiver) => {
        if (property === 'release') return () => Promise.resolve();
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== 'function' || !BEGINNING.has(property)) return value;
        return async (...args: unknown[]) => {
          await begin();
          return (value as (...a: unknown[]) => unknown).apply(receiver, args);
        };
      },
    });
    return this.proxy;
  }

  /** Whether statements on `dataSource` from the current context belong to this transaction. */
  joins(dataSource: DataSource): boolean {
    return this.open && dataSource === this.dataSource;
  }
}

/** Makes `dataSource.createQueryRunner()` hand out the current request transaction's runner, if there is one. */
function routeQueryRunners(dataSource: DataSource): void {
  if (routed.has(dataSource)) return;
  routed.add(dataSource);
  const create = dataSource.createQueryRunner.bind(dataSource);
  dataSource.createQueryRunner = (mode) => {
    const transaction = requestContext()?.transaction;
    return transaction?.joins(dataSource) ? transaction.queryRunner(() => create(mode)) : create(mode);
  };
}
