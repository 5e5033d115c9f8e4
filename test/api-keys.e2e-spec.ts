import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { ApiKey } from '../src/auth/api-key.entity.js';
import { bearer, createUser, type CreatedUser } from './factories/user.factory.js';
import { loadFreshApp } from './setup/fresh-app.js';
import { createTestApp } from './setup/test-app.js';
import { errorBody } from './setup/error-body.js';
import { ISO_MS } from './setup/formats.js';

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
const KEY = /^rk_[A-Za-z0-9_-]{43}$/;
/** A well-formed key (rk_ + 43 base64url characters) that was never issued. */
const UNKNOWN_KEY = `rk_${'A'.repeat(43)}`;

describe('API keys (docs/authentication.md#api-keys)', () => {
  let app: NestExpressApplication;
  let alice: CreatedUser;
  let bob: CreatedUser;
  const api = () => request(app.getHttpServer());

  /** Creates a key for `owner` through the API and returns the 201 body. */
  async function createKey(
    owner: CreatedUser,
    scopes: string[],
    extra: Record<string, unknown> = {},
  ): Promise<{ id: number; key: string } & Record<string, any>> {
    const res = await api()
      .post('/v1/api-keys')
      .set('Authorization', bearer(owner.token))
      .send({ name: 'test key', scopes, ...extra });
    expect(res.status).toBe(201);
    return res.body;
  }

  beforeAll(async () => {
    app = await createTestApp();
    alice = await createUser(app, { name: 'Alice' });
    bob = await createUser(app, { name: 'Bob' });
  });
  afterAll(async () => {
    await app.close();
  });

  describe('POST /v1/api-keys and GET /v1/api-keys', () => {
    let created: { id: number; key: string } & Record<string, any>;

    it('creates a key: 201 with Location, the key (rk_ + 43 characters) shown once, its 11-character prefix, scopes sorted', async () => {
      const res = await api()
        .post('/v1/api-keys')
        .set('Authorization', bearer(alice.token))
        .send({ name: 'nightly export', scopes: ['todos:write', 'articles:read', 'todos:read'] });
      expect(res.status).toBe(201);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers.location).toBe(`/v1/api-keys/${res.body.id}`);
      expect(res.body).toEqual({
        id: expect.any(Number),
        name: 'nightly export',
        key: expect.stringMatching(KEY),
        prefix: expect.any(String),
        scopes: ['articles:read', 'todos:read', 'todos:write'],
        expires_at: null,
        last_used_at: null,
        created_at: expect.stringMatching(ISO_MS),
        links: [{ rel: 'self', href: `/v1/api-keys/${res.body.id}` }],
      });
      expect(res.body.key).toHaveLength(46);
      expect(res.body.prefix).toBe(res.body.key.slice(0, 11));
      created = res.body;
    });

    it('lists the key later with its prefix and without the key', async () => {
      const res = await api().get('/v1/api-keys').set('Authorization', bearer(alice.token));
      expect(res.status).toBe(200);
      const { key, ...withoutKey } = created;
      expect(res.body.data).toContainEqual(withoutKey);
      for (const item of res.body.data) expect(item).not.toHaveProperty('key');
      expect(res.text).not.toContain(key);
      expect(res.text).not.toContain(key.slice(11));
    });

    it("lists only the caller's own keys", async () => {
      const res = await api().get('/v1/api-keys').set('Authorization', bearer(bob.token));
      expect(res.status).toBe(200);
      expect(res.body.data.map((k: { id: number }) => k.id)).not.toContain(created.id);
    });

    it('stores only the SHA-256 of the key (and the visible prefix)', async () => {
      const row = await app
        .get(DataSource)
        .createQueryBuilder()
        .select('*')
        .from('api_keys', 'k')
        .where('k.id = :id', { id: created.id })
        .getRawOne<Record<string, unknown>>();
      expect(row).toBeDefined();
      expect(row!.key_hash).toBe(sha256(created.key));
      expect(row!.prefix).toBe(created.key.slice(0, 11));
      for (const [column, value] of Object.entries(row!)) {
        const text = value instanceof Date ? value.toISOString() : String(value);
        expect({ column, holdsKey: text.includes(created.key) || text.includes(created.key.slice(11)) }).toEqual({ column, holdsKey: false });
      }
    });

    it('accepts an expires_at in the future and echoes it', async () => {
      const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
      const body = await createKey(alice, ['todos:read'], { expires_at: expiresAt });
      expect(body.expires_at).toBe(expiresAt);
    });

    it.each([
      ['an unknown scope', 422, 'scopes', { name: 'k', scopes: ['todos:delete'] }],
      ['a scope of an unknown collection', 422, 'scopes', { name: 'k', scopes: ['secrets:read'] }],
      ['empty scopes', 422, 'scopes', { name: 'k', scopes: [] }],
      ['a missing name', 400, 'name', { scopes: ['todos:read'] }],
      ['missing scopes', 400, 'scopes', { name: 'k' }],
      ['expires_at in the past', 422, 'expires_at', { name: 'k', scopes: ['todos:read'], expires_at: '2020-01-01T00:00:00.000Z' }],
      ['expires_at not a date', 422, 'expires_at', { name: 'k', scopes: ['todos:read'], expires_at: 'next tuesday' }],
      ['expires_at an impossible date', 422, 'expires_at', { name: 'k', scopes: ['todos:read'], expires_at: '2030-02-30T00:00:00Z' }],
    ])('answers %s with %i naming %s', async (_case, status, field, body) => {
      const res = await api().post('/v1/api-keys').set('Authorization', bearer(alice.token)).send(body);
      expect(res.status).toBe(status);
      expect(res.body).toEqual({ ...errorBody(status === 400 ? 'bad_request' : 'validation_failed'), details: expect.any(Array) });
      expect(res.body.details).toContainEqual({ field: expect.stringMatching(new RegExp(`^${field}`)), message: expect.any(String) });
    });

    it('needs a credential (401)', async () => {
      const res = await api()
        .post('/v1/api-keys')
        .send({ name: 'k', scopes: ['todos:read'] });
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="api"');
      expect(res.body).toEqual(errorBody('unauthorized'));
    });
  });

  describe('X-API-Key on protected routes', () => {
    let readKey: string;
    let readWriteKey: string;
    let usersKey: string;

    beforeAll(async () => {
      readKey = (await createKey(alice, ['todos:read'])).key;
      readWriteKey = (await createKey(alice, ['todos:read', 'todos:write'])).key;
      usersKey = (await createKey(alice, ['users:read'])).key;
    });

    it('GET /v1/todos with todos:read → 200, with the RateLimit headers', async () => {
      const res = await api().get('/v1/todos').set('X-API-Key', readKey);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ data: expect.any(Array), total: expect.any(Number) });
      expect(res.headers['ratelimit-limit']).toBe('60');
      expect(Number(res.headers['ratelimit-remaining'])).toBeLessThan(60);
      expect(res.headers['ratelimit-reset']).toMatch(/^[1-9]\d*$/);
    });

    it('POST /v1/todos with only todos:read → 403 naming todos:write', async () => {
      const res = await api().post('/v1/todos').set('X-API-Key', readKey).send({ title: 'not allowed' });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(errorBody('forbidden', expect.stringContaining('todos:write')));
      expect(res.headers['www-authenticate']).toBeUndefined();
      // refused calls count against the key's limit too, and say so
      expect(res.headers['ratelimit-limit']).toBe('60');
      expect(Number(res.headers['ratelimit-remaining'])).toBeLessThan(60);
    });

    it('orders take orders:read / orders:write like every other collection', async () => {
      const ordersKey = (await createKey(alice, ['orders:read', 'orders:write'])).key;
      const created = await api()
        .post('/v1/orders')
        .set('X-API-Key', ordersKey)
        .send({ currency: 'EUR', items: [{ sku: 'A-1', quantity: 2, unit_price_cents: 150 }] });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ user: alice.user.id, total_cents: 300, status: 'pending' });
      const read = await api().get(`/v1/orders/${created.body.id}`).set('X-API-Key', ordersKey);
      expect(read.status).toBe(200);
      const todos = await api().get('/v1/todos').set('X-API-Key', ordersKey);
      expect(todos.status).toBe(403);
      expect(todos.body).toEqual(errorBody('forbidden', expect.stringContaining('todos:read')));
    });

    it('a users:read key on /v1/todos → 403 naming todos:read; on /v1/users/{id} → 200', async () => {
      const res = await api().get('/v1/todos').set('X-API-Key', usersKey);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(errorBody('forbidden', expect.stringContaining('todos:read')));
      const user = await api().get(`/v1/users/${alice.user.id}`).set('X-API-Key', usersKey);
      expect(user.status).toBe(200);
      expect(user.body.id).toBe(alice.user.id);
      const write = await api().patch(`/v1/users/${alice.user.id}`).set('X-API-Key', usersKey).send({ name: 'Renamed' });
      expect(write.status).toBe(403);
      expect(write.body).toEqual(errorBody('forbidden', expect.stringContaining('users:write')));
    });

    it('acts as its user: the todo it creates is owned by the key user; another user’s todo → 403', async () => {
      const created = await api().post('/v1/todos').set('X-API-Key', readWriteKey).send({ title: 'via key' });
      expect(created.status).toBe(201);
      expect(created.body.owner).toBe(alice.user.id);

      const bobs = await api().post('/v1/todos').set('Authorization', bearer(bob.token)).send({ title: 'bob only' });
      expect(bobs.status).toBe(201);
      const foreign = await api().get(`/v1/todos/${bobs.body.id}`).set('X-API-Key', readWriteKey);
      expect(foreign.status).toBe(403);
      expect(foreign.body).toEqual(errorBody('forbidden'));
      expect(foreign.headers['ratelimit-limit']).toBe('60'); // every response past authentication carries the headers
      const foreignWrite = await api().patch(`/v1/todos/${bobs.body.id}`).set('X-API-Key', readWriteKey).send({ status: 'done' });
      expect(foreignWrite.status).toBe(403);

      const list = await api().get('/v1/todos').set('X-API-Key', readWriteKey);
      expect(list.status).toBe(200);
      expect(list.body.data.map((t: { id: number }) => t.id)).toContain(created.body.id);
      expect(list.body.data.every((t: { owner: number }) => t.owner === alice.user.id)).toBe(true);
    });

    it('keys cannot manage keys: GET, POST and DELETE /v1/api-keys with X-API-Key → 403', async () => {
      const own = await createKey(alice, ['todos:read']);
      const responses = [
        await api().get('/v1/api-keys').set('X-API-Key', readWriteKey),
        await api()
          .post('/v1/api-keys')
          .set('X-API-Key', readWriteKey)
          .send({ name: 'child', scopes: ['todos:read'] }),
        await api().delete(`/v1/api-keys/${own.id}`).set('X-API-Key', readWriteKey),
      ];
      for (const res of responses) {
        expect(res.status).toBe(403);
        expect(res.body).toEqual(errorBody('forbidden', expect.stringMatching(/API keys/)));
      }
      // nothing was revoked
      expect((await api().get('/v1/todos').set('X-API-Key', own.key)).status).toBe(200);
    });

    it.each([
      ['an unknown key', UNKNOWN_KEY],
      ['a malformed key', 'not-a-key'],
      ['a key with a wrong prefix', `xx_${'A'.repeat(43)}`],
      ['an empty key', ''],
    ])('answers %s with 401', async (_case, key) => {
      const res = await api().get('/v1/todos').set('X-API-Key', key);
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="api"/);
      expect(res.body).toEqual(errorBody('unauthorized'));
      // a refused key is an anonymous caller: counted per client address, not as a key (docs/limits.md#rates)
      expect(res.headers['ratelimit-policy']).toMatch(/^"anonymous";q=\d+;w=60$/);
    });

    it('answers an expired key with 401', async () => {
      const key = await createKey(alice, ['todos:read'], { expires_at: new Date(Date.now() + 3_600_000).toISOString() });
      expect((await api().get('/v1/todos').set('X-API-Key', key.key)).status).toBe(200);
      await app
        .get(DataSource)
        .getRepository(ApiKey)
        .update({ id: key.id }, { expires_at: new Date(Date.now() - 1000) });
      const res = await api().get('/v1/todos').set('X-API-Key', key.key);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(errorBody('unauthorized'));
    });

    it('revokes a key: DELETE /v1/api-keys/{id} → 204, then the key → 401 and a second DELETE → 404', async () => {
      const key = await createKey(alice, ['todos:read']);
      expect((await api().get('/v1/todos').set('X-API-Key', key.key)).status).toBe(200);
      const del = await api().delete(`/v1/api-keys/${key.id}`).set('Authorization', bearer(alice.token));
      expect(del.status).toBe(204);
      expect(del.text).toBe('');
      const res = await api().get('/v1/todos').set('X-API-Key', key.key);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(errorBody('unauthorized'));
      const again = await api().delete(`/v1/api-keys/${key.id}`).set('Authorization', bearer(alice.token));
      expect(again.status).toBe(404);
      expect(again.body).toEqual(errorBody('not_found'));
      const list = await api().get('/v1/api-keys').set('Authorization', bearer(alice.token));
      expect(list.body.data.map((k: { id: number }) => k.id)).not.toContain(key.id);
    });

    it("answers DELETE of another user's key with 404 and leaves the key working", async () => {
      const key = await createKey(alice, ['todos:read']);
      const res = await api().delete(`/v1/api-keys/${key.id}`).set('Authorization', bearer(bob.token));
      expect(res.status).toBe(404);
      expect(res.body).toEqual(errorBody('not_found'));
      expect((await api().get('/v1/todos').set('X-API-Key', key.key)).status).toBe(200);
    });

    it('answers DELETE with a bad id with 400', async () => {
      const res = await api().delete('/v1/api-keys/abc').set('Authorization', bearer(alice.token));
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('bad_request');
    });

    it('sets last_used_at when the key is used', async () => {
      const key = await createKey(alice, ['todos:read']);
      expect(key.last_used_at).toBeNull();
      const before = Date.now();
      expect((await api().get('/v1/todos').set('X-API-Key', key.key)).status).toBe(200);
      const list = await api().get('/v1/api-keys').set('Authorization', bearer(alice.token));
      const listed = list.body.data.find((k: { id: number }) => k.id === key.id);
      expect(listed.last_used_at).toMatch(ISO_MS);
      expect(new Date(listed.last_used_at).getTime()).toBeGreaterThanOrEqual(before - 1000);
      expect(new Date(listed.last_used_at).getTime()).toBeLessThanOrEqual(Date.now());
      const row = await app.get(DataSource).getRepository(ApiKey).findOneByOrFail({ id: key.id });
      expect(row.last_used_at).toBeInstanceOf(Date);
    });

    it('Bearer wins over X-API-Key: a valid bearer with a junk key → 200 as the bearer user', async () => {
      const todos = await api().get('/v1/todos').set('Authorization', bearer(bob.token)).set('X-API-Key', 'junk');
      expect(todos.status).toBe(200);
      expect(todos.body.data.length).toBeGreaterThan(0);
      expect(todos.body.data.every((t: { owner: number }) => t.owner === bob.user.id)).toBe(true);
      // counted as the bearer user, not as a key
      expect(todos.headers['ratelimit-policy']).toMatch(/^"user";/);
      // an API key would get 403 here: the bearer decided
      const keys = await api().get('/v1/api-keys').set('Authorization', bearer(bob.token)).set('X-API-Key', readWriteKey);
      expect(keys.status).toBe(200);
    });

    it('Bearer wins over X-API-Key: a junk bearer with a valid key → 401', async () => {
      const res = await api().get('/v1/todos').set('Authorization', 'Bearer junk.token.here').set('X-API-Key', readWriteKey);
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="api", error="invalid_token"');
      expect(res.body).toEqual(errorBody('unauthorized'));
    });

    it('never accepts the key in the query string (400)', async () => {
      const res = await api().get(`/v1/todos?api_key=${readKey}`);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('bad_request');
    });
  });

  describe('OpenAPI security schemes (docs/authentication.md#overview, README.md#api-documentation-and-clients)', () => {
    it('declares bearer, api_key, session and oauth2; protected operations list the first three (plus oauth2 with a scope), public ones none', async () => {
      const res = await api().get('/docs/v1/openapi.json');
      expect(res.status).toBe(200);
      const doc = res.body;
      expect(doc.components.securitySchemes).toEqual({
        bearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
        api_key: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
        session: expect.objectContaining({ type: 'apiKey', in: 'cookie', name: 'sid' }),
        oauth2: expect.objectContaining({
          type: 'oauth2',
          flows: { authorizationCode: expect.objectContaining({ authorizationUrl: '/v1/oauth/authorize', tokenUrl: '/v1/oauth/token' }) },
        }),
      });
      const alternatives = [{ bearer: [] }, { api_key: [] }, { session: [] }];
      expect(doc.security).toBeUndefined();
      for (const [path, method] of [
        ['/v1/todos', 'get'],
        ['/v1/todos', 'post'],
        ['/v1/todos/{id}', 'delete'],
        ['/v1/api-keys', 'get'],
        ['/v1/users/{id}', 'get'],
      ]) {
        expect({ path, method, security: doc.paths[path][method].security }).toEqual({ path, method, security: expect.arrayContaining(alternatives) });
        expect(doc.paths[path][method].security.filter((requirement: object) => !('oauth2' in requirement))).toHaveLength(3);
      }
      for (const [path, method] of [
        ['/v1/login', 'post'],
        ['/v1/users', 'post'],
        ['/v1/sessions', 'post'],
        ['/v1/refresh', 'post'],
      ]) {
        expect({ path, method, security: doc.paths[path][method].security }).toEqual({ path, method, security: undefined });
        expect(doc.paths[path][method]).not.toHaveProperty('x-public');
      }
    });
  });
});

