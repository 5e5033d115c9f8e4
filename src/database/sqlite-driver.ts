import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);

/**
 * The better-sqlite3 build for this runtime, chosen by the Node-API version it offers:
 * - Node-API ≥ 10 (Node 22.14+, 24): better-sqlite3 13 (`better-sqlite3-napi10`, a Node-API addon
 *   shipped prebuilt). better-sqlite3 12 is not safe there: on Node 24.19+ its statement destructor
 *   aborts the process (`Assertion failed: (env) != nullptr`) when a statement is garbage-collected.
 * - Node-API 9 (Node 20.19+, early 22): better-sqlite3 12 (`better-sqlite3`, built from source at
 *   install time), since 13's prebuilt addon needs Node-API 10 and crashes on Node 20.
 * The two have the same API. Returns the `Database` constructor; TypeORM gets it as its `driver`.
 */
export function loadSqliteDriver(): typeof BetterSqlite3 {
  return Number(process.versions.napi) >= 10 ? require('better-sqlite3-napi10') : require('better-sqlite3');
}
