import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import pg from 'pg';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { bearer } from './factories/user.factory.js';
import { loadFreshApp } from './setup/fresh-app.js';
import { TcpProxy } from './setup/tcp-proxy.js';
import Database from 'better-sqlite3';

/**
 * A database that goes away, hangs and comes back (docs/operations.md#faults; README.md#faults): requests
 * answer 503 `service_unavailable` with `Retry-After` within a bounded time — never hang, never
 * 500 —, readiness turns 503, and the same process serves again once the database is back. A
 * multi-row write cut in the middle leaves no row behind.
 *
 * The shared PostgreSQL server must keep running for everybody else, so the faults are made by a
 * TCP proxy between the application and the server (test/setup/tcp-proxy.ts). The proxy is only
 * meaningful for a network database; on SQLite the file cannot go away, but it can stay locked by
 * another writer past busy_timeout (SQLITE_BUSY → 503), tested at the end.
 */
const DATABASE_URL = process.env.DATABASE_URL ?? '';
const onPostgres = /^postgres(ql)?:\/\//.test(DATABASE_URL);
const describeOnPostgres = onPostgres ? describe : describe.skip;
const describeOnSqlite = onPostgres ? describe.skip : describe;

/** DB_QUERY_TIMEOUT_MS and HEALTH_CHECK_TIMEOUT_MS of the application under test. */
const TIMEOUT_MS = 1000;
/** Worst case of one failing request (pool wait or connect, then one query: see data-source.ts) plus a generous margin for a loaded machine. */
const BOUND_MS = 2 * TIMEOUT_MS + 1000 + 6000;

const ORDER = {
  currency: 'EUR',
  items: [
    { sku: 'BOOK-1', quantity: 1, unit_price_cents: 1999 },
    { sku: 'PEN-2', quantity: 3, unit_price_cents: 250 },
    { sku: 'INK-3', quantity: 2, unit_price_cents: 700 },
  ],
};

