import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource, QueryRunner } from 'typeorm';

/**
 * What a request's code reads beside its parameters, in one typed place — the request context,
 * entered once per request by the first middleware ({@link enterRequestContext}) and reachable
 * from everything the request awaits. It is the only async-context store of the service: the
 * lowest layer, importing nothing of the application, so that `database/`, `common/` and the
 * features all read it downward.
 * - `requestId`: the request's `X-Request-Id` (docs/wire.md#x-request-id); `''` outside a request;
 * - `servedUrl`: the URL the request was routed with when a header or subdomain chose its API
 *   version and the version negotiation rewrote it (`/v2/articles?…`; docs/versioning.md);
 * - `apiVersion`: the API version the request is served as (`'2'`), which the resource mappers'
 *   links point into (src/common/versioning/api-versions.ts, `linkPrefix`); set by
 *   RequestScopeInterceptor for versioned paths;
 * - `targetRefusal`: the 400 of a request target that breaks the path or query rules
 *   (docs/wire.md#paths), found before routing and thrown by the WireMiddleware inside Nest's
 *   pipeline, so that it is logged and written like any other error;
 * - `timing`: the database time the request spent so far, for `Server-Timing`
 *   (README "Metrics": `SERVER_TIMING`); set by the metrics middleware when SERVER_TIMING is on;
 * - `transaction`: the request transaction the code running now belongs to
 *   (src/database/request-transaction.ts: a keyed write and its idempotency record commit together);
 * - `sqliteOwner`: the SQLite transaction the code running now belongs to
 *   (src/database/sqlite-transactions.ts, docs/writes.md#transactions-on-sqlite).
 * Outside a request (the import CLI, the webhook worker, unit tests) there is none until a
 * transaction enters one with {@link withRequestContext}: readers fall back to their defaults (API
 * version 1, no transaction, no timing).
 */
export interface RequestContext {
  readonly requestId: string;
  servedUrl?: string;
  apiVersion?: string;
  targetRefusal?: Error;
  timing?: RequestTiming;
  transaction?: TransactionScope;
  sqliteOwner?: TransactionOwner;
}

/** The time one request spent so far in database statements, in milliseconds (summed, so overlapping statements count each). */
export interface RequestTiming {
  dbMs: number;
}

/** A transaction that statements issued in its context join (see src/database/request-transaction.ts). */
export interface TransactionScope {
  /** Whether statements on `dataSource` from the current context belong to this transaction. */
  joins(dataSource: DataSource): boolean;
  /** The query runner this transaction's statements go to (`create` makes it the first time). */
  queryRunner(create: () => QueryRunner): QueryRunner;
}

/**
 * Who runs a statement on the SQLite connection: one token per top-level transaction (and per
 * request transaction), carried by the context of everything that transaction's callback does.
 * `active` while that transaction holds the connection (a request transaction's owner: from the
 * start); transactions begun in its context then nest in it.
 */
export interface TransactionOwner {
  active: boolean;
}

const storage = new AsyncLocalStorage<RequestContext>();

/**
 * Runs `next` — the rest of the request's middleware and handling, and everything it awaits — in a
 * new request context for request `requestId`. Called once per request, by the first middleware.
 */
export function enterRequestContext(requestId: string, next: () => void): void {
  storage.run({ requestId }, next);
}

/** The current request context, or undefined outside every request and transaction. */
export function requestContext(): RequestContext | undefined {
  return storage.getStore();
}

/**
 * Runs `handle` — and everything it awaits — in a copy of the current request context with
 * `changes` applied (a fresh context when there is none), and returns what it returns. The
 * enclosing context is left as it was, so a nested scope can serve another API version for a while
 * (the event log renders an event's data as v1 and as v2 inside one request) or belong to a
 * transaction of its own.
 */
export function withRequestContext<T>(changes: Partial<RequestContext>, handle: () => T): T {
  const current = storage.getStore();
  return storage.run({ requestId: current?.requestId ?? '', ...current, ...changes }, handle);
}
