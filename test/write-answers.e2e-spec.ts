import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { bearer, type CreatedUser, DEFAULT_PASSWORD } from './factories/user.factory.js';
import { loadFreshApp } from './setup/fresh-app.js';

const onPostgres = /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '');
const describeOnSqlite = onPostgres ? describe.skip : describe;

/** A statement that ends a write: its COMMIT, or its one INSERT/UPDATE/DELETE when it needs no transaction. */
const ENDS_A_WRITE = /^(COMMIT|INSERT|UPDATE|DELETE)\b/i;

/**
 * A write's answer is built from what it wrote, never read after its commit (docs/writes.md#concurrency):
 * once a write is committed, no database statement is left that could fail and turn a committed
 * write into a 503. Every statement the application sends is recorded — SQLite, where all of them
 * go through one TypeORM query runner, whose `query` is wrapped to note the SQL and pass it on
 * unchanged — and for each create, update and status move of every resource, in v1 and v2 (whose
 * answers embed the author), the last statement of the request must be the one that made the
 * write durable. Sessions write the shared store, not the database: the user's profile is read
 * before the session is stored. On PostgreSQL (a pool of query runners) this file is skipped.
 */
describeOnSqlite(`a write's answer needs no statement after its commit${onPostgres ? ' (skipped: DATABASE_URL is postgres://)' : ''}`, () => {
  let app: NestExpressApplication;
  let restoreEnv: () => void;
  let alice: CreatedUser;
  let admin: CreatedUser;
  /** What the application sent, in order: `sql: <statement>` and `store: set <key>`. */
  const log: string[] = [];
  const api = () => request(app.getHttpServer());
  const as = (caller: CreatedUser) => ({ Authorization: bearer(caller.token) });

  beforeAll(async () => {
    // webhooks to a loopback URL (checked, never delivered: the worker is not started)
    const fresh = await loadFreshApp({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    restoreEnv = fresh.restoreEnv;
    app = await fresh.createTestApp();
    alice = await fresh.createUser(app);
    admin = await fresh.createUser(app, { role: 'admin' });
    const runner = app.get<DataSource>(fresh.DataSource).driver.createQueryRunner('master');
    const query = runner.query.bind(runner) as (...args: unknown[]) => Promise<unknown>;
    (runner as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args) => {
      log.push(`sql: ${String(args[0]).trim()}`);
      return query(...args);
    };
    const { SharedStore } = await import('../src/store/shared-store.js');
    const store = app.get(SharedStore);
    const set = store.set.bind(store);
    store.set = (key, value, ttlMs) => {
      log.push(`store: set ${key}`);
      return set(key, value, ttlMs);
    };
  });
  afterAll(async () => {
    await app?.close();
    restoreEnv?.();
  });

  /** Sends a write, expects `status`, and returns its answer and the statements it caused. */
  async function write(send: request.Test, status: number): Promise<{ res: request.Response; statements: string[] }> {
    log.length = 0;
    const res = await send;
    expect({ status: res.status, body: res.body as unknown }).toMatchObject({ status });
    return { res, statements: log.filter((entry) => entry.startsWith('sql: ')).map((entry) => entry.slice(5)) };
  }

  /** The write committed with its last statement: nothing after it. */
  function expectEndsWithTheWrite(statements: string[]): void {
    expect(statements.length).toBeGreaterThan(0);
    expect(statements.at(-1)).toMatch(ENDS_A_WRITE);
  }

  it('todos, tags, orders: create, update, status move', async () => {
    const todo = await write(api().post('/v1/todos').set(as(alice)).send({ title: 'Buy milk' }), 201);
    expectEndsWithTheWrite(todo.statements);
    expectEndsWithTheWrite((await write(api().patch(`/v1/todos/${todo.res.body.id}`).set(as(alice)).send({ status: 'done' }), 200)).statements);

    const tag = await write(api().post('/v1/tags').set(as(admin)).send({ name: 'after-commit' }), 201);
    expectEndsWithTheWrite(tag.statements);
    expect(tag.res.body).toMatchObject({ name: 'after-commit', links: [{ rel: 'self', href: `/v1/tags/${tag.res.body.id}` }, expect.anything()] });
    expect(tag.res.headers.etag).toBe('"1.v1"');
    expect((await api().get(`/v1/tags/${tag.res.body.id}`).set(as(admin))).body).toEqual(tag.res.body);
    expectEndsWithTheWrite((await write(api().patch(`/v1/tags/${tag.res.body.id}`).set(as(admin)).send({ name: 'after-commit-2' }), 200)).statements);

    const items = [{ sku: 'BOOK-1', quantity: 2, unit_price_cents: 500 }];
    const order = await write(api().post('/v1/orders').set(as(alice)).send({ currency: 'EUR', items }), 201);
    expectEndsWithTheWrite(order.statements);
    expectEndsWithTheWrite((await write(api().patch(`/v1/orders/${order.res.body.id}`).set(as(alice)).send({ status: 'paid' }), 200)).statements);
  });

  it.each(['1', '2'])('articles and comments in v%s: create, replace, update, publish (v2 embeds the author read in the transaction)', async (version) => {
    const tag = (
      await api()
        .post('/v1/tags')
        .set(as(admin))
        .send({ name: `v${version}-tag` })
    ).body as { name: string };
    const article = await write(
      api()
        .post(`/v${version}/articles`)
        .set(as(alice))
        .send({ title: 'Hello', tags: [tag.name] }),
      201,
    );
    expectEndsWithTheWrite(article.statements);
    const path = `/v${version}/articles/${article.res.body.id}`;
    const read = await api().get(path).set(as(alice));
    expect(article.res.body).toEqual(read.body);
    expect(article.res.headers.etag).toBe(read.headers.etag);
    if (version === '2') expect(article.res.body.author).toEqual({ id: alice.user.id, username: alice.user.username, name: expect.any(String) });
    expectEndsWithTheWrite(
      (
        await write(
          api()
            .put(path)
            .set(as(alice))
            .send({ title: 'Replaced', tags: [tag.name] }),
          200,
        )
      ).statements,
    );
    const published = await write(api().patch(path).set(as(alice)).send({ status: 'published' }), 200);
    expectEndsWithTheWrite(published.statements);
    expect(published.res.body).toEqual((await api().get(path).set(as(alice))).body);

    const comment = await write(api().post(`${path}/comments`).set(as(admin)).send({ body: 'Nice' }), 201);
    expectEndsWithTheWrite(comment.statements);
    const commentPath = `${path}/comments/${comment.res.body.id}`;
    const commentRead = await api().get(commentPath).set(as(admin));
    expect(comment.res.body).toEqual(commentRead.body);
    expect(comment.res.headers.etag).toBe(commentRead.headers.etag);
    if (version === '2') expect(comment.res.body.author).toMatchObject({ id: admin.user.id, username: admin.user.username });
    const edited = await write(api().patch(commentPath).set(as(admin)).send({ body: 'Nicer' }), 200);
    expectEndsWithTheWrite(edited.statements);
    expect(edited.res.body).toEqual((await api().get(commentPath).set(as(admin))).body);
  });

  it('users: registration, a change of name, a change of password (its refresh tokens revoked in the same transaction)', async () => {
    const registered = await write(
      api().post('/v1/users').send({ username: 'after_commit', password: 'correct-horse-1', name: 'After Commit', email: 'After@Example.com' }),
      201,
    );
    expectEndsWithTheWrite(registered.statements);
    const path = `/v1/users/${registered.res.body.id}`;
    expect(registered.res.body).toEqual((await api().get(path).set(as(admin))).body);
    expect(registered.res.body).toMatchObject({ email: 'after@example.com', role: 'user', age: null });
    expect(registered.res.headers.etag).toBe('"1.v1"');

    const renamed = await write(api().patch(`/v1/users/${alice.user.id}`).set(as(alice)).send({ name: 'Alice Renamed', age: 30 }), 200);
    expectEndsWithTheWrite(renamed.statements);
    const read = await api().get(`/v1/users/${alice.user.id}`).set(as(alice));
    expect(renamed.res.body).toEqual(read.body);
    expect(renamed.res.headers.etag).toBe(read.headers.etag);

    const login = await api().post('/v1/login').send({ username: 'after_commit', password: 'correct-horse-1' });
    expect(login.status).toBe(200);
    const changed = await write(api().patch(path).set(as(admin)).send({ password: 'another-horse-2' }), 200);
    expectEndsWithTheWrite(changed.statements);
    const refresh = await api().post('/v1/refresh').send({ refresh_token: login.body.refresh_token });
    expect(refresh.status).toBe(401);
  });

  it('API keys, OAuth clients and webhooks: created with their secret, nothing after the commit', async () => {
    const key = await write(
      api()
        .post('/v1/api-keys')
        .set(as(alice))
        .send({ name: 'nightly', scopes: ['todos:read'] }),
      201,
    );
    expectEndsWithTheWrite(key.statements);
    expect((await api().get('/v1/todos').set('X-API-Key', key.res.body.key)).status).toBe(200);
    const client = await write(
      api()
        .post('/v1/oauth-clients')
        .set(as(admin))
        .send({ name: 'App', redirect_uris: ['https://app.example.com/callback'], scopes: ['todos:read'], confidential: true }),
      201,
    );
    expectEndsWithTheWrite(client.statements);
    const webhook = await write(
      api()
        .post('/v1/webhooks')
        .set(as(alice))
        .send({ url: 'http://127.0.0.1:9/hook', events: ['todo.created'] }),
      201,
    );
    expectEndsWithTheWrite(webhook.statements);
    expectEndsWithTheWrite((await write(api().patch(`/v1/webhooks/${webhook.res.body.id}`).set(as(alice)).send({ description: 'mine' }), 200)).statements);
  });

  it('sessions: the user is read before the session is stored, nothing after it', async () => {
    log.length = 0;
    const res = await api().post('/v1/sessions').send({ username: alice.user.username, password: DEFAULT_PASSWORD });
    expect(res.status).toBe(201);
    expect(res.body.user).toMatchObject({ id: alice.user.id, username: alice.user.username });
    expect(log.at(-1)).toMatch(/^store: set .*session:/);
    expect(log.some((entry) => /^sql: SELECT .*"users"/i.test(entry))).toBe(true);
  });
});
