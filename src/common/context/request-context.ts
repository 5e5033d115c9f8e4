import { AsyncLocalStorage } from 'node:async_hooks';
import type { ApiException } from '../errors/api-exception.js';

/**
 * What a request's code reads beside its parameters, in one typed place — the request context,
 * entered once per request by the first middleware ({@link enterRequestContext}) and reachable
 * from everything the request awaits:
 * - `requestId`: the request's `X-Request-Id` (docs/wire.md#x-request-id);
 * - `apiVersion`: the API version the request is served as (`'2'`), which the resource mappers'
 *   links point into (src/common/versioning/api-versions.ts, `linkPrefix`); set by
 *   RequestScopeInterceptor for versioned paths;
 * - `preconditions`: the request's `If-Match` and whether one is required (REQUIRE_IF_MATCH), for
 *   the one conditional write of a PUT, PATCH or DELETE (src/common/writes/preconditions.ts); set
 *   by RequestScopeInterceptor for those methods;
 * - `targetRefusal`: the 400 of a request target that breaks the path or query rules
 *   (docs/wire.md#paths), found before routing and thrown by the WireMiddleware inside Nest's
 *   pipeline, so that it is logged and written like any other error;
 * - `timing`: the database time the request spent so far, for `Server-Timing`
 *   (README "Metrics": `SERVER_TIMING`); set by the metrics middleware when SERVER_TIMING is on.
 * Outside a request (the import CLI, the webhook worker, unit tests) there is none: readers fall
 * back to their defaults (API version 1, no precondition, no timing).
 */
export interface RequestContext {
  readonly requestId: string;
  apiVersion?: string;
  preconditions?: RequestPreconditions;
  targetRefusal?: ApiException;
  timing?: RequestTiming;
}

/** What the request said about its write precondition: the parsed `If-Match`, and whether one is required. */
export interface RequestPreconditions {
  /** `'*'`, the listed entity tags (quotes included, `W/` kept), or undefined without `If-Match`. */
  ifMatch?: '*' | string[];
  /** REQUIRE_IF_MATCH: a PUT/PATCH/DELETE of a resource without `If-Match` → 428. */
  required: boolean;
}

/** The time one request spent so far in database statements, in milliseconds (summed, so overlapping statements count each). */
export interface RequestTiming {
  dbMs: number;
}

const storage = new AsyncLocalStorage<RequestContext>();

/**
 * Runs `next` — the rest of the request's middleware and handling, and everything it awaits — in a
 * new request context for request `requestId`. Called once per request, by the first middleware.
 */
export function enterRequestContext(requestId: string, next: () => void): void {
  storage.run({ requestId }, next);
}

/** The current request's context, or undefined outside a request. */
export function requestContext(): RequestContext | undefined {
  return storage.getStore();
}

/**
 * Runs `handle` — and everything it awaits — in a copy of the current request context with
 * `changes` applied (a fresh context when there is none), and returns what it returns. The
 * enclosing context is left as it was, so a nested scope can serve another API version for a while
 * (the event log renders an event's data as v1 and as v2 inside one request).
 */
export function withRequestContext<T>(changes: Partial<RequestContext>, handle: () => T): T {
  const current = storage.getStore();
  return storage.run({ requestId: current?.requestId ?? '', ...current, ...changes }, handle);
}
