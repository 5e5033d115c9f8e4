import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createArticle } from './factories/article.factory.js';
import { bearer, createUser, type CreatedUser } from './factories/user.factory.js';
import { errorBody } from './setup/error-body.js';
import { createTestApp } from './setup/test-app.js';

/**
 * Races (docs/authentication.md#login-throttling, refresh rotation, docs/writes.md#concurrency,
 * uniqueness and order transitions): N identical or competing requests sent at once over real sockets to the listening
 * application — not one after another — on whichever database the run uses (SQLite, or PostgreSQL
 * with Redis as the shared store). Each test states how many may win; the rest must get the
 * documented refusal, never a 5xx (every response is also checked against the OpenAPI document).
 */

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

describe('concurrent requests (docs/authentication.md, docs/writes.md#concurrency, docs/resources/)', () => {
  let app: NestExpressApplication;
  let port: number;
  /** Keep-alive sockets, enough for every request of a burst to be in flight at once. */
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

  /** One HTTP request over `agent`; the body is sent as JSON. */
  function call(method: string, path: string, options: { token?: string; body?: unknown } = {}): Promise<Reply> {
    const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
    const headers: http.OutgoingHttpHeaders = { accept: 'application/json' };
    if (options.token) headers.authorization = bearer(options.token);
    if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': payload.length });
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text.length > 0 ? JSON.parse(text) : undefined });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** Sends `count` requests at once (all started before any is awaited). */
  const burst = (count: number, send: (i: number) => Promise<Reply>) => Promise.all(Array.from({ length: count }, (_, i) => send(i)));

  /** How many replies had each status, e.g. `{ 201: 1, 409: 29 }`. */
  const tally = (replies: Reply[]) =>
    replies.reduce<Record<number, number>>((counts, reply) => ({ ...counts, [reply.status]: (counts[reply.status] ?? 0) + 1 }), {});

  beforeAll(async () => {
    app = await createTestApp();
    const server = app.getHttpServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    agent.destroy();
    await app.close();
  });

  it('30 failed logins for one username at once: at most 5 reach the password check (401), the rest 429 with Retry-After', async () => {
    const { user } = await createUser(app);
    const replies = await burst(30, () => call('POST', '/v1/login', { body: { username: user.username, password: 'wrong-password' } }));
    const counts = tally(replies);
    expect(Object.keys(counts).sort()).toEqual(expect.arrayContaining(['429']));
    expect(replies.every((reply) => reply.status === 401 || reply.status === 429)).toBe(true);
    expect(counts[401] ?? 0).toBeGreaterThanOrEqual(1);
    expect(counts[401] ?? 0).toBeLessThanOrEqual(5);
    for (const reply of replies.filter((r) => r.status === 429)) {
      expect(reply.body).toEqual(errorBody('rate_limited'));
      expect(reply.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    }
    for (const reply of replies.filter((r) => r.status === 401)) expect(reply.body).toEqual(errorBody('unauthorized', 'invalid username or password'));
  });

  it('30 refreshes with one refresh token at once: exactly one 200; afterwards at most one token of the family still works', async () => {
    const created = await createUser(app);
    const replies = await burst(30, () => call('POST', '/v1/refresh', { body: { refresh_token: created.refreshToken } }));
    expect(tally(replies)).toEqual({ 200: 1, 401: 29 });
    for (const reply of replies.filter((r) => r.status === 401)) expect(reply.body).toEqual(errorBody('unauthorized'));
    const issued = replies.filter((r) => r.status === 200).map((r) => r.body.refresh_token as string);
    // the presented token never works again; of the tokens issued from it at most one does
    const original = await call('POST', '/v1/refresh', { body: { refresh_token: created.refreshToken } });
    expect(original.status).toBe(401);
    let usable = 0;
    for (const token of issued) {
      const res = await call('POST', '/v1/refresh', { body: { refresh_token: token } });
      expect([200, 401]).toContain(res.status);
      if (res.status === 200) usable += 1;
    }
    expect(usable).toBeLessThanOrEqual(1);
  });

  it('10 deletes of one todo at once: exactly one 204, the rest 404', async () => {
    const owner = await createUser(app);
    const todo = await call('POST', '/v1/todos', { token: owner.token, body: { title: 'delete me once' } });
    expect(todo.status).toBe(201);
    const replies = await burst(10, () => call('DELETE', `/v1/todos/${todo.body.id}`, { token: owner.token }));
    expect(tally(replies)).toEqual({ 204: 1, 404: 9 });
    for (const reply of replies.filter((r) => r.status === 404)) expect(reply.body).toEqual(errorBody('not_found'));
    expect((await call('GET', `/v1/todos/${todo.body.id}`, { token: owner.token })).status).toBe(404);
  });

  it('10 deletes of one article at once: exactly one 204, the rest 404', async () => {
    const owner = await createUser(app);
    const article = await createArticle(app, owner.user, { status: 'published' });
    const replies = await burst(10, () => call('DELETE', `/v1/articles/${article.id}`, { token: owner.token }));
    expect(tally(replies)).toEqual({ 204: 1, 404: 9 });
    for (const reply of replies.filter((r) => r.status === 404)) expect(reply.body).toEqual(errorBody('not_found'));
    expect((await call('GET', `/v1/articles/${article.id}`, { token: owner.token })).status).toBe(404);
  });

  it('30 registrations of one username at once: exactly one 201, the rest 409', async () => {
    const username = `racer_${process.pid}`;
    const replies = await burst(30, (i) => call('POST', '/v1/users', { body: { username, password: 'password-123', name: `Racer ${i}` } }));
    expect(tally(replies)).toEqual({ 201: 1, 409: 29 });
    for (const reply of replies.filter((r) => r.status === 409)) expect(reply.body).toEqual(errorBody('conflict'));
    const winner = replies.find((r) => r.status === 201) as Reply;
    expect(winner.body).toEqual(expect.objectContaining({ username, role: 'user' }));
  });

  describe('one order', () => {
    let owner: CreatedUser;
    let admin: CreatedUser;
    const newOrder = async () => {
      const res = await call('POST', '/v1/orders', {
        token: owner.token,
        body: { items: [{ sku: 'RACE-0', quantity: 1, unit_price_cents: 100 }], currency: 'EUR' },
      });
      expect(res.status).toBe(201);
      return res.body.id as number;
    };

    beforeAll(async () => {
      owner = await createUser(app);
      admin = await createUser(app, { role: 'admin' });
    });

    it('10 transitions pending→paid, each with other items, at once: exactly one 200, the rest 409; the order carries the winner’s items', async () => {
      const id = await newOrder();
      const items = (i: number) => [{ sku: `RACE-${i + 1}`, quantity: i + 1, unit_price_cents: 100 }];
      const replies = await burst(10, (i) => call('PATCH', `/v1/orders/${id}`, { token: owner.token, body: { status: 'paid', items: items(i) } }));
      expect(tally(replies)).toEqual({ 200: 1, 409: 9 });
      for (const reply of replies.filter((r) => r.status === 409)) expect(reply.body).toEqual(errorBody('conflict'));
      const winner = replies.find((r) => r.status === 200) as Reply;
      const stored = await call('GET', `/v1/orders/${id}`, { token: owner.token });
      expect(stored.status).toBe(200);
      expect(stored.body).toEqual(expect.objectContaining({ status: 'paid', items: winner.body.items, total_cents: winner.body.total_cents }));
    });

    it('10 competing transitions from paid (5 × shipped, 5 × cancelled) at once: one move happens; every request for the other target gets 409', async () => {
      const id = await newOrder();
      expect((await call('PATCH', `/v1/orders/${id}`, { token: owner.token, body: { status: 'paid' } })).status).toBe(200);
      const target = (i: number) => (i % 2 === 0 ? 'shipped' : 'cancelled');
      const replies = await burst(10, (i) => call('PATCH', `/v1/orders/${id}`, { token: admin.token, body: { status: target(i) } }));
      const stored = await call('GET', `/v1/orders/${id}`, { token: admin.token });
      const final = stored.body.status as string;
      expect(['shipped', 'cancelled']).toContain(final);
      replies.forEach((reply, i) => {
        // the winning target: the move itself (200), a same-status no-op after it (200), or a lost conditional update (409)
        if (target(i) === final) expect([200, 409]).toContain(reply.status);
        else expect({ target: target(i), status: reply.status, body: reply.body }).toEqual({ target: target(i), status: 409, body: errorBody('conflict') });
      });
      expect(replies.filter((reply) => reply.status === 200).every((reply) => reply.body.status === final)).toBe(true);
      expect(replies.some((reply) => reply.status === 200)).toBe(true);
    });
  });
});
