interface RouteLayer {
  route?: { methods: Record<string, boolean> };
  match(path: string): boolean;
}

/**
 * Lists the HTTP methods Express has routes for at `path` (upper case, `HEAD` added beside `GET`),
 * by asking each route layer of the Express app whether it matches. Used only for unmatched
 * requests, to tell 404 from 405 and fill the `Allow` header (SPEC §1). `[]` when nothing matches.
 */
export function allowedMethods(expressApp: { router?: { stack: RouteLayer[] } }, path: string): string[] {
  const methods = new Set<string>();
  for (const layer of expressApp.router?.stack ?? []) {
    if (!layer.route) continue;
    // a route answering (nearly) every method is a catch-all such as middleware bound to all paths
    if (Object.keys(layer.route.methods).length > 8) continue;
    if (!layer.match(path)) continue;
    for (const [method, on] of Object.entries(layer.route.methods)) {
      if (on && method !== '_all') methods.add(method.toUpperCase());
    }
  }
  if (methods.has('GET')) methods.add('HEAD');
  const order = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
  return [...methods].sort((a, b) => order.indexOf(a) - order.indexOf(b));
}

/** The route layers of a router stack by lower-case method, listed once per stack (and again only if routes were added). */
const layersByMethod = new WeakMap<RouteLayer[], { size: number; byMethod: Map<string, RouteLayer[]> }>();

/**
 * True when Express has a route for `method` (upper case) at `path`: {@link allowedMethods}
 * asked about one method, for the hot path (the wire middleware asks it on every request with a
 * body). Only the routes of that method are tried, and the first match answers.
 */
export function hasRoute(expressApp: { router?: { stack: RouteLayer[] } }, path: string, method: string): boolean {
  const stack = expressApp.router?.stack ?? [];
  let listed = layersByMethod.get(stack);
  if (listed?.size !== stack.length) {
    const byMethod = new Map<string, RouteLayer[]>();
    for (const layer of stack) {
      if (!layer.route || Object.keys(layer.route.methods).length > 8) continue;
      for (const [name, on] of Object.entries(layer.route.methods)) {
        if (on && name !== '_all') byMethod.set(name, [...(byMethod.get(name) ?? []), layer]);
      }
    }
    listed = { size: stack.length, byMethod };
    layersByMethod.set(stack, listed);
  }
  const lower = method.toLowerCase();
  const candidates = lower === 'head' ? [...(listed.byMethod.get('head') ?? []), ...(listed.byMethod.get('get') ?? [])] : (listed.byMethod.get(lower) ?? []);
  return candidates.some((layer) => layer.match(path));
}
