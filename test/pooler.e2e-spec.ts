import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { existsSync } from 'node:fs';
import pg from 'pg';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { bearer } from './factories/user.factory.js';
import { loadFreshApp } from './setup/fresh-app.js';
import { PGBOUNCER_PATH, startPgBouncer, type PgBouncer } from './setup/pgbouncer.js';
import { TcpProxy } from './setup/tcp-proxy.js';

/**
 * The service behind a transaction-mode connection pooler (README "Operating" › "Behind a
 * connection pooler", docs/operations.md#behind-a-connection-pooler): a real PgBouncer of the
 * test's own (Debian's 1.18, without protocol-level prepared statements) in transaction mode, in
 * front of a TCP proxy in front of the PostgreSQL server, with DB_POOLER=transaction and
 * DB_PREPARED_STATEMENTS=false. Logins work again and again (no `prepared statement "ra6"
 * already exists`), each transaction carries `statement_timeout` and `jit=off` without anything
 * staying on the server connections, and when the server goes away or hangs behind the pooler
 * requests still answer 503 within the bound of the README's faults table; the same process serves
 * again once it is back.
 *
 * The server is the one of DIRECT_DATABASE_URL when set (scripts/ci-pgbouncer.sh, where
 * DATABASE_URL itself goes through another PgBouncer), else of DATABASE_URL. Without PgBouncer
 * installed the file is skipped with one line, unless REQUIRE_PGBOUNCER=1 (scripts/ci-pgbouncer.sh).
 */
const DATABASE_URL = process.env.DIRECT_DATABASE_URL || process.env.DATABASE_URL || '';
const onPostgres = /^postgres(ql)?:\/\//.test(DATABASE_URL);
const havePgBouncer = existsSync(PGBOUNCER_PATH);
if (onPostgres && !havePgBouncer && process.env.REQUIRE_PGBOUNCER === '1') {
  throw new Error(`REQUIRE_PGBOUNCER=1: no PgBouncer at ${PGBOUNCER_PATH} (bash scripts/ci-install.sh pgbouncer)`);
}
const skipped = !onPostgres
  ? ' (skipped: DATABASE_URL is not postgres://)'
  : !havePgBouncer
    ? ` (skipped: no PgBouncer at ${PGBOUNCER_PATH}; bash scripts/ci-install.sh pgbouncer)`
    : '';
const describeWithPooler = skipped === '' ? describe : describe.skip;

/** DB_QUERY_TIMEOUT_MS and HEALTH_CHECK_TIMEOUT_MS of the application under test. */
const TIMEOUT_MS = 500;
/** The README's bound of a failing request: 2 × DB_QUERY_TIMEOUT_MS + 1 s (pool wait or connect, then one statement). */
const BOUND_MS = 2 * TIMEOUT_MS + 1000;
/** Allowance for a loaded machine (CI runs other suites beside this one) on top of {@link BOUND_MS}. */
const SLACK_MS = 1000;

const ORDER = {
  currency: 'EUR',
  items: [
    { sku: 'BOOK-1', quantity: 1, unit_price_cents: 1999 },
    { sku: 'PEN-2', quantity: 3, unit_price_cents: 250 },
  ],
};

