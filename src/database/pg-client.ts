import { createRequire } from 'node:module';
import type pg from 'pg';

const require = createRequire(import.meta.url);

/** At most this many distinct statement texts get a name; later ones run unnamed, as before. */
export const MAX_NAMED_STATEMENTS = 500;

/** Statement text → its name (`ra<n>`), shared by every connection of the process. */
const names = new Map<string, string>();

/**
 * What the pool client does besides pg's defaults, set per pool through TypeORM's `extra` (pg-pool
 * hands its options to each client it creates); see docs/operations.md#behind-a-connection-pooler.
 */
export interface PoolClientOptions {
  /** `false`: statements with parameters run unnamed (pg's default), for poolers without protocol-level prepared statements. Default true. */
  preparedStatements?: boolean;
  /**
   * Statements sent in the same round trip as each `START TRANSACTION` (e.g. {@link transactionSettings}):
   * settings that must hold per transaction because the connection is not the client's own (a
   * transaction-mode pooler). Undefined: none.
   */
  transactionSettings?: string;
}

/**
 * The name of the prepared statement for `text`: `ra1`, `ra2`, … given in order of first use,
 * the same on every connection, or undefined once {@link MAX_NAMED_STATEMENTS} texts have names
 * (the service builds a bounded set of statements; the bound keeps an unexpected variety of
 * texts from growing the server's and the client's statement caches without end).
 */
export function statementName(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_NAMED_STATEMENTS) {
    name = `ra${names.size + 1}`;
    names.set(text, name);
  }
  return name;
}

/**
 * The per-transaction form of the connection settings that a direct connection sends as start-up
 * parameters: `SET LOCAL statement_timeout = <timeoutMs>; SET LOCAL jit = off`. Takes the
 * timeout in milliseconds (a whole number is sent); returns the SQL text. `SET LOCAL` ends with
 * its transaction, so nothing of it stays on a pooled server connection
 * (docs/operations.md#behind-a-connection-pooler).
 */
export function transactionSettings(timeoutMs: number): string {
  return `SET LOCAL statement_timeout = ${Math.trunc(timeoutMs)}; SET LOCAL jit = off`;
}

/** The text TypeORM's PostgreSQL query runner sends to begin a transaction. */
const START_TRANSACTION = 'START TRANSACTION';

/**
 * The `pg` client of the pool (pg's `Client` pool option), configured by the pool's
 * {@link PoolClientOptions}:
 * - prepared statements (default): a query with parameters runs as a named prepared statement, so
 *   PostgreSQL parses and plans it once per connection instead of on every call (TypeORM passes a
 *   text and an array of values, which pg sends as an unnamed statement). An `EXPLAIN` is not
 *   named (its texts are one-off). A query without parameters keeps the simple protocol (one round
 *   trip: `START TRANSACTION`, `COMMIT`, migrations). With `preparedStatements: false` every
 *   statement runs as pg sends it: unnamed, which any pooler passes through.
 * - `transactionSettings`: TypeORM's `START TRANSACTION` is sent as
 *   `START TRANSACTION; <settings>`, one simple-protocol round trip as before.
 * Results, errors and timeouts are pg's, unchanged. Returns the class, defined on first call (one
 * class for every pool, so the metrics' patch of its prototype sees every statement): `pg` (some
 * 30 modules) is loaded only when the service runs on PostgreSQL, not at every start-up on SQLite.
 */
export function poolClient(): typeof pg.Client {
  if (client) return client;
  const { Client } = require('pg') as typeof pg;
  client = class PoolClient extends Client {
    private readonly naming: boolean;
    private readonly begin: string | undefined;

    constructor(config?: string | (pg.ClientConfig & PoolClientOptions)) {
      super(config);
      const options: PoolClientOptions = typeof config === 'object' ? config : {};
      this.naming = options.preparedStatements !== false;
      this.begin = options.transactionSettings ? `${START_TRANSACTION}; ${options.transactionSettings}` : undefined;
    }

    override query(config: unknown, values?: unknown, callback?: unknown): never {
      const query = super.query as (...args: unknown[]) => never;
      if (this.begin !== undefined && config === START_TRANSACTION) return query.call(this, this.begin, values, callback);
      // EXPLAIN texts (the planner's estimate of a list's count) are one-off: never named
      if (this.naming && typeof config === 'string' && Array.isArray(values) && values.length > 0 && !/^\s*EXPLAIN\b/i.test(config)) {
        const name = statementName(config);
        if (name !== undefined) return query.call(this, { name, text: config, values }, callback);
      }
      return query.call(this, config, values, callback);
    }
  } as unknown as typeof pg.Client;
  return client;
}

let client: typeof pg.Client | undefined;
