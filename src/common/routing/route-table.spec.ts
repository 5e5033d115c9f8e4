import { describe, expect, it } from '@jest/globals';
import { type MiddlewareConsumer, RequestMethod } from '@nestjs/common';
import { HttpAdapterHost, MiddlewareBuilder } from '@nestjs/core';
import { RouteTable } from './route-table.js';
import { RouteTableModule } from './route-table.module.js';

/** Routes as Nest's `getServedRoutes()` lists them: version prefix included, one entry per version. */
const ROUTES = [
  ...['1', '2'].flatMap((version) => [
    { path: `/v${version}/todos`, method: RequestMethod.GET, version },
    { path: `/v${version}/todos`, method: RequestMethod.POST, version },
    { path: `/v${version}/todos/:id`, method: RequestMethod.GET, version },
    { path: `/v${version}/todos/:id`, method: RequestMethod.PUT, version },
    { path: `/v${version}/todos/:id`, method: RequestMethod.PATCH, version },
    { path: `/v${version}/todos/:id`, method: RequestMethod.DELETE, version },
  ]),
  { path: '/v2/articles/:id', method: RequestMethod.GET, version: '2' },
  { path: '/v1/logout', method: RequestMethod.POST, version: '1' },
  { path: '/health/live', method: RequestMethod.GET },
];

describe('RouteTable (docs/wire.md#paths: 404, or 405 with Allow)', () => {
  const table = RouteTable.of(ROUTES);

  it('lists the methods of a known path in the Allow order, HEAD beside GET', () => {
    expect(table.allowedMethods('/v1/todos')).toEqual(['GET', 'HEAD', 'POST']);
    expect(table.allowedMethods('/v2/todos/7')).toEqual(['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE']);
    expect(table.allowedMethods('/health/live')).toEqual(['GET', 'HEAD']);
    expect(table.allowedMethods('/v1/logout')).toEqual(['POST']);
  });

  it('knows no method of an unknown path, another version or a deeper path (404)', () => {
    expect(table.allowedMethods('/v1/nothing')).toEqual([]);
    expect(table.allowedMethods('/v1/articles/1')).toEqual([]); // only v2 has it
    expect(table.allowedMethods('/v3/todos')).toEqual([]);
    expect(table.allowedMethods('/todos')).toEqual([]);
    expect(table.allowedMethods('/v1/todos/1/x')).toEqual([]);
    expect(table.allowedMethods('/v1//todos')).toEqual([]);
    expect(table.allowedMethods('/v1/todos;x')).toEqual([]);
  });

  it('matches as Express does: case-insensitive, one trailing slash, any text as a parameter', () => {
    expect(table.allowedMethods('/V1/TODOS')).toEqual(['GET', 'HEAD', 'POST']);
    expect(table.allowedMethods('/v1/todos/')).toEqual(['GET', 'HEAD', 'POST']);
    expect(table.allowedMethods('/health/live//')).toEqual([]);
    expect(table.allowedMethods('/v1/todos/abc')).toEqual(['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE']);
    expect(table.allowedMethods('/v1/todos/%2F')).toEqual(['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE']);
  });

  it('follows the router options it is given: case-sensitive and strict', () => {
    const strict = RouteTable.of(ROUTES, { caseSensitive: true, ignoreTrailingSlash: false });
    expect(strict.allowedMethods('/V1/TODOS')).toEqual([]);
    expect(strict.allowedMethods('/v1/todos/')).toEqual([]);
    expect(strict.allowedMethods('/v1/todos')).toEqual(['GET', 'HEAD', 'POST']);
  });

  it('serves a method where allowedMethods lists it, and HEAD wherever GET is served', () => {
    for (const path of ['/v1/todos', '/v2/todos/3', '/v1/logout', '/health/live', '/v1/nothing', '/V2/ARTICLES/1']) {
      for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
        expect([path, method, table.serves(path, method)]).toEqual([path, method, table.allowedMethods(path).includes(method)]);
      }
    }
    expect(table.serves('/v1/todos', 'POST')).toBe(true);
    expect(table.serves('/v1/todos/3', 'POST')).toBe(false);
    expect(table.serves('/v1/logout', 'HEAD')).toBe(false);
    expect(table.serves('/health/live', 'OPTIONS')).toBe(false);
  });

  it('puts methods outside the usual six after them, alphabetically', () => {
    const odd = RouteTable.of([
      { path: '/x', method: RequestMethod.SEARCH },
      { path: '/x', method: RequestMethod.DELETE },
      { path: '/x', method: RequestMethod.OPTIONS },
      { path: '/x', method: RequestMethod.GET },
    ]);
    expect(odd.allowedMethods('/x')).toEqual(['GET', 'HEAD', 'DELETE', 'OPTIONS', 'SEARCH']);
  });

  it('serves every method at the path of an @All() route, without listing it in Allow', () => {
    const all = RouteTable.of([...ROUTES, { path: '/v1/hooks/:name', method: RequestMethod.ALL }]);
    expect(all.serves('/v1/hooks/x', 'PROPFIND')).toBe(true);
    expect(all.serves('/v1/hooks', 'GET')).toBe(false);
    expect(all.allowedMethods('/v1/hooks/x')).toEqual([]);
    expect(all.size).toBe(ROUTES.length + 1);
  });

  it('adds routes served outside the controllers, before or after the controllers are loaded', () => {
    const docs = [{ path: '/docs/openapi.json', method: RequestMethod.GET }];
    const before = new RouteTable();
    before.addRoutes(docs);
    before.load(ROUTES);
    const after = RouteTable.of(ROUTES);
    after.addRoutes(docs);
    for (const routes of [before, after]) {
      expect(routes.allowedMethods('/docs/openapi.json')).toEqual(['GET', 'HEAD']);
      expect(routes.allowedMethods('/v1/todos')).toEqual(['GET', 'HEAD', 'POST']);
      expect(routes.size).toBe(ROUTES.length + 1);
    }
  });

  it('refuses to answer before it is loaded, rather than answering 404 for every path', () => {
    const empty = new RouteTable();
    expect(() => empty.allowedMethods('/v1/todos')).toThrow(/before the routes were loaded/);
    expect(() => empty.serves('/v1/todos', 'GET')).toThrow(/before the routes were loaded/);
  });
});