describe('API-key rate limit (docs/limits.md#rates), RATE_LIMIT_PER_MINUTE=5', () => {
  let app: NestExpressApplication;
  let restoreEnv: () => void;
  let owner: { token: string; user: { id: number } };
  let todoId: number;
  const api = () => request(app.getHttpServer());

  async function newKey(): Promise<string> {
    const res = await api()
      .post('/v1/api-keys')
      .set('Authorization', bearer(owner.token))
      .send({ name: 'limited', scopes: ['todos:read'] });
    expect(res.status).toBe(201);
    return res.body.key;
  }

  beforeAll(async () => {
    const fresh = await loadFreshApp({ RATE_LIMIT_PER_MINUTE: '5' });
    restoreEnv = fresh.restoreEnv;
    app = await fresh.createTestApp();
    owner = await fresh.createUser(app);
    const todo = await api().post('/v1/todos').set('Authorization', bearer(owner.token)).send({ title: 'rate limited reads' });
    expect(todo.status).toBe(201);
    todoId = todo.body.id;
  });
  afterAll(async () => {
    await app?.close();
    restoreEnv?.();
  });

  it('counts per key across operations: 5 requests → 200 with RateLimit headers counting down, the 6th → 429 with Retry-After; another key of the user is unaffected; bearer calls count in the user policy', async () => {
    const key = await newKey();
    // different operations, one budget: the limit is per key, not per key and route
    const paths = ['/v1/todos', `/v1/todos/${todoId}`, '/v1/todos', `/v1/todos/${todoId}`, '/v1/todos'];
    for (const [i, path] of paths.entries()) {
      const res = await api().get(path).set('X-API-Key', key);
      expect({ i, status: res.status }).toEqual({ i, status: 200 });
      expect(res.headers['ratelimit-limit']).toBe('5');
      expect(res.headers['ratelimit-remaining']).toBe(String(4 - i));
      expect(res.headers['ratelimit-reset']).toMatch(/^[1-9]\d*$/);
      expect(Number(res.headers['ratelimit-reset'])).toBeLessThanOrEqual(60);
    }

    const limited = await api().get(`/v1/todos/${todoId}`).set('X-API-Key', key);
    expect(limited.status).toBe(429);
    expect(limited.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(limited.body).toEqual(errorBody('rate_limited'));
    expect(limited.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(limited.headers['ratelimit-limit']).toBe('5');
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    expect(limited.headers['ratelimit-reset']).toMatch(/^[1-9]\d*$/);
    expect(limited.headers['retry-after-default']).toBeUndefined();
    expect((await api().get('/v1/todos').set('X-API-Key', key)).status).toBe(429);

    // a second key of the same user (same client address) has its own budget
    const second = await newKey();
    const other = await api().get('/v1/todos').set('X-API-Key', second);
    expect(other.status).toBe(200);
    expect(other.headers['ratelimit-limit']).toBe('5');
    expect(other.headers['ratelimit-remaining']).toBe('4');

    // bearer requests of the same user count in the user's own policy (docs/limits.md#rates), not the key's
    for (let i = 0; i < 7; i += 1) {
      const res = await api().get('/v1/todos').set('Authorization', bearer(owner.token));
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-policy']).toMatch(/^"user";q=\d+;w=60$/);
      expect(res.headers['ratelimit-limit']).not.toBe('5');
    }
    // and the key's responses carry the draft-10 fields too
    const drafted = await api().get('/v1/todos').set('X-API-Key', second);
    expect(drafted.headers['ratelimit-policy']).toBe('"api_key";q=5;w=60');
    expect(drafted.headers.ratelimit).toMatch(/^"api_key";r=3;t=\d+$/);
  });
});
