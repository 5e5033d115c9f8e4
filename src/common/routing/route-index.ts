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

/** Whether `layer` is a route that runs for OPTIONS: how Nest mounts a middleware on a route (`router.all()`, every method); no controller route of the service does. */
function runsForOptions(layer: Layer): boolean {
  return layer.route?._handlesMethod('OPTIONS') === true;
}

/**
 * Replaces each run of at least {@link MIN_RUN} route layers with a key ({@link routeKey}) in
 * `router`'s stack by one layer that hands a request only to the layers of the run whose first two
 * path segments are the request's — in their order, through a router of their own — instead of
 * matching the request against each of them in turn (on a service with ~140 routes, the pass over
 * them was most of the routing cost). Two kinds of run: the controllers' routes, which Nest
 * registers one after another after the middlewares, and the middlewares Nest mounts on given
 * routes (`forRoutes(controller)`: routes of every method, OPTIONS included). A layer that could match a request
 * with other first segments has no key and ends a run, as does a layer of the other kind. What a
 * request meets is unchanged: a request no layer of its key takes goes on to the layers after the
 * run (the 404 and 405 answers). An OPTIONS request, which no controller route serves, goes past a
 * run of controller routes at once, as it did (through them, Express would answer it with their
 * methods), and through a run of middlewares as any other request.
 * Returns the number of route layers indexed (0: nothing changed).
 */
export function indexRoutes(router: ExpressRouter): number {
  const stack = router.stack;
  const keys = stack.map((layer) => (layer.route === undefined ? undefined : routeKey(layer.route.path)));
  const runs: Array<{ start: number; end: number; middlewares: boolean }> = [];
  for (let start = 0; start < stack.length; start++) {
    if (keys[start] === undefined) continue;
    const middlewares = runsForOptions(stack[start]);
    let end = start;
    while (end < stack.length && keys[end] !== undefined && runsForOptions(stack[end]) === middlewares) end++;
    if (end - start >= MIN_RUN) runs.push({ start, end, middlewares });
    start = end - 1;
  }
  // from the last run, so that the positions of the earlier ones stay true
  for (const { start, end, middlewares } of runs.reverse()) {
    const routers = new Map<string, ExpressRouter>();
    for (let i = start; i < end; i++) {
      const key = keys[i] as string;
      let sub = routers.get(key);
      if (sub === undefined) routers.set(key, (sub = express.Router() as unknown as ExpressRouter));
      sub.stack.push(stack[i]);
    }
    const dispatch = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void): void => {
      if (req.method === 'OPTIONS' && !middlewares) return next();
      const sub = routers.get(requestKey(req.url ?? '/'));
      if (sub === undefined) return next();
      sub.handle(req, res, next);
    };
    const holder = express.Router() as unknown as ExpressRouter & { use(handler: typeof dispatch): void };
    holder.use(dispatch);
    stack.splice(start, end - start, holder.stack[0]);
  }
  return runs.reduce((total, { start, end }) => total + end - start, 0);
}