describeWithPooler(`behind PgBouncer in transaction mode${skipped}`, () => {
  let app: NestExpressApplication;
  let dataSource: DataSource;
  let restoreEnv: () => void;
  let proxy: TcpProxy;
  let bouncer: PgBouncer;
  let direct: pg.Client;
  let token: string;
  let users = 0;
  const api = () => request(app.getHttpServer());

  async function timed(send: () => request.Test): Promise<{ res: request.Response; elapsed: number }> {
    const started = Date.now();
    const res = await send();
    return { res, elapsed: Date.now() - started };
  }

  const register = () => {
    users += 1;
    return api()
      .post('/v1/users')
      .send({ username: `pooled_user_${users}`, password: 'correct-horse-1', name: 'Pooled User' });
  };

  function expectUnavailable(res: request.Response): void {
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.body).toEqual({ error: 'the database is unavailable; retry later', code: 'service_unavailable', request_id: res.headers['x-request-id'] });
  }

  /** Polls readiness until 200 (PgBouncer reconnects after server_login_retry, the pool on demand); returns the last response. */
  async function readyAgain(): Promise<request.Response> {
    let res = await api().get('/health/ready');
    for (let attempt = 0; attempt < 40 && res.status !== 200; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      res = await api().get('/health/ready');
    }
    return res;
  }

  beforeAll(async () => {
    const target = new URL(DATABASE_URL);
    proxy = new TcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    await proxy.start();
    bouncer = await startPgBouncer({ host: '127.0.0.1', port: proxy.port, user: decodeURIComponent(target.username) || 'postgres' });
    const fresh = await loadFreshApp({
      DATABASE_URL: bouncer.through(DATABASE_URL),
      DB_POOLER: 'transaction',
      DB_PREPARED_STATEMENTS: 'false',
      DB_QUERY_TIMEOUT_MS: String(TIMEOUT_MS),
      HEALTH_CHECK_TIMEOUT_MS: String(TIMEOUT_MS),
      DB_POOL_SIZE: '4',
    });
    restoreEnv = fresh.restoreEnv;
    app = await fresh.createTestApp();
    dataSource = app.get(fresh.DataSource);
    ({ token } = await fresh.createUser(app));
    direct = new pg.Client({ connectionString: DATABASE_URL });
    await direct.connect();
  });
  afterAll(async () => {
    await proxy?.restore();
    await app?.close();
    await direct?.end();
    await bouncer?.stop();
    await proxy?.stop();
    restoreEnv?.();
  });

  it('registers and logs in again and again, several at a time (no "prepared statement … already exists")', async () => {
    const names: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await register();
      expect(res.status).toBe(201);
      names.push(`pooled_user_${users}`);
    }
    for (let round = 0; round < 3; round++) {
      const logins = await Promise.all(names.map((username) => api().post('/v1/login').send({ username, password: 'correct-horse-1' })));
      expect(logins.map((res) => res.status)).toEqual([200, 200, 200]);
    }
    const list = await api().get('/v1/orders').set('Authorization', bearer(token));
    expect(list.status).toBe(200);
  });

  it('statements with parameters run unnamed: no prepared statement on the server connection', async () => {
    const prepared = await dataSource.transaction(async (manager) => {
      await manager.query('SELECT $1::int AS one', [1]);
      await manager.query('SELECT id FROM users WHERE username = $1', ['pooled_user_1']);
      return manager.query('SELECT name FROM pg_prepared_statements');
    });
    expect(prepared).toEqual([]);
  });

  it('each transaction carries statement_timeout = DB_QUERY_TIMEOUT_MS and jit = off (SET LOCAL); nothing of it stays on the server connection', async () => {
    const inside = await dataSource.transaction((manager) =>
      manager.query("SELECT current_setting('statement_timeout') AS timeout, current_setting('jit') AS jit"),
    );
    expect(inside).toEqual([{ timeout: `${TIMEOUT_MS}ms`, jit: 'off' }]);
    // outside a transaction: the role's settings (none here) on every server connection of the pool
    const { rows } = await direct.query("SELECT coalesce(current_setting('statement_timeout'), '') AS timeout");
    const outside = await Promise.all(Array.from({ length: 8 }, () => dataSource.query("SELECT current_setting('statement_timeout') AS timeout")));
    expect(outside).toEqual(Array.from({ length: 8 }, () => [{ timeout: rows[0].timeout }]));
  });

  it('a statement running past DB_QUERY_TIMEOUT_MS in a transaction is cancelled by the server (57014), not left running', async () => {
    const started = Date.now();
    const error = await dataSource.transaction((manager) => manager.query('SELECT pg_sleep(5)')).catch((e: unknown) => e);
    const elapsed = Date.now() - started;
    expect((error as { driverError?: { code?: string } }).driverError?.code).toBe('57014');
    expect(elapsed).toBeLessThan(TIMEOUT_MS + 1000);
    const { rows } = await direct.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(5)' AND state = 'active'");
    expect(rows[0].n).toBe(0);
  });

  describe('database gone behind the pooler (server connections reset, new ones refused)', () => {
    beforeAll(() => proxy.cut());
    afterAll(() => proxy.restore());

    it('a write answers 503 service_unavailable with Retry-After within 2 s', async () => {
      const { res, elapsed } = await timed(register);
      expectUnavailable(res);
      expect(elapsed).toBeLessThan(BOUND_MS);
    });

    it('a read answers 503 too, within 2 s', async () => {
      const { res, elapsed } = await timed(() => api().get('/v1/orders').set('Authorization', bearer(token)));
      expectUnavailable(res);
      expect(elapsed).toBeLessThan(BOUND_MS);
    });

    it('readiness answers 503 naming the database', async () => {
      const { res, elapsed } = await timed(() => api().get('/health/ready'));
      expect(res.status).toBe(503);
      expect(res.body.details).toEqual([{ field: 'database', message: expect.stringMatching(/^(unreachable or failing|no answer within 500 ms)$/) }]);
      expect(elapsed).toBeLessThan(BOUND_MS);
    });
  });

  it('once the database is back, the same process serves again through the pooler (no restart)', async () => {
    const ready = await readyAgain();
    expect(ready.status).toBe(200);
    expect((await register()).status).toBe(201);
  });

  describe('database hanging behind the pooler (nothing answered)', () => {
    beforeAll(() => proxy.blackhole());
    afterAll(() => proxy.restore());

    it(`a request answers 503 within 2 × DB_QUERY_TIMEOUT_MS + 1 s (${BOUND_MS} ms) instead of hanging`, async () => {
      const { res, elapsed } = await timed(register);
      expectUnavailable(res);
      expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
      expect(elapsed).toBeLessThan(BOUND_MS + SLACK_MS);
    });
  });

  it('after the hang, the same process serves again', async () => {
    expect((await readyAgain()).status).toBe(200);
    expect((await register()).status).toBe(201);
  });

  it('an order cut at the INSERT of its items → 503 and no row; the same order without a fault is written whole', async () => {
    const count = async () =>
      (await direct.query('SELECT (SELECT count(*) FROM orders)::int AS orders, (SELECT count(*) FROM order_items)::int AS items')).rows[0];
    const before = await count();
    proxy.cutWhen('INSERT INTO "order_items"');
    const cuts = proxy.cuts;
    const { res, elapsed } = await timed(() => api().post('/v1/orders').set('Authorization', bearer(token)).send(ORDER));
    expect(proxy.cuts).toBe(cuts + 1);
    expectUnavailable(res);
    expect(elapsed).toBeLessThan(BOUND_MS + SLACK_MS);
    expect(await count()).toEqual(before);
    expect((await readyAgain()).status).toBe(200);
    const ok = await api().post('/v1/orders').set('Authorization', bearer(token)).send(ORDER);
    expect(ok.status).toBe(201);
    expect(await count()).toEqual({ orders: before.orders + 1, items: before.items + 2 });
  });
});
