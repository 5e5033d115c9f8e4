import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from '@jest/globals';
import { routeTemplate, serverSpanDetails } from './http-route.js';

/** A request as Express leaves it after routing. */
function routed(route: unknown, baseUrl = ''): IncomingMessage {
  return { method: 'GET', url: '/x', route, baseUrl } as unknown as IncomingMessage;
}

/** Every method Nest registers middleware of RequestMethod.ALL for (a route per method of Express's list). */
const EVERY_METHOD = Object.fromEntries(['get', 'post', 'put', 'patch', 'delete', 'head', 'options', 'propfind', 'search'].map((m) => [m, true]));

describe('routeTemplate (the server span name’s route, OpenAPI form)', () => {
  it('writes the controller route’s parameters as {name}', () => {
    expect(routeTemplate(routed({ path: '/v1/todos/:id', methods: { get: true } }))).toBe('/v1/todos/{id}');
    expect(routeTemplate(routed({ path: '/v2/articles/:articleId/comments/:id', methods: { patch: true } }))).toBe('/v2/articles/{articleId}/comments/{id}');
    expect(routeTemplate(routed({ path: '/v1/todos', methods: { post: true } }))).toBe('/v1/todos');
  });

  it('puts the mount path before the route’s own path', () => {
    expect(routeTemplate(routed({ path: '/:id', methods: { get: true } }, '/v1/tags'))).toBe('/v1/tags/{id}');
  });

  it('gives no template when no controller route took the request', () => {
    expect(routeTemplate(routed(undefined))).toBeUndefined();
    // Nest's middleware of every method: a route of each method at a catch-all path
    expect(routeTemplate(routed({ path: '/v1{/*path}', methods: EVERY_METHOD }))).toBeUndefined();
    expect(routeTemplate(routed({ path: '{/*path}', methods: { _all: true } }))).toBeUndefined();
    expect(routeTemplate(routed({ path: 42, methods: { get: true } }))).toBeUndefined();
  });

  it('is the same string for every id (one span name per route)', () => {
    const a = routeTemplate(routed({ path: '/v1/orders/:id', methods: { get: true } }));
    const b = routeTemplate(routed({ path: '/v1/orders/:id', methods: { get: true } }));
    expect(a).toBe('/v1/orders/{id}');
    expect(b).toBe(a);
  });
});

describe('serverSpanDetails (what a finished request adds to its server span)', () => {
  const redact = (url: string) => url.replace(/(access_token=)[^&]*/g, '$1[REDACTED]');

  it('names the span by method and route, and writes the URL through the log’s redaction', () => {
    const req = {
      method: 'PATCH',
      url: '/v1/todos/7?access_token=abc&fields=id',
      route: { path: '/v1/todos/:id', methods: { patch: true } },
    } as unknown as IncomingMessage;
    expect(serverSpanDetails(req, redact)).toEqual({
      name: 'PATCH /v1/todos/{id}',
      attributes: { 'http.route': '/v1/todos/{id}', 'url.path': '/v1/todos/7', 'url.query': 'access_token=[REDACTED]&fields=id' },
    });
  });

  it('keeps the method-only name when no route took the request, reads the URL as received, and sets no query without one', () => {
    const req = { method: 'GET', url: '/v2/nothing', originalUrl: '/nothing' } as unknown as IncomingMessage;
    expect(serverSpanDetails(req, redact)).toEqual({ attributes: { 'url.path': '/nothing' } });
  });
});
