import { createRequire } from 'node:module';
import type pg from 'pg';

const require = createRequire(import.meta.url);

/** At most this many distinct statement texts get a name; later ones run unnamed, as before. */
export const MAX_NAMED_STATEMENTS = 500;

/** Statement text → its name (`ra<n>`), shared by every connection of the process. */
const names = new Map<string, string>();

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
 * The `pg` client of the pool (pg's `Client` pool option): a query with parameters runs as a
 * named prepared statement, so PostgreSQL parses and plans it once per connection instead of on
 * every call (TypeORM passes a text and an array of values, which pg sends as an unnamed
 * statement). An `EXPLAIN` is not named (its texts are one-off). A query without parameters keeps the simple protocol (one round trip:
 * `START TRANSACTION`, `COMMIT`, migrations). Results, errors and timeouts are pg's, unchanged.
 * Returns the class, defined on first call: `pg` (some 30 modules) is loaded only when the service
 * runs on PostgreSQL, not at every start-up on SQLite.
 */
export function preparingClient(): typeof pg.Client {
  if (preparing) return preparing;
  const { Client } = require('pg') as typeof pg;
  preparing = class PreparingClient extends Client {
    override query(config: unknown, values?: unknown, callback?: unknown): never {
      // EXPLAIN texts (the planner's estimate of a list's count) are one-off: never named
      if (typeof config === 'string' && Array.isArray(values) && values.length > 0 && !/^\s*EXPLAIN\b/i.test(config)) {
        const name = statementName(config);
        if (name !== undefined) return (super.query as (...args: unknown[]) => never)({ name, text: config, values }, callback);
      }
      return (super.query as (...args: unknown[]) => never)(config, values, callback);
    }
  } as typeof pg.Client;
  return preparing;
}

let preparing: typeof pg.Client | undefined;
