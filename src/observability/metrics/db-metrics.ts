import { performance } from 'node:perf_hooks';
import type { Histogram } from 'prom-client';
import type { DataSource } from 'typeorm';
import { poolClient } from '../../database/pg-client.js';
import { gauge, histogram } from './registry.js';
import { addDbTime } from './request-timing.js';

/** Statement kinds labelled by name (`operation`); any other statement is `OTHER`. */
const OPERATIONS = ['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'WITH', 'BEGIN', 'START', 'COMMIT', 'ROLLBACK', 'SAVEPOINT', 'RELEASE', 'EXPLAIN'] as const;
const LEADING_WORD = /^\s*([A-Za-z]+)/;
const INSTRUMENTED = Symbol.for('resource-api.metrics.instrumented');

/** What the pool gauges read at each scrape: pg's Pool counters, or SQLite's one connection. */
interface PoolView {
  max: number;
  total: number;
  idle: number;
  waiting: number;
}

let currentPool: (() => PoolView | undefined) | undefined;
let record: ((sql: unknown, ms: number) => void) | undefined;

/** The statement kind of `sql` for the `operation` label: its first keyword when one of {@link OPERATIONS}, else `OTHER`. */
export function operationOf(sql: unknown): string {
  if (typeof sql !== 'string') return 'OTHER';
  const word = LEADING_WORD.exec(sql)?.[1].toUpperCase();
  return word !== undefined && (OPERATIONS as readonly string[]).includes(word) ? word : 'OTHER';
}

/**
 * Measures the database of `dataSource` for metrics (`metrics`) and Server-Timing (`serverTiming`):
 *
 * - Statement duration, `db_client_operation_duration_seconds{operation}` and the request's `db`
 *   time of Server-Timing: on PostgreSQL around the pool client's `query` (the round trip of one
 *   statement, without the wait for a pool connection, which the pending gauge shows); on SQLite
 *   around TypeORM's query runner `query` (better-sqlite3 runs the statement synchronously
 *   inside). Every statement TypeORM runs passes there (repositories, query builders,
 *   transactions, migrations). Installed once per process (the patched prototypes are shared).
 * - Pool gauges, read at each scrape (nothing on the hot path): `db_client_connection_max`,
 *   `db_client_connection_count{state="idle"|"used"}` and
 *   `db_client_connection_pending_requests` — pg-pool's `options.max`, `totalCount`, `idleCount`
 *   and `waitingCount`. SQLite has no pool: one connection, always open, and a statement runs
 *   synchronously, so no scrape ever sees it in use — reported as max 1, idle 1, used 0, pending 0.
 *
 * Call after the data source is initialised. Returns the function that detaches the gauges from
 * this data source (on shutdown).
 */
export function instrumentDatabase(dataSource: DataSource, options: { metrics: boolean; serverTiming: boolean }): () => void {
  if (!options.metrics && !options.serverTiming) return () => undefined;
  if (options.metrics) {
    const duration = histogram(
      'db_client_operation_duration_seconds',
      'Duration of database statements in seconds, by statement kind (SELECT, INSERT, …).',
      ['operation'],
      [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    );
    const byOperation = new Map<string, Histogram.Internal<string>>();
    const observe = (sql: unknown, ms: number) => {
      const operation = operationOf(sql);
      let child = byOperation.get(operation);
      if (child === undefined) byOperation.set(operation, (child = duration.labels(operation)));
      child.observe(ms / 1000);
    };
    record = options.serverTiming
      ? (sql, ms) => {
          observe(sql, ms);
          addDbTime(ms);
        }
      : observe;
    registerPoolGauges();
  } else {
    record = (_sql, ms) => addDbTime(ms);
  }
  const postgres = dataSource.options.type === 'postgres';
  patch(postgres ? poolClient().prototype : Object.getPrototypeOf(dataSource.createQueryRunner()), postgres);
  const view = postgres ? () => pgPool(dataSource) : () => (dataSource.isInitialized ? { max: 1, total: 1, idle: 1, waiting: 0 } : undefined);
  currentPool = view;
  return () => {
    if (currentPool === view) currentPool = undefined;
  };
}

/** pg-pool's counters of TypeORM's PostgreSQL driver (`driver.master`), while it is connected. */
function pgPool(dataSource: DataSource): PoolView | undefined {
  const pool = (dataSource.driver as unknown as { master?: { totalCount: number; idleCount: number; waitingCount: number; options: { max: number } } }).master;
  if (!dataSource.isInitialized || !pool) return undefined;
  return { max: pool.options.max, total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
}

/**
 * Wraps `proto.query` once: times each call that returns a promise (pg's promise form and
 * TypeORM's runner; pg's callback and stream forms pass through untimed) and hands the duration
 * to the current {@link record}.
 */
function patch(proto: { query: (...args: unknown[]) => unknown }, promiseOnly: boolean): void {
  const marked = proto as unknown as Record<symbol, boolean>;
  if (marked[INSTRUMENTED]) return;
  marked[INSTRUMENTED] = true;
  const original = proto.query;
  proto.query = function timedQuery(this: unknown, sql: unknown, values?: unknown, third?: unknown): unknown {
    const start = performance.now();
    const result = original.call(this, sql, values, third);
    if (promiseOnly && (typeof (result as Promise<unknown> | undefined)?.then !== 'function' || typeof values === 'function' || typeof third === 'function'))
      return result;
    const done = () => record?.(sql, performance.now() - start);
    return (result as Promise<unknown>).then(
      (value) => {
        done();
        return value;
      },
      (error: unknown) => {
        done();
        throw error;
      },
    );
  };
}

let gaugesRegistered = false;

/** The pool gauges, reading {@link currentPool} at each scrape (no value while no database is attached). */
function registerPoolGauges(): void {
  if (gaugesRegistered) return;
  gaugesRegistered = true;
  gauge('db_client_connection_max', 'Maximum database connections of the pool (DB_POOL_SIZE on PostgreSQL; 1 on SQLite).', [], function () {
    const pool = currentPool?.();
    if (pool) this.set(pool.max);
    else this.reset();
  });
  gauge('db_client_connection_count', 'Open database connections by state: idle, or used by a statement or transaction.', ['state'], function () {
    const pool = currentPool?.();
    this.reset();
    if (!pool) return;
    this.labels('idle').set(pool.idle);
    this.labels('used').set(pool.total - pool.idle);
  });
  gauge('db_client_connection_pending_requests', 'Requests for a database connection waiting for the pool.', [], function () {
    const pool = currentPool?.();
    if (pool) this.set(pool.waiting);
    else this.reset();
  });
}
