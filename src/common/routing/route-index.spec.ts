import { describe, expect, it } from '@jest/globals';
import express, { type Express } from 'express';
import request from 'supertest';
import { indexRoutes, requestKey, routeKey } from './route-index.js';

/** An application shaped as Nest builds the service's: a catch-all middleware route, middlewares on given routes, then the controllers' routes, then a 404 answer. */
function application(indexed: boolean): Express {
  const app = express();
  app.all('{/*path}', (_req, res, next) => {
    res.setHeader('X-Seen', 'yes');
    next();
  });
  // as Nest mounts a middleware given routes (`forRoutes(controller)`): a route of every method per path
  const mark = (name: string) => (_req: express.Request, res: express.Response, next: express.NextFunction) => {
    res.setHeader('X-Marks', [res.getHeader('X-Marks'), name].filter(Boolean).join(','));
    next();
  };
  for (const version of ['v1', 'v2']) {
    app.all(`/${version}/things`, mark(`${version} things`));
    app.all(`/${version}/things/:id`, mark(`${version} thing`));
    app.all(`/${version}/things/:id/parts/:part_id`, mark(`${version} part`));
    app.all(`/${version}/other/:id`, mark(`${version} other`));
  }
  const answer = (name: string) => (req: express.Request, res: express.Response) =>
    res.json({ name, params: req.params, route: (req.route as { path: string }).path });
  for (const version of ['v1', 'v2']) {
    app.get(`/${version}/things`, answer(`${version} list`));
    app.post(`/${version}/things`, answer(`${version} create`));
    app.get(`/${version}/things/:id`, answer(`${version} read`));
    app.delete(`/${version}/things/:id`, answer(`${version} delete`));
    app.get(`/${version}/things/:id/parts/:part_id`, answer(`${version} part`));
    app.get(`/${version}/other/:id`, answer(`${version} other`));
  }
  app.get('/health/live', answer('live'));
  app.get('/metrics', answer('metrics'));
  app.get('/v1/things/special', answer('shadowed by /v1/things/:id'));
  app.use((req, res) => res.status(404).json({ error: `no route for ${req.path}` }));
  if (indexed) expect(indexRoutes((app as unknown as { router: Parameters<typeof indexRoutes>[0] }).router)).toBe(23);
  return app;
}

const REQUESTS: Array<[string, string]> = [
  ['GET', '/v1/things'],
  ['GET', '/v1/things/'],
  ['GET', '/V1/Things'],
  ['POST', '/v2/things'],
  ['GET', '/v2/things/7'],
  ['HEAD', '/v2/things/7'],
  ['DELETE', '/v1/things/7'],
  ['PUT', '/v1/things/7'],
  ['OPTIONS', '/v1/things/7'],
  ['OPTIONS', '/v2/other/1'],
  ['GET', '/v1/things/special'],
  ['GET', '/v1/things/7/parts/9'],
  ['GET', '/v1/things/%E0%A4%A'],
  ['GET', '/v1//things'],
  ['GET', '/v1/other/x?y=1'],
  ['GET', '/v1'],
  ['GET', '/health/live'],
  ['GET', '/metrics'],
  ['GET', '/metrics/'],
  ['GET', '/metrics/more'],
  ['GET', '/'],
  ['GET', '/nothing/here'],
];

describe('indexRoutes', () => {
  it('answers every request as the unindexed router does: status, headers and body', async () => {
    const plain = application(false);
    const indexed = application(true);
    for (const [method, url] of REQUESTS) {
      const send = (app: Express) => request(app)[method.toLowerCase() as 'get'](url);
      const [a, b] = await Promise.all([send(plain), send(indexed)]);
      const seen = { url, status: b.status, body: b.text, seen: b.headers['x-seen'], marks: b.headers['x-marks'], allow: b.headers.allow };
      expect(seen).toEqual({ url, status: a.status, body: a.text, seen: a.headers['x-seen'], marks: a.headers['x-marks'], allow: a.headers.allow });
    }
  });

  it('runs the middlewares of a route in their order, for OPTIONS too, whatever the case of the path', async () => {
    const indexed = application(true);
    expect((await request(indexed).get('/V1/things/3')).headers['x-marks']).toBe('v1 thing');
    expect((await request(indexed).options('/v2/other/1')).headers['x-marks']).toBe('v2 other');
    expect((await request(indexed).get('/v2/things/3/parts/4')).headers['x-marks']).toBe('v2 part');
  });

  it('indexes the run up to a route that could match other first segments, which stays after the index', () => {
    const app = express();
    for (let i = 0; i < 10; i++) app.get(`/v1/r${i}`, (_req, res) => res.end());
    app.get('/v1/:anything', (_req, res) => res.end());
    const router = (app as unknown as { router: Parameters<typeof indexRoutes>[0] }).router;
    expect(indexRoutes(router)).toBe(10);
    expect(router.stack).toHaveLength(2);
  });
});

describe('routeKey and requestKey', () => {
  it('key a route by its first two literal segments and a request by its first two segments, lower-cased', () => {
    expect(routeKey('/v1/articles/:id')).toBe('v1/articles');
    expect(routeKey('/v1/articles/')).toBe('v1/articles');
    expect(routeKey('/metrics')).toBe('metrics');
    expect(routeKey('/.well-known/jwks.json')).toBe('.well-known/jwks.json');
    expect(routeKey('/v1/:id')).toBeUndefined();
    expect(routeKey('/v1{/*path}')).toBeUndefined();
    expect(routeKey('{/*path}')).toBeUndefined();
    expect(requestKey('/V1/Articles/5?x=1')).toBe('v1/articles');
    expect(requestKey('//v1//articles')).toBe('v1/articles');
    expect(requestKey('/metrics')).toBe('metrics');
    expect(requestKey('/?x')).toBe('');
  });
});
