import { Injectable, RequestMethod } from '@nestjs/common';
import type { RouteInfo, RouteMatchingOptions } from '@nestjs/common/internal';
import { mapToExcludeRoute } from '@nestjs/core/middleware/utils.js';
import { matchesExcludedPath } from '@nestjs/core/router/utils/exclude-route.util.js';

/** The order of the `Allow` header (docs/wire.md#paths); methods not listed here follow, alphabetically. */
const ALLOW_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** What `mapToExcludeRoute` compiles a route into: its path as a matcher, and its method. */
type CompiledRoute = ReturnType<typeof mapToExcludeRoute>[number];

/** Express's defaults ("case sensitive routing" and "strict routing" off): what the app runs with. */
export const EXPRESS_DEFAULT_MATCHING: RouteMatchingOptions = { caseSensitive: false, ignoreTrailingSlash: true };

/** True for a route of every method: `@All()` (RequestMethod.ALL), or -1 as Nest writes a path-only route. */
function isEveryMethod(method: RequestMethod): boolean {
  return method === RequestMethod.ALL || (method as number) === -1;
}

/**
 * The routes the application serves, as Nest registered them: each controller route at the path
 * the router serves it at (version prefix included: `/v1/todos/:id`), with its method. Filled once
 * at start-up by {@link RouteTableModule} from Nest's own list (`MiddlewareBuilder.getServedRoutes()`)
 * and matched as the HTTP adapter's router matches (its `getRouteMatchingOptions()`: for Express,
 * case-insensitive and with an optional trailing slash), with Nest's matcher compiler
 * (`mapToExcludeRoute`, the one Nest uses to match middleware exclusions "exactly like the router
 * does"). It answers the two questions of docs/wire.md#paths for a request no route took: is the path known
 * at all (404 if not) and with which methods (405 with `Allow`), and, for the wire middleware,
 * whether a route takes a request before its body is read.
 *
 * HEAD is served by every GET route (as Express does), so it is listed beside GET; OPTIONS is not
 * (no controller declares it, and Express's automatic OPTIONS answer never runs behind Nest's
 * not-found handler), so an OPTIONS request that is no CORS preflight gets 405. A route of every
 * method (`@All()`) serves any method at its path and adds nothing to `Allow`.
 */
@Injectable()
export class RouteTable {
  private compiled?: { byMethod: Map<string, CompiledRoute[]>; everyMethod: CompiledRoute[]; all: { method: string; route: CompiledRoute }[] };
  /** The controllers' routes, as loaded at start-up, and the matching options they were loaded with. */
  private controllerRoutes?: { routes: RouteInfo[]; options: RouteMatchingOptions };
  /** Routes registered on the HTTP adapter outside the controllers ({@link addRoutes}). */
  private readonly otherRoutes: RouteInfo[] = [];

  /** A table holding `routes` (served paths, as `getServedRoutes()` gives them) matched with `options`. */
  static of(routes: RouteInfo[], options: RouteMatchingOptions = EXPRESS_DEFAULT_MATCHING): RouteTable {
    const table = new RouteTable();
    table.load(routes, options);
    return table;
  }

  /**
   * Compiles `routes` with the router's matching `options` (default: Express's); called once at
   * start-up. @throws TypeError (from Nest's compiler) for a path the router could not read.
   */
  load(routes: RouteInfo[], options: RouteMatchingOptions = EXPRESS_DEFAULT_MATCHING): void {
    this.controllerRoutes = { routes, options };
    this.compile();
  }

  /**
   * Adds routes registered on the HTTP adapter outside the controllers, which Nest's list does not
   * have (the docs: setupDocs declares the GET paths SwaggerModule serves), so that their other
   * methods are 405 too. May come before or after {@link load}; they are matched with the same
   * options.
   */
  addRoutes(routes: RouteInfo[]): void {
    this.otherRoutes.push(...routes);
    if (this.controllerRoutes) this.compile();
  }

  private compile(): void {
    const { routes: controllers, options } = this.controllerRoutes!;
    const routes = [...controllers, ...this.otherRoutes];
    const byMethod = new Map<string, CompiledRoute[]>();
    const everyMethod: CompiledRoute[] = [];
    const all: { method: string; route: CompiledRoute }[] = [];
    const compiled = mapToExcludeRoute(routes, options);
    compiled.forEach((route, index) => {
      const method = routes[index].method;
      if (isEveryMethod(method)) {
        everyMethod.push(route);
        return;
      }
      const name = RequestMethod[method];
      byMethod.set(name, [...(byMethod.get(name) ?? []), route]);
      all.push({ method: name, route });
    });
    this.compiled = { byMethod, everyMethod, all };
  }

  /** The number of routes held (each method and path once per version). */
  get size(): number {
    const compiled = this.table();
    return compiled.all.length + compiled.everyMethod.length;
  }

  /**
   * True when a route serves `method` (upper case) at `path` (the request path as the router
   * sees it, without the query): a route of that method, a GET route for HEAD, or a route of
   * every method. @throws Error when the table was never loaded (a wiring mistake).
   */
  serves(path: string, method: string): boolean {
    const { byMethod, everyMethod } = this.table();
    const candidates = method === 'HEAD' ? [...(byMethod.get('HEAD') ?? []), ...(byMethod.get('GET') ?? [])] : (byMethod.get(method) ?? []);
    return candidates.some((route) => matchesExcludedPath(route, path)) || everyMethod.some((route) => matchesExcludedPath(route, path));
  }

  /**
   * The methods routes serve at `path`, in the `Allow` order of docs/wire.md#paths (`GET, HEAD, POST, PUT,
   * PATCH, DELETE`, others after): HEAD beside GET; `[]` when no route matches the path (404).
   * @throws Error when the table was never loaded.
   */
  allowedMethods(path: string): string[] {
    const methods = new Set<string>();
    for (const { method, route } of this.table().all) {
      if (!methods.has(method) && matchesExcludedPath(route, path)) methods.add(method);
    }
    if (methods.has('GET')) methods.add('HEAD');
    const rank = (method: string) => (ALLOW_ORDER.includes(method) ? ALLOW_ORDER.indexOf(method) : ALLOW_ORDER.length);
    return [...methods].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  }

  private table(): NonNullable<RouteTable['compiled']> {
    if (!this.compiled) throw new Error('RouteTable: asked before the routes were loaded (is RouteTableModule imported?)');
    return this.compiled;
  }
}