describeOnPostgres(
  `database faults on PostgreSQL through a proxy${onPostgres ? '' : ' (skipped: DATABASE_URL is not postgres://, and the faults need a network database)'}`,
  () => {
    let app: NestExpressApplication;
    let restoreEnv: () => void;
    let proxy: TcpProxy;
    let direct: pg.Client;
    let token: string;
    let users = 0;
    const api = () => request(app.getHttpServer());

    /** Sends `send()`, returns the response and how long it took (ms). */
    async function timed(send: () => request.Test): Promise<{ res: request.Response; elapsed: number }> {
      const started = Date.now();
      const res = await send();
      return { res, elapsed: Date.now() - started };
    }

    const register = () => {
      users += 1;
      return api()
        .post('/v1/users')
        .send({ username: `fault_user_${users}`, password: 'correct-horse-1', name: 'Fault User' });
    };

    function expectUnavailable(res: request.Response): void {
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body).toEqual({ error: 'the database is unavailable; retry later', code: 'service_unavailable', request_id: res.headers['x-request-id'] });
    }

    /** Polls readiness until 200 (the pool reconnects on demand); returns the last response. */
    async function readyAgain(): Promise<request.Response> {
      let res = await api().get('/health/ready');
      for (let attempt = 0; attempt < 20 && res.status !== 200; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        res = await api().get('/health/ready');
      }
      return res;
    }

    async function countRows(): Promise<{ orders: number; items: number }> {
      const { rows } = await direct.query('SELECT (SELECT count(*) FROM orders)::int AS orders, (SELECT count(*) FROM order_items)::int AS items');
      return rows[0];
    }

    beforeAll(async () => {
      const target = new URL(DATABASE_URL);
      proxy = new TcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      const port = await proxy.start();
      const proxied = new URL(DATABASE_URL);
      proxied.hostname = '127.0.0.1';
      proxied.port = String(port);
      const fresh = await loadFreshApp({
        DATABASE_URL: proxied.toString(),
        DB_QUERY_TIMEOUT_MS: String(TIMEOUT_MS),
        HEALTH_CHECK_TIMEOUT_MS: String(TIMEOUT_MS),
        DB_POOL_SIZE: '4',
      });
      restoreEnv = fresh.restoreEnv;
      app = await fresh.createTestApp();
      ({ token } = await fresh.createUser(app));
      direct = new pg.Client({ connectionString: DATABASE_URL });
      await direct.connect();
    });
    afterAll(async () => {
      await proxy?.restore();
      await app?.close();
      await direct?.end();
      await proxy?.stop();
      restoreEnv?.();
    });

    it('serves through the proxy', async () => {
      expect((await api().get('/health/ready')).status).toBe(200);
      expect((await register()).status).toBe(201);
    });

    describe('database gone (connections reset, new ones refused)', () => {
      beforeAll(() => proxy.cut());
      afterAll(() => proxy.restore());

      it('a write answers 503 service_unavailable with Retry-After, at once', async () => {
        const { res, elapsed } = await timed(register);
        expectUnavailable(res);
        expect(elapsed).toBeLessThan(BOUND_MS);
      });

      it('a read answers 503 too, never 500', async () => {
        const { res, elapsed } = await timed(() => api().get('/v1/orders').set('Authorization', bearer(token)));
        expectUnavailable(res);
        expect(elapsed).toBeLessThan(BOUND_MS);
      });

      it('readiness answers 503 naming the database; liveness stays 200', async () => {
        const ready = await api().get('/health/ready');
        expect(ready.status).toBe(503);
        expect(ready.headers['retry-after']).toBe('5');
        expect(ready.body).toEqual({
          error: 'not ready: database unavailable',
          code: 'service_unavailable',
          details: [{ field: 'database', message: 'unreachable or failing' }],
          request_id: ready.headers['x-request-id'],
        });
        expect((await api().get('/health/live')).status).toBe(200);
      });
    });

    it('once the database is back, the same process serves again (no restart)', async () => {
      const ready = await readyAgain();
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({ status: 'ok', checks: { database: { status: 'up' } } });
      expect((await register()).status).toBe(201);
    });

    describe('database hanging (connections accepted, nothing answered)', () => {
      beforeAll(() => proxy.blackhole());
      afterAll(() => proxy.restore());

      it('a request answers 503 within the bounded time instead of hanging', async () => {
        const { res, elapsed } = await timed(register);
        expectUnavailable(res);
        expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
        expect(elapsed).toBeLessThan(BOUND_MS);
      });

      it('readiness answers 503: no answer within HEALTH_CHECK_TIMEOUT_MS', async () => {
        const { res, elapsed } = await timed(() => api().get('/health/ready'));
        expect(res.status).toBe(503);
        expect(res.body.details).toEqual([{ field: 'database', message: `no answer within ${TIMEOUT_MS} ms` }]);
        expect(elapsed).toBeLessThan(BOUND_MS);
      });
    });

    it('after the hang, the same process serves again', async () => {
      expect((await readyAgain()).status).toBe(200);
      expect((await register()).status).toBe(201);
    });

    describe('all-or-nothing writes: an order with three items cut mid-transaction leaves no row (docs/writes.md#concurrency: orders written in one transaction)', () => {
      it.each([
        ['the INSERT of its items', 'INSERT INTO "order_items"'],
        ['the COMMIT, after every row was written', 'COMMIT'],
      ])('connection lost at %s → 503 and no order, no item', async (_, statement) => {
        expect(await countRows()).toEqual({ orders: 0, items: 0 });
        const cutsBefore = proxy.cuts;
        proxy.cutWhen(statement);
        const { res, elapsed } = await timed(() => api().post('/v1/orders').set('Authorization', bearer(token)).send(ORDER));
        expect(proxy.cuts).toBe(cutsBefore + 1);
        expectUnavailable(res);
        expect(elapsed).toBeLessThan(BOUND_MS);
        expect(await countRows()).toEqual({ orders: 0, items: 0 });
      });

      it('control: the same order without a fault is written whole (the count sees rows)', async () => {
        expect((await readyAgain()).status).toBe(200);
        const res = await api().post('/v1/orders').set('Authorization', bearer(token)).send(ORDER);
        expect(res.status).toBe(201);
        expect(res.body.total_cents).toBe(1999 + 3 * 250 + 2 * 700);
        expect(await countRows()).toEqual({ orders: 1, items: 3 });
      });
    });
  },
);

