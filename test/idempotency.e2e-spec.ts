import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource, LessThanOrEqual, MoreThan } from 'typeorm';
import { ApiKey } from '../src/auth/api-key.entity.js';
import { IdempotencyRecord } from '../src/idempotency/idempotency-record.entity.js';
import { IdempotencyRecords } from '../src/idempotency/idempotency-records.js';
import { ADVISORY_LOCK_KEYS } from '../src/database/advisory-lock.js';
import { storeKeys } from '../src/idempotency/idempotency-key.js';
import { Order } from '../src/orders/order.entity.js';
import { SharedStore } from '../src/store/shared-store.js';
import { Todo } from '../src/todos/todo.entity.js';
import { User } from '../src/users/user.entity.js';
import { bearer, type CreatedUser, createUser } from './factories/user.factory.js';
import { errorBody } from './setup/error-body.js';
import { createTestApp } from './setup/test-app.js';

/** The ErrorResp of a refused Idempotency-Key: the code, one detail naming the header. */
const keyError = (code: string) => ({ ...errorBody(code), details: [{ field: 'Idempotency-Key', message: expect.any(String) }] });

let counter = 0;
/** A fresh key per test (UUID-like, as clients should send). */
const newKey = () => `test-${process.pid}-${Date.now()}-${++counter}`;

