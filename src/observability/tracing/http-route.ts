import type { IncomingMessage } from 'node:http';

/** What Express leaves on a request a route handled: the route's path pattern, and the mount path. */
interface RoutedRequest extends IncomingMessage {
  route?: { path?: unknown; methods?: Record<string, boolean> };
  baseUrl?: string;
}

/** Pattern path → OpenAPI template, for the few dozen routes the service has (bounded). */
const templates = new Map<string, string>();

/**
 * The route template of the request in the OpenAPI form (`/v1/todos/{id}`), taken from the
 * controller route Express dispatched it to (its pattern `/v1/todos/:id` under its mount path,
 * with `:name` and `*name` written `{name}`), or undefined when no controller route took the
 * request (404, 405, or refused before routing). A controller route serves one method; Nest
 * mounts middleware of every method (`{/*path}`) as a route of each of Express's methods, which is
 * no endpoint and gives no template. The
 * template, never the raw path, names server spans: one name per route, whatever the ids. Call
 * once the response is done (Express sets the route while routing).
 */
export function routeTemplate(req: IncomingMessage): string | undefined {
  const { route, baseUrl } = req as RoutedRequest;
  if (!route || typeof route.path !== 'string' || !route.methods || Object.keys(route.methods).length !== 1 || route.methods._all) return undefined;
  const pattern = `${baseUrl ?? ''}${route.path}`;
  let template = templates.get(pattern);
  if (template === undefined) {
    template = pattern.replace(/[:*]([A-Za-z_$][\w$]*)/g, '{$1}');
    if (templates.size < 1000) templates.set(pattern, template);
  }
  return template;
}

/** What the end of a request adds to its server span: the name, when a route took it, and attributes. */
export interface ServerSpanDetails {
  /** `METHOD /route/{template}`, or undefined when no route took the request (the span keeps the method alone). */
  name?: string;
  /** `http.route` (with a route), and `url.path` and `url.query` (when there is a query) as `redact` writes them. */
  attributes: Record<string, string>;
}

/**
 * The server span's name and attributes for a finished request (docs/operations.md#traces): named by the
 * method and {@link routeTemplate}; `url.path` and `url.query` passed through `redact` — the log's
 * URL redaction (src/logging/logging.ts `redactUrl`: secret-named parameters `[REDACTED]`) — so a
 * span never carries what a log line may not. Reads the URL as received (`originalUrl`, before a
 * version rewrite).
 */
export function serverSpanDetails(req: IncomingMessage, redact: (url: string) => string): ServerSpanDetails {
  const route = routeTemplate(req);
  const url = redact((req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? '');
  const q = url.indexOf('?');
  const attributes: Record<string, string> = { 'url.path': q === -1 ? url : url.slice(0, q) };
  if (q !== -1) attributes['url.query'] = url.slice(q + 1);
  if (route === undefined) return { attributes };
  attributes['http.route'] = route;
  return { name: `${req.method ?? 'GET'} ${route}`, attributes };
}