describeOnSqlite(`SQLite locked by another writer${onPostgres ? ' (skipped: DATABASE_URL is postgres://)' : ''}`, () => {
  let app: NestExpressApplication;
  let restoreEnv: () => void;
  let other: InstanceType<typeof Database>;
  const LOCK_TIMEOUT_MS = 200;

  beforeAll(async () => {
    const fresh = await loadFreshApp({ DB_QUERY_TIMEOUT_MS: String(LOCK_TIMEOUT_MS) });
    restoreEnv = fresh.restoreEnv;
    app = await fresh.createTestApp();
    other = new Database(DATABASE_URL.replace(/^sqlite:/, ''));
  });
  afterAll(async () => {
    if (other?.inTransaction) other.exec('ROLLBACK');
    other?.close();
    await app?.close();
    restoreEnv?.();
  });

  it('a write waiting past DB_QUERY_TIMEOUT_MS (busy_timeout) answers 503 with Retry-After, then works once the lock is gone', async () => {
    other.exec('BEGIN IMMEDIATE');
    const body = { username: 'locked_out', password: 'correct-horse-1', name: 'Locked Out' };
    const res = await request(app.getHttpServer()).post('/v1/users').send(body);
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.body).toEqual({ error: 'the database is unavailable; retry later', code: 'service_unavailable', request_id: res.headers['x-request-id'] });
    other.exec('ROLLBACK');
    const retried = await request(app.getHttpServer()).post('/v1/users').send(body);
    expect(retried.status).toBe(201);
  });
});