describe('Idempotency-Key (draft-ietf-httpapi-idempotency-key-header, docs/writes.md)', () => {
  let app: NestExpressApplication;
  let dataSource: DataSource;
  let alice: CreatedUser;
  let bob: CreatedUser;

  const http = () => request(app.getHttpServer());
  const postAs = (caller: CreatedUser, path: string, body: object, key?: string | string[]) => {
    const req = http().post(path).set('Authorization', bearer(caller.token));
    if (key !== undefined) req.set('Idempotency-Key', key as string);
    return req.send(body);
  };
  const todoCount = (owner: CreatedUser) => dataSource.getRepository(Todo).countBy({ owner_id: owner.user.id });

  beforeAll(async () => {
    app = await createTestApp();
    dataSource = app.get(DataSource);
    alice = await createUser(app);
    bob = await createUser(app);
  });
  afterAll(async () => {
    await app.close();
  });

  describe('replay', () => {
    it('the same key and request: the stored 201 again, byte for byte, with Idempotent-Replayed; one row', async () => {
      const key = newKey();
      const before = await todoCount(alice);
      const first = await postAs(alice, '/v1/todos', { title: 'Buy milk', content: 'Two litres' }, key);
      expect(first.status).toBe(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      expect(first.headers.location).toBe(`/v1/todos/${first.body.id}`);

      const again = await postAs(alice, '/v1/todos', { title: 'Buy milk', content: 'Two litres' }, key);
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.headers.location).toBe(first.headers.location);
      expect(again.headers['content-type']).toBe(first.headers['content-type']);
      expect(again.headers.etag).toBe(first.headers.etag);
      expect(first.headers['cache-control']).toBe('private, no-cache');
      expect(again.headers['cache-control']).toBe(first.headers['cache-control']);
      expect(again.headers.vary).toBe(first.headers.vary);
      expect(again.text).toBe(first.text);
      expect(await todoCount(alice)).toBe(before + 1);
    });

    it('the record is kept with the write: a retry after the shared store lost everything (Redis restarted empty, a process restarted) is still a replay', async () => {
      const key = newKey();
      const before = await todoCount(alice);
      const first = await postAs(alice, '/v1/todos', { title: 'Kept with the write' }, key);
      expect(first.status).toBe(201);
      await app.get(SharedStore).clear();
      const again = await postAs(alice, '/v1/todos', { title: 'Kept with the write' }, key);
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(first.text);
      expect(await todoCount(alice)).toBe(before + 1);
      // the record is a row of its own, committed with the todo
      const row = await dataSource.getRepository(IdempotencyRecord).findOneBy({ key_hash: storeKeys(`user:${alice.user.id}`, key).digest });
      expect(row?.expires_at.getTime()).toBeGreaterThan(Date.now());
    });

    it('the same JSON with other key order and white space is the same request', async () => {
      const key = newKey();
      const first = await postAs(alice, '/v1/todos', { title: 'Order', content: 'x', status: 'pending' }, key);
      expect(first.status).toBe(201);
      const again = await http()
        .post('/v1/todos')
        .set('Authorization', bearer(alice.token))
        .set('Idempotency-Key', key)
        .set('Content-Type', 'application/json')
        .send('{ "status": "pending",\n  "content": "x", "title": "Order" }');
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(first.text);
    });

    it('without the header nothing is stored: two POSTs create two rows', async () => {
      const before = await todoCount(alice);
      const one = await postAs(alice, '/v1/todos', { title: 'Twice' });
      const two = await postAs(alice, '/v1/todos', { title: 'Twice' });
      expect([one.status, two.status]).toEqual([201, 201]);
      expect(two.body.id).not.toBe(one.body.id);
      expect(two.headers['idempotent-replayed']).toBeUndefined();
      expect(await todoCount(alice)).toBe(before + 2);
    });

    it('keys of one caller are invisible to another: the same key makes a fresh row for bob', async () => {
      const key = newKey();
      const mine = await postAs(alice, '/v1/todos', { title: 'Mine' }, key);
      const his = await postAs(bob, '/v1/todos', { title: 'Mine' }, key);
      expect([mine.status, his.status]).toEqual([201, 201]);
      expect(his.headers['idempotent-replayed']).toBeUndefined();
      expect(his.body.id).not.toBe(mine.body.id);
      expect(his.body.owner).toBe(bob.user.id);
      // and bob's different body is his own first request, not a mismatch with alice's
      const other = await postAs(bob, '/v1/tags', { name: `bobs-${counter}` }, newKey());
      expect(other.status).toBe(201);
    });

    it('an API key is a caller of its own: the key used by its user is fresh for the API key', async () => {
      const created = await postAs(alice, '/v1/api-keys', { name: 'writer', scopes: ['todos:write', 'todos:read'] });
      expect(created.status).toBe(201);
      const key = newKey();
      const byUser = await postAs(alice, '/v1/todos', { title: 'Scoped' }, key);
      const byKey = await http().post('/v1/todos').set('X-API-Key', created.body.key).set('Idempotency-Key', key).send({ title: 'Scoped' });
      expect([byUser.status, byKey.status]).toEqual([201, 201]);
      expect(byKey.headers['idempotent-replayed']).toBeUndefined();
      expect(byKey.body.id).not.toBe(byUser.body.id);
      const replay = await http().post('/v1/todos').set('X-API-Key', created.body.key).set('Idempotency-Key', key).send({ title: 'Scoped' });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body.id).toBe(byKey.body.id);
    });
  });

  describe('mismatch', () => {
    it('the same key with another body → 422 naming Idempotency-Key, nothing written', async () => {
      const key = newKey();
      expect((await postAs(alice, '/v1/todos', { title: 'First' }, key)).status).toBe(201);
      const before = await todoCount(alice);
      const res = await postAs(alice, '/v1/todos', { title: 'Second' }, key);
      expect(res.status).toBe(422);
      expect(res.body).toEqual(keyError('validation_failed'));
      expect(res.headers['idempotent-replayed']).toBeUndefined();
      expect(await todoCount(alice)).toBe(before);
    });

    it('the same key on another operation (path) → 422', async () => {
      const key = newKey();
      expect((await postAs(alice, '/v1/todos', { title: 'Tagged' }, key)).status).toBe(201);
      const res = await postAs(alice, '/v1/tags', { name: 'tagged' }, key);
      expect(res.status).toBe(422);
      expect(res.body).toEqual(keyError('validation_failed'));
    });

    it('the same key on the other API version → 422 (another representation, another request)', async () => {
      const key = newKey();
      expect((await postAs(alice, '/v1/articles', { title: 'Versioned' }, key)).status).toBe(201);
      const v2 = await postAs(alice, '/v2/articles', { title: 'Versioned' }, key);
      expect(v2.status).toBe(422);
      expect(v2.body).toEqual(keyError('validation_failed'));
      const v1 = await postAs(alice, '/v1/articles', { title: 'Versioned' }, key);
      expect(v1.headers['idempotent-replayed']).toBe('true');
    });
  });

  describe('malformed keys → 400 naming the header', () => {
    it.each([
      ['empty', ''],
      ['256 characters', 'k'.repeat(256)],
      ['not ASCII', 'caf\u00e9'],
      ['sent twice', ['one', 'two']],
    ])('%s', async (_name, key) => {
      const before = await todoCount(alice);
      const res = await postAs(alice, '/v1/todos', { title: 'Bad key' }, key);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(keyError('bad_request'));
      expect(await todoCount(alice)).toBe(before);
    });

    it('255 printable characters, spaces and quotes included, are a key', async () => {
      const key = `"${'a b~'.repeat(63)}!"`.slice(0, 255);
      expect(key).toHaveLength(255);
      const first = await postAs(alice, '/v1/todos', { title: 'Long key' }, key);
      expect(first.status).toBe(201);
      const again = await postAs(alice, '/v1/todos', { title: 'Long key' }, key);
      expect(again.headers['idempotent-replayed']).toBe('true');
    });
  });

  describe('errors are not stored: the key stays usable', () => {
    it('a 422 then the corrected request with the same key → 201, then replays', async () => {
      const key = newKey();
      const bad = await postAs(alice, '/v1/todos', { title: 'x'.repeat(201) }, key);
      expect(bad.status).toBe(422);
      expect(bad.body.code).toBe('validation_failed');
      const again = await postAs(alice, '/v1/todos', { title: 'x'.repeat(201) }, key);
      expect(again.status).toBe(422);
      expect(again.headers['idempotent-replayed']).toBeUndefined();
      const good = await postAs(alice, '/v1/todos', { title: 'Fixed' }, key);
      expect(good.status).toBe(201);
      expect(good.headers['idempotent-replayed']).toBeUndefined();
      const replay = await postAs(alice, '/v1/todos', { title: 'Fixed' }, key);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body.id).toBe(good.body.id);
    });

    it('a 400 (unknown property) does not burn the key either', async () => {
      const key = newKey();
      const bad = await postAs(alice, '/v1/todos', { title: 'T', colour: 'red' }, key);
      expect(bad.status).toBe(400);
      const good = await postAs(alice, '/v1/todos', { title: 'T' }, key);
      expect(good.status).toBe(201);
    });

    it('a 401 runs before the key is looked at', async () => {
      const res = await http().post('/v1/todos').set('Idempotency-Key', '').send({ title: 'anon' });
      expect(res.status).toBe(401);
    });
  });

  describe('the same key sent 30 times at once', () => {
    it('while the shared store keeps losing its locks (Redis restarted empty mid-request): still exactly one row, every 201 the same response', async () => {
      const key = newKey();
      const before = await todoCount(alice);
      const store = app.get(SharedStore);
      let clearing = true;
      const clearer = (async () => {
        while (clearing) {
          await store.clear();
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      const responses = await Promise.all(Array.from({ length: 30 }, () => postAs(alice, '/v1/todos', { title: 'Raced, locks lost' }, key)));
      clearing = false;
      await clearer;
      expect(await todoCount(alice)).toBe(before + 1);
      const created = responses.filter((res) => res.status === 201);
      expect(created.length + responses.filter((res) => res.status === 409).length).toBe(30);
      expect(new Set(created.map((res) => res.text)).size).toBe(1);
    });

    it('exactly one row; every answer is the first response replayed or 409 with Retry-After', async () => {
      const key = newKey();
      const before = await todoCount(alice);
      const responses = await Promise.all(Array.from({ length: 30 }, () => postAs(alice, '/v1/todos', { title: 'Raced' }, key)));
      expect(await todoCount(alice)).toBe(before + 1);
      const created = responses.filter((res) => res.status === 201);
      const conflicts = responses.filter((res) => res.status === 409);
      expect(created.length + conflicts.length).toBe(30);
      const fresh = created.filter((res) => res.headers['idempotent-replayed'] === undefined);
      expect(fresh).toHaveLength(1);
      for (const res of created) expect(res.text).toBe(fresh[0].text);
      for (const res of conflicts) {
        expect(res.body).toEqual(keyError('conflict'));
        expect(res.headers['retry-after']).toBe('1');
      }
      // afterwards every retry is a replay
      const later = await postAs(alice, '/v1/todos', { title: 'Raced' }, key);
      expect(later.headers['idempotent-replayed']).toBe('true');
      expect(later.text).toBe(fresh[0].text);
    });
  });

  describe('operations', () => {
    it('PATCH of an order status: replayed, not a second transition (which would be 409)', async () => {
      const order = await postAs(alice, '/v1/orders', { items: [{ sku: 'A-1', quantity: 1, unit_price_cents: 100 }], currency: 'EUR' });
      expect(order.status).toBe(201);
      const key = newKey();
      const patch = () =>
        http().patch(`/v1/orders/${order.body.id}`).set('Authorization', bearer(alice.token)).set('Idempotency-Key', key).send({ status: 'paid' });
      const paid = await patch();
      expect(paid.status).toBe(200);
      expect(paid.body.status).toBe('paid');
      const again = await patch();
      expect(again.status).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(paid.text);
      const without = await http().patch(`/v1/orders/${order.body.id}`).set('Authorization', bearer(alice.token)).send({ status: 'paid' });
      expect(without.status).toBe(409);
      expect((await dataSource.getRepository(Order).findOneByOrFail({ id: order.body.id })).status).toBe('paid');
    });

    it('registration (no credential): replayed for the same address and body; one user', async () => {
      const key = newKey();
      const body = { username: `idem_${process.pid}`, password: 'correct-horse-battery', name: 'Idem' };
      const first = await http().post('/v1/users').set('Idempotency-Key', key).send(body);
      expect(first.status).toBe(201);
      const again = await http().post('/v1/users').set('Idempotency-Key', key).send(body);
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(first.text);
      expect(await dataSource.getRepository(User).countBy({ username: body.username })).toBe(1);
      const other = await http()
        .post('/v1/users')
        .set('Idempotency-Key', key)
        .send({ ...body, username: `idem2_${process.pid}` });
      expect(other.status).toBe(422);
      expect(other.body).toEqual(keyError('validation_failed'));
      // without a key, the retry is what it always was: the username is taken
      expect((await http().post('/v1/users').send(body)).status).toBe(409);
    });

    it('API key creation: the replay carries the same secret; the database holds it only encrypted', async () => {
      const key = newKey();
      const before = await dataSource.getRepository(ApiKey).countBy({ user_id: alice.user.id });
      const first = await postAs(alice, '/v1/api-keys', { name: 'retried key', scopes: ['todos:read'] }, key);
      expect(first.status).toBe(201);
      const again = await postAs(alice, '/v1/api-keys', { name: 'retried key', scopes: ['todos:read'] }, key);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.key).toBe(first.body.key);
      expect(await dataSource.getRepository(ApiKey).countBy({ user_id: alice.user.id })).toBe(before + 1);
      const stored = (await dataSource.getRepository(IdempotencyRecord).findOneBy({ key_hash: storeKeys(`user:${alice.user.id}`, key).digest }))?.response;
      expect(stored).toEqual(expect.any(String));
      expect(stored).not.toContain(first.body.key);
      expect(stored).not.toContain('retried key');
      expect(Buffer.from(stored!, 'base64url').toString('latin1')).not.toContain(first.body.key);
    });

    it('a POST that creates nothing ignores the header: two logins, two token pairs', async () => {
      const key = newKey();
      const login = () => http().post('/v1/login').set('Idempotency-Key', key).send({ username: alice.user.username, password: 'password-123' });
      const one = await login();
      const two = await login();
      expect([one.status, two.status]).toEqual([200, 200]);
      expect(two.headers['idempotent-replayed']).toBeUndefined();
      expect(two.body.refresh_token).not.toBe(one.body.refresh_token);
    });
  });

  describe('the records in the database', () => {
    const records = () => dataSource.getRepository(IdempotencyRecord);
    const onPostgres = dataSource?.options.type === 'postgres' || /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '');

    /** The plan of `sql` as text: PostgreSQL's EXPLAIN, SQLite's EXPLAIN QUERY PLAN. */
    const plan = async (sql: string, parameters: unknown[]) => {
      if (onPostgres) return JSON.stringify(await dataSource.query(`EXPLAIN (FORMAT JSON) ${sql}`, parameters));
      return JSON.stringify(await dataSource.query(`EXPLAIN QUERY PLAN ${sql}`, parameters));
    };

    it('expired records are not replayed, and pruning deletes exactly them; the lookup and the pruning use an index (EXPLAIN)', async () => {
      const now = new Date();
      const rows = Array.from({ length: 4000 }, (_, i) => ({
        key_hash: `${i % 2 === 0 ? 'e' : 'f'}${String(i).padStart(63, '0')}`,
        fingerprint: 'x'.repeat(64),
        response: 'sealed',
        created_at: new Date(now.getTime() - 100_000),
        expires_at: new Date(now.getTime() + (i % 2 === 0 ? -50_000 : 50_000)),
      }));
      for (let i = 0; i < rows.length; i += 200) await records().insert(rows.slice(i, i + 200));
      if (onPostgres) await dataSource.query('ANALYZE idempotency_keys');
      else await dataSource.query('ANALYZE');
      const store = app.get(IdempotencyRecords);
      expect(await store.find(rows[0].key_hash, now)).toBeNull();
      expect(await store.find(rows[1].key_hash, now)).toEqual({ fingerprint: 'x'.repeat(64), response: 'sealed' });

      const [lookup, lookupParameters] = records()
        .createQueryBuilder()
        .setFindOptions({ select: { fingerprint: true, response: true }, where: { key_hash: rows[1].key_hash, expires_at: MoreThan(now) } })
        .getQueryAndParameters();
      const [expired, expiredParameters] = records()
        .createQueryBuilder()
        .setFindOptions({ select: { key_hash: true }, where: { expires_at: LessThanOrEqual(now) }, order: { expires_at: 'ASC' }, take: 1000 })
        .getQueryAndParameters();
      const lookupPlan = await plan(lookup, lookupParameters);
      const expiredPlan = await plan(expired, expiredParameters);
      if (onPostgres) {
        expect(lookupPlan).toContain('Index Scan');
        expect(lookupPlan).toMatch(/"Index Cond":"\(\(key_hash\)/);
        expect(expiredPlan).toContain('idx_idempotency_keys_expires_at');
        expect(expiredPlan).not.toContain('Seq Scan');
      } else {
        expect(lookupPlan).toMatch(/USING INDEX sqlite_autoindex_idempotency_keys_1|USING PRIMARY KEY/);
        expect(expiredPlan).toContain('idx_idempotency_keys_expires_at');
        expect(expiredPlan).not.toContain('TEMP B-TREE');
      }

      const before = await records().count();
      expect(await store.prune(now)).toBe(2000);
      expect(await records().count()).toBe(before - 2000);
      expect(await records().countBy({ expires_at: LessThanOrEqual(now) })).toBe(0);
    });

    (onPostgres ? it : it.skip)(
      'on PostgreSQL a pruning run deletes nothing while another connection holds the pruning lock (pg_try_advisory_xact_lock); once released it prunes',
      async () => {
        const now = new Date();
        await records().insert(
          Array.from({ length: 3 }, (_, i) => ({
            key_hash: `a${String(i).padStart(63, '0')}`,
            fingerprint: 'x'.repeat(64),
            response: 'sealed',
            created_at: new Date(now.getTime() - 100_000),
            expires_at: new Date(now.getTime() - 50_000),
          })),
        );
        const store = app.get(IdempotencyRecords);
        const other = dataSource.createQueryRunner();
        await other.connect();
        try {
          await other.startTransaction();
          expect(await other.query('SELECT pg_try_advisory_xact_lock($1) AS locked', [ADVISORY_LOCK_KEYS.idempotencyPruning])).toEqual([{ locked: true }]);
          expect(await store.prune(now)).toBe(0);
          await other.commitTransaction();
        } finally {
          await other.release();
        }
        expect(await store.prune(now)).toBe(3);
        expect(await records().countBy({ expires_at: LessThanOrEqual(now) })).toBe(0);
      },
    );
  });
});
