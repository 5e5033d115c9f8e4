import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';

/** The parts of an Express 5 router layer this index reads. */
interface Layer {
  route?: { path: unknown; _handlesMethod(method: string): boolean };
}

/** An Express 5 router: its layers, in order, and the function that dispatches a request through them. */
interface ExpressRouter {
  stack: Layer[];
  handle(req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void): void;
}

/** Runs of fewer route layers are left as they are. */
const MIN_RUN = 8;

/** A path segment matched literally (no parameter, wildcard, optional group or escape). */
const LITERAL = /^[^:*{}()\\?]+$/;

/**
 * The index key of a route path: its first two segments, lower-cased (Express matches routes
 * case-insensitively), or its only segment, or `''` for `/`; undefined when a segment among those
 * is not literal (`/v1/:thing`), or when a one-segment path goes on (`/metrics{/*rest}`).
 */
export function routeKey(path: unknown): string | undefined {
  if (typeof path !== 'string' || !path.startsWith('/')) return undefined;
  const segments = path.split('/').filter((segment) => segment !== '');
  const head = segments.slice(0, 2);
  if (!head.every((segment) => LITERAL.test(segment))) return undefined;
  if (segments.length < 2 && segments.some((segment) => !LITERAL.test(segment))) return undefined;
  return head.join('/').toLowerCase();
}

/** The index key of a request: the first two non-empty segments of its raw path, lower-cased. */
export function requestKey(url: string): string {
  const end = url.search(/[?#]/);
  const path = end === -1 ? url : url.slice(0, end);
  let key = '';
  let found = 0;
  for (const segment of path.split('/')) {
    if (segment === '') continue;
    key = found === 0 ? segment : `${key}/${segment}`;
    if (++found === 2) break;
  }
  return key.toLowerCase();
}

/**
 * Replaces the longest run of route layers with a key ({@link routeKey}) in `router`'s stack (the
 * controllers' routes, which Nest registers one after another, after the middlewares' catch-all
 * route layers, which have none) by one layer that hands a request only to the routes whose
 * first two path segments are the request's — in their order, through a router of their own —
 * instead of matching the request against each of them in turn (on a service with ~140 routes, the
 * pass over them was most of the routing cost). A route that could match a request with other
 * first segments has no key and ends the run. What a route answers is unchanged; a request
 * no route of its key answers goes on to the layers after the run (the 404 and 405 answers). An
 * OPTIONS request, which no route serves, goes there at once, as it did.
 * Returns the number of route layers indexed (0: nothing changed).
 */
export function indexRoutes(router: ExpressRouter): number {
  const stack = router.stack;
  const keys = stack.map((layer) => (layer.route === undefined ? undefined : routeKey(layer.route.path)));
  let best = { start: 0, end: 0 };
  for (let start = 0; start < stack.length; start++) {
    let end = start;
    while (end < stack.length && keys[end] !== undefined) end++;
    if (end - start > best.end - best.start) best = { start, end };
    start = end;
  }
  const run = stack.slice(best.start, best.end);
  if (run.length < MIN_RUN) return 0;
  if (run.some((layer) => layer.route?._handlesMethod('OPTIONS'))) return 0;
  const routers = new Map<string, ExpressRouter>();
  run.forEach((layer, i) => {
    const key = keys[best.start + i] as string;
    let sub = routers.get(key);
    if (sub === undefined) routers.set(key, (sub = express.Router() as unknown as ExpressRouter));
    sub.stack.push(layer);
  });
  const dispatch = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void): void => {
    if (req.method === 'OPTIONS') return next();
    const sub = routers.get(requestKey(req.url ?? '/'));
    if (sub === undefined) return next();
    sub.handle(req, res, next);
  };
  const holder = express.Router() as unknown as ExpressRouter & { use(handler: typeof dispatch): void };
  holder.use(dispatch);
  stack.splice(best.start, run.length, holder.stack[0]);
  return run.length;
}