describeOnSqlite(`SQLite storage faults: disk full, read-only${onPostgres ? ' (skipped: DATABASE_URL is postgres://)' : ''}`, () => {
  let app: NestExpressApplication;
  let restoreEnv: () => void;
  let dataSource: DataSource;
  let token: string;
  /** A second connection to the same file: what it sees is committed. */
  let other: InstanceType<typeof Database>;
  const api = () => request(app.getHttpServer());
  const auth = () => ({ Authorization: bearer(token) });
  /** SQLite's largest max_page_count: no limit. */
  const NO_PAGE_LIMIT = 1073741823;

  /** A todo whose content needs new pages (overflow pages of 4 KiB): it cannot be written into free space. */
  const bigTodo = (title: string) => ({ title, content: 'x'.repeat(10_000) });
  /** An order whose items need new pages; the order's own row may fit where there is room. */
  const bigOrder = (sku: string) => ({
    currency: 'EUR',
    items: Array.from({ length: 100 }, (_, i) => ({ sku: `${sku}-${i}-${'s'.repeat(40)}`, quantity: 1, unit_price_cents: 100 })),
  });

  function expectUnavailable(res: request.Response): void {
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual({ error: 'the database is unavailable; retry later', code: 'service_unavailable', request_id: res.headers['x-request-id'] });
  }

  /** Committed rows, as another connection sees them. */
  const committed = () => ({
    todos: (other.prepare('SELECT title FROM todos ORDER BY id').all() as Array<{ title: string }>).map((row) => row.title),
    orders: (other.prepare('SELECT count(*) AS n FROM orders').get() as { n: number }).n,
    items: (other.prepare('SELECT count(*) AS n FROM order_items').get() as { n: number }).n,
    events: (other.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n,
  });

  /** Fills the file to its last page: no free page left (VACUUM), and no new one allowed. */
  async function diskFull(): Promise<void> {
    await dataSource.query('VACUUM');
    const [{ page_count: pages }] = await dataSource.query<Array<{ page_count: number }>>('PRAGMA page_count');
    const [{ max_page_count: limit }] = await dataSource.query<Array<{ max_page_count: number }>>(`PRAGMA max_page_count = ${pages}`);
    expect(limit).toBe(pages);
  }

  beforeAll(async () => {
    const fresh = await loadFreshApp({});
    restoreEnv = fresh.restoreEnv;
    app = await fresh.createTestApp();
    dataSource = app.get(fresh.DataSource);
    ({ token } = await fresh.createUser(app));
    other = new Database(DATABASE_URL.replace(/^sqlite:/, ''), { readonly: true });
  });
  afterAll(async () => {
    await dataSource?.query(`PRAGMA max_page_count = ${NO_PAGE_LIMIT}`);
    await dataSource?.query('PRAGMA query_only = OFF');
    other?.close();
    await app?.close();
    restoreEnv?.();
  });

  it('disk full (SQLITE_FULL): writes answer 503 with Retry-After and leave nothing behind; reads are served; once there is room, the same process writes again', async () => {
    expect((await api().post('/v1/todos').set(auth()).send({ title: 'before' })).status).toBe(201);
    const before = committed();
    await diskFull();

    expectUnavailable(await api().post('/v1/todos').set(auth()).send(bigTodo('refused todo')));
    // a multi-row write: the order and its 100 items, all or nothing
    expectUnavailable(await api().post('/v1/orders').set(auth()).send(bigOrder('FULL')));
    // still full: refused again, the connection is not left in a broken transaction
    expectUnavailable(await api().post('/v1/todos').set(auth()).send(bigTodo('refused again')));
    expect(committed()).toEqual(before);
    const read = await api().get('/v1/todos').set(auth());
    expect(read.status).toBe(200);
    expect(read.body.data.map((todo: { title: string }) => todo.title)).toEqual(['before']);
    // a write refused for its content (422, rolled back by the service) while the disk is full
    const refused = await api()
      .post('/v1/articles')
      .set(auth())
      .send({ title: 'T', tags: ['no-such-tag'] });
    expect(refused.status).toBe(422);

    await dataSource.query(`PRAGMA max_page_count = ${NO_PAGE_LIMIT}`);
    const todo = await api().post('/v1/todos').set(auth()).send(bigTodo('after'));
    expect(todo.status).toBe(201);
    const order = await api().post('/v1/orders').set(auth()).send(bigOrder('ROOM'));
    expect(order.status).toBe(201);
    expect(order.body.items).toHaveLength(100);
    // a rolled-back write after the fault, then a write: both behave, and the write is committed
    expect(
      (
        await api()
          .post('/v1/articles')
          .set(auth())
          .send({ title: 'T', tags: ['no-such-tag'] })
      ).status,
    ).toBe(422);
    expect((await api().post('/v1/todos').set(auth()).send({ title: 'last' })).status).toBe(201);
    expect(committed()).toEqual({ todos: ['before', 'after', 'last'], orders: before.orders + 1, items: before.items + 100, events: before.events + 3 });
  });

  it('read-only database (SQLITE_READONLY): writes answer 503 with Retry-After and write nothing; writable again, the next write succeeds', async () => {
    const before = committed();
    await dataSource.query('PRAGMA query_only = ON');
    expectUnavailable(await api().post('/v1/todos').set(auth()).send({ title: 'read-only todo' }));
    expectUnavailable(await api().post('/v1/orders').set(auth()).send(bigOrder('RO')));
    expect((await api().get('/v1/todos').set(auth())).status).toBe(200);
    expect(committed()).toEqual(before);

    await dataSource.query('PRAGMA query_only = OFF');
    const todo = await api().post('/v1/todos').set(auth()).send({ title: 'writable again' });
    expect(todo.status).toBe(201);
    expect(committed().todos).toEqual([...before.todos, 'writable again']);
  });
});
