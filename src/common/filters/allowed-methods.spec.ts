import { describe, expect, it } from '@jest/globals';
import { allowedMethods, hasRoute } from './allowed-methods.js';

/** A route layer as Express 5's router has it: the methods of its route and a path matcher. */
const layer = (pattern: RegExp, ...methods: string[]) => ({ route: { methods: Object.fromEntries(methods.map((m) => [m, true])) }, match: (path: string) => pattern.test(path) });

describe('allowedMethods and hasRoute (SPEC §1: 404 or 405 with Allow)', () => {
  const app = {
    router: {
      stack: [
        { match: () => true },
        layer(/^\/v1\/todos$/, 'get'),
        layer(/^\/v1\/todos$/, 'post'),
        layer(/^\/v1\/todos\/\d+$/, 'get', 'put', 'patch', 'delete'),
        layer(/.*/, 'get', 'post', 'put', 'patch', 'delete', 'head', 'options', 'trace', 'connect', '_all'),
      ],
    },
  };

  it('answers for one method what allowedMethods lists, ignoring catch-all layers', () => {
    for (const path of ['/v1/todos', '/v1/todos/3', '/v1/nothing']) {
      for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']) {
        expect(hasRoute(app, path, method)).toBe(allowedMethods(app, path).includes(method));
      }
    }
    expect(hasRoute(app, '/v1/todos', 'POST')).toBe(true);
    expect(hasRoute(app, '/v1/todos/3', 'POST')).toBe(false);
  });

  it('sees routes added after its first answer', () => {
    expect(hasRoute(app, '/v1/tags', 'POST')).toBe(false);
    app.router.stack.push(layer(/^\/v1\/tags$/, 'post'));
    expect(hasRoute(app, '/v1/tags', 'POST')).toBe(true);
  });
});