describe('RouteTableModule', () => {
  /** A MiddlewareBuilder as Nest hands it to configure(), listing `routes`. */
  const builder = (routes: typeof ROUTES) => Object.assign(Object.create(MiddlewareBuilder.prototype) as MiddlewareBuilder, { getServedRoutes: () => routes });
  const host = (options?: object) =>
    Object.assign(new HttpAdapterHost(), { httpAdapter: { getRouteMatchingOptions: options && (() => options) } }) as HttpAdapterHost;

  it("loads Nest's served routes with the adapter's matching options", () => {
    const table = new RouteTable();
    new RouteTableModule(table, host({ caseSensitive: true, ignoreTrailingSlash: true })).configure(builder(ROUTES));
    expect(table.allowedMethods('/v1/todos/')).toEqual(['GET', 'HEAD', 'POST']);
    expect(table.allowedMethods('/V1/todos')).toEqual([]);
  });

  it('matches as Express by default when the adapter does not tell', () => {
    const table = new RouteTable();
    new RouteTableModule(table, host()).configure(builder(ROUTES));
    expect(table.allowedMethods('/V1/todos')).toEqual(['GET', 'HEAD', 'POST']);
  });

  it('fails at start-up when the consumer cannot list the served routes', () => {
    const consumer = { apply: () => undefined } as unknown as MiddlewareConsumer;
    expect(() => new RouteTableModule(new RouteTable(), host()).configure(consumer)).toThrow(/getServedRoutes/);
  });
});
