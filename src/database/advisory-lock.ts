import type { DataSource, EntityManager } from 'typeorm';

/**
 * The keys of the transaction-level advisory locks (PostgreSQL `pg_try_advisory_xact_lock(bigint)`)
 * the service takes, one per periodic job that must run on one instance at a time. Fixed numbers:
 * every instance must use the same ones.
 */
export const ADVISORY_LOCK_KEYS = {
  /** The event retention job (src/events/event-retention.ts). */
  eventRetention: 7_265_737_401,
  /** The idempotency-record pruning (src/idempotency/idempotency-records.ts). */
  idempotencyPruning: 7_265_737_402,
} as const;

/**
 * Runs `work` as one batch of a job that only one instance may run at a time
 * (docs/operations.md#roles-api-and-worker). On PostgreSQL: one transaction that first takes the
 * transaction-level advisory lock `key` without waiting (`pg_try_advisory_xact_lock`; released at
 * commit or rollback, so it works behind a transaction-mode pooler, unlike a session-level lock);
 * when another instance holds it, nothing runs and `{ locked: false }` is returned. On SQLite (one
 * process) `work` runs on the data source's manager, outside a transaction, as before.
 * Returns `{ locked: true, value }` with what `work` returned.
 * @throws what `work` or the database throws (the transaction is rolled back)
 */
export async function inExclusiveBatch<T>(
  dataSource: DataSource,
  key: number,
  work: (manager: EntityManager) => Promise<T>,
): Promise<{ locked: true; value: T } | { locked: false }> {
  if (dataSource.options.type !== 'postgres') return { locked: true, value: await work(dataSource.manager) };
  return dataSource.transaction(async (manager) => {
    const [row] = (await manager.query('SELECT pg_try_advisory_xact_lock($1) AS locked', [key])) as { locked: boolean }[];
    if (!row?.locked) return { locked: false } as const;
    return { locked: true, value: await work(manager) } as const;
  });
}
