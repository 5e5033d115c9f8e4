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
