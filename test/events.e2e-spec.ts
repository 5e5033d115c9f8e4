import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { EventRecord } from '../src/events/event.entity.js';
import { EventRetention } from '../src/events/event-retention.js';
import { ADVISORY_LOCK_KEYS } from '../src/database/advisory-lock.js';
import { bearer, type CreatedUser, createUser } from './factories/user.factory.js';
import { errorBody } from './setup/error-body.js';
import { createTestApp, truncateAll } from './setup/test-app.js';
import { ISO_MS } from './setup/formats.js';

const EVENT_ID = /^evt_[0-9a-f]{32}$/;

/**
 * The event log (docs/events.md): every write emits its event once, in its transaction (a refused
 * or failed write emits nothing); `GET /v1|v2/events` shows the caller's own events (all for
 * admins) with `data` in the served version's shape, cursor-paged, filtered by type and
 * `created_at`; malformed ids are 400, unseen ones 404; API keys need `events:read`; old events are pruned.
 */
describe('events (outbox and event log)', () => {
  let app: NestExpressApplication;
  let alice: CreatedUser;
  let bob: CreatedUser;
  let admin: CreatedUser;
  const http = () => request(app.getHttpServer());
  const as = (who: CreatedUser) => ({
    get: (path: string) => http().get(path).set('Authorization', bearer(who.token)),
    post: (path: string, body: object) => http().post(path).set('Authorization', bearer(who.token)).send(body),
    patch: (path: string, body: object) => http().patch(path).set('Authorization', bearer(who.token)).send(body),
    delete: (path: string) => http().delete(path).set('Authorization', bearer(who.token)),
  });

  /** Every event `who` sees through `/v<version>/events` (walking the cursor), oldest first. */
  async function allEvents(who: CreatedUser, version = '1', query = ''): Promise<Array<Record<string, any>>> {
    const items: Array<Record<string, any>> = [];
    let path: string | undefined = `/v${version}/events?size=100${query}`;
    while (path) {
      const res = await as(who).get(path);
      expect(res.status).toBe(200);
      items.push(...res.body.data);
      path = res.body.next_cursor ? `/v${version}/events?size=100${query}&cursor=${encodeURIComponent(res.body.next_cursor)}` : undefined;
    }
    return items;
  }

  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(async () => {
    await app.close();
  });
  beforeEach(async () => {
    await truncateAll(app);
    alice = await createUser(app);
    bob = await createUser(app);
    admin = await createUser(app, { role: 'admin' });
  });

  it('every event type once per write, in order, with its owner and data in both shapes', async () => {
    const todo = (await as(alice).post('/v1/todos', { title: 'Buy milk' })).body;
    expect((await as(alice).patch(`/v1/todos/${todo.id}`, { status: 'done' })).status).toBe(200);
    expect((await as(alice).delete(`/v1/todos/${todo.id}`)).status).toBe(204);
    const article = (await as(alice).post('/v1/articles', { title: 'Outbox' })).body;
    expect((await as(alice).patch(`/v1/articles/${article.id}`, { status: 'published' })).status).toBe(200);
    const comment = (await as(bob).post(`/v1/articles/${article.id}/comments`, { body: 'Nice' })).body;
    expect((await as(bob).patch(`/v1/articles/${article.id}/comments/${comment.id}`, { body: 'Very nice' })).status).toBe(200);
    expect((await as(bob).delete(`/v1/articles/${article.id}/comments/${comment.id}`)).status).toBe(204);
    expect((await as(alice).delete(`/v1/articles/${article.id}`)).status).toBe(204);
    const order = (await as(alice).post('/v1/orders', { currency: 'EUR', items: [{ sku: 'A-1', quantity: 1, unit_price_cents: 100 }] })).body;
    expect((await as(alice).patch(`/v1/orders/${order.id}`, { items: [{ sku: 'A-1', quantity: 2, unit_price_cents: 100 }] })).status).toBe(200);
    for (const status of ['paid', 'shipped', 'delivered']) expect((await as(admin).patch(`/v1/orders/${order.id}`, { status })).status).toBe(200);
    const other = (await as(alice).post('/v1/orders', { currency: 'EUR', items: [{ sku: 'B-1', quantity: 1, unit_price_cents: 5 }] })).body;
    expect((await as(alice).patch(`/v1/orders/${other.id}`, { status: 'cancelled' })).status).toBe(200);
    expect((await as(alice).delete(`/v1/orders/${other.id}`)).status).toBe(204);
    expect((await as(admin).delete(`/v1/users/${bob.user.id}`)).status).toBe(204);

    const events = await allEvents(admin);
    expect(events.map((e) => [e.type, e.data.id])).toEqual([
      ['todo.created', todo.id],
      ['todo.updated', todo.id],
      ['todo.deleted', todo.id],
      ['article.created', article.id],
      ['article.updated', article.id],
      ['article.published', article.id],
      ['comment.created', comment.id],
      ['comment.updated', comment.id],
      ['comment.deleted', comment.id],
      ['article.deleted', article.id],
      ['order.created', order.id],
      ['order.updated', order.id],
      ['order.paid', order.id],
      ['order.shipped', order.id],
      ['order.delivered', order.id],
      ['order.created', other.id],
      ['order.cancelled', other.id],
      ['order.deleted', other.id],
      ['user.deleted', bob.user.id],
    ]);
    for (const e of events) {
      expect(Object.keys(e).sort()).toEqual(['data', 'id', 'links', 'timestamp', 'type']);
      expect(e.id).toMatch(EVENT_ID);
      expect(e.timestamp).toMatch(ISO_MS);
      expect(e.links).toEqual([{ rel: 'self', href: `/v1/events/${e.id}` }]);
    }
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    // data is the resource as GET showed it: after the write, a deletion as it was
    expect(events[1].data).toEqual({ ...todo, status: 'done', updated_at: expect.any(String), links: todo.links });
    expect(events[2].data.status).toBe('done');
    expect(events[11].data).toMatchObject({ total_cents: 200, status: 'pending' });
    expect(events[17].data.status).toBe('cancelled');
    expect(events[18].data).toMatchObject({ id: bob.user.id, username: bob.user.username });

    // visibility: alice sees hers (todo, article, orders), bob is deleted; v2 shapes embed authors
    const mine = await allEvents(alice, '2');
    expect(mine.map((e) => e.type)).toEqual(events.filter((e) => ['todo', 'article', 'order'].includes(e.type.split('.')[0])).map((e) => e.type));
    const published = mine.find((e) => e.type === 'article.published')!;
    expect(published.data.author).toEqual({ id: alice.user.id, username: alice.user.username, name: alice.user.name });
    expect(published.data.links).toContainEqual({ rel: 'self', href: `/v2/articles/${article.id}` });
    expect(published.links).toEqual([{ rel: 'self', href: `/v2/events/${published.id}` }]);
    expect(events.find((e) => e.type === 'article.published')!.data.author).toBe(alice.user.id);
    const commentV2 = (await as(admin).get(`/v2/events/${events[6].id}`)).body;
    expect(commentV2.data.author).toMatchObject({ id: bob.user.id });
    expect(commentV2.data.links).toContainEqual({ rel: 'article', href: `/v2/articles/${article.id}` });
  });

  it('a refused or failed write emits nothing (422 unknown tag, 409 transition, 412 If-Match, 404)', async () => {
    expect((await as(alice).post('/v1/articles', { title: 'Tagged', tags: ['no-such-tag'] })).status).toBe(422);
    const order = (await as(alice).post('/v1/orders', { currency: 'EUR', items: [{ sku: 'A-1', quantity: 1, unit_price_cents: 100 }] })).body;
    expect((await as(alice).patch(`/v1/orders/${order.id}`, { status: 'delivered' })).status).toBe(409);
    expect((await as(alice).patch(`/v1/orders/${order.id}`, { status: 'pending' })).status).toBe(409);
    const todo = (await as(alice).post('/v1/todos', { title: 'x' })).body;
    const stale = await as(alice).patch(`/v1/todos/${todo.id}`, { title: 'y' }).set('If-Match', '"not-the-tag"');
    expect(stale.status).toBe(412);
    expect((await as(bob).delete(`/v1/todos/${todo.id}`)).status).toBe(403);
    expect((await as(alice).delete('/v1/todos/999999')).status).toBe(404);
    expect((await allEvents(admin)).map((e) => e.type)).toEqual(['order.created', 'todo.created']);
  });

  it('30 concurrent writes → 30 events with unique ids', async () => {
    const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => as(alice).post('/v1/todos', { title: `todo ${i}` })));
    expect(responses.map((res) => res.status)).toEqual(Array(30).fill(201));
    const events = await allEvents(alice);
    expect(events).toHaveLength(30);
    expect(new Set(events.map((e) => e.id)).size).toBe(30);
    expect(new Set(events.map((e) => e.data.id))).toEqual(new Set(responses.map((res) => res.body.id)));
  });

  it('GET /events/{id}: owner and admin 200, another user 404; malformed ids 400, never 500', async () => {
    const todo = (await as(alice).post('/v1/todos', { title: 'mine' })).body;
    const [event] = await allEvents(alice);
    const own = await as(alice).get(`/v1/events/${event.id}`);
    expect(own.status).toBe(200);
    expect(own.body).toEqual({
      id: event.id,
      type: 'todo.created',
      timestamp: event.timestamp,
      data: todo,
      links: [{ rel: 'self', href: `/v1/events/${event.id}` }],
    });
    expect((await as(admin).get(`/v1/events/${event.id}`)).status).toBe(200);
    const other = await as(bob).get(`/v1/events/${event.id}`);
    expect(other.status).toBe(404);
    expect(other.body).toEqual(errorBody('not_found', `event ${event.id} not found`));
    expect((await as(bob).get('/v1/events')).body.data).toEqual([]);
    const unknown = await as(admin).get(`/v1/events/evt_${'0'.repeat(32)}`);
    expect(unknown.status).toBe(404);
    for (const id of [
      'evt_zz',
      `evt_${'A'.repeat(32)}`,
      'evt_%00',
      `evt_${'0'.repeat(31)}%00`,
      `evt_${'a'.repeat(5000)}`,
      '1',
      '%E2%80%AE',
      "evt_'%20OR%201=1",
    ]) {
      const res = await as(alice).get(`/v1/events/${id}`);
      expect([id, res.status]).toEqual([id, 400]);
      // a NUL is refused for the whole path before routing (input rules); every other id by the id pipe
      const expected = id.includes('%00')
        ? { field: 'path', message: 'the path contains U+0000' }
        : { field: 'id', message: 'id must be evt_ followed by 32 lower-case hex digits' };
      expect(res.body).toMatchObject({ code: 'bad_request', details: [expected] });
    }
    expect((await http().get(`/v1/events/${event.id}`)).status).toBe(401);
  });

  it('cursor walk visits every event once, in (created_at, id) order, both directions', async () => {
    for (let i = 0; i < 25; i++) expect((await as(alice).post('/v1/todos', { title: `t${i}` })).status).toBe(201);
    const seen: string[] = [];
    let res = await as(alice).get('/v1/events?sort=created_at&size=10');
    expect(res.headers['preference-applied']).toBe('count=exact');
    expect(res.body.total).toBe(25);
    seen.push(...res.body.data.map((e: { id: string }) => e.id));
    while (res.body.next_cursor) {
      res = await as(alice).get(`/v1/events?sort=created_at&size=10&cursor=${encodeURIComponent(res.body.next_cursor)}`);
      expect(res.status).toBe(200);
      expect(res.body.total).toBeUndefined();
      seen.push(...res.body.data.map((e: { id: string }) => e.id));
    }
    const all = await allEvents(alice);
    expect(seen).toEqual(all.map((e) => e.id));
    expect(new Set(seen).size).toBe(25);
    expect(all.map((e) => e.data.title)).toEqual(Array.from({ length: 25 }, (_, i) => `t${i}`));
    const newest = await as(alice).get('/v1/events?sort=-created_at&size=5');
    expect(newest.body.data.map((e: { id: string }) => e.id)).toEqual(seen.slice(-5).reverse());
  });

  it('filters type and created_at ranges; bad values → 400', async () => {
    const todo = (await as(alice).post('/v1/todos', { title: 'a' })).body;
    await as(alice).patch(`/v1/todos/${todo.id}`, { title: 'b' });
    await as(alice).post('/v1/orders', { currency: 'EUR', items: [{ sku: 'A-1', quantity: 1, unit_price_cents: 100 }] });
    const all = await allEvents(alice);
    expect((await allEvents(alice, '1', '&type=todo.updated')).map((e) => e.type)).toEqual(['todo.updated']);
    expect((await allEvents(alice, '1', '&type=todo.created&type=order.created')).map((e) => e.type)).toEqual(['todo.created', 'order.created']);
    const since = all[1].timestamp;
    expect((await allEvents(alice, '1', `&created_at[gte]=${since}`)).map((e) => e.id)).toEqual(all.filter((e) => e.timestamp >= since).map((e) => e.id));
    expect(await allEvents(alice, '1', '&created_at[lt]=2000-01-01T00:00:00Z')).toEqual([]);
    for (const query of [
      'type=todo.exploded',
      'type=',
      'created_at[gte]=yesterday',
      'created_at[gt]=2026-13-45T00:00:00Z',
      'sort=type',
      'sort=data',
      'fields=data',
      'owner=1',
    ]) {
      const res = await as(alice).get(`/v1/events?${query}`);
      expect([query, res.status]).toEqual([query, 400]);
      expect(res.body).toMatchObject({ code: 'bad_request', error: expect.any(String) });
    }
  });

  it('API keys: events:read lists the owner’s events; a key without it → 403; events:write does not exist', async () => {
    await as(alice).post('/v1/todos', { title: 'via key' });
    const key = (await as(alice).post('/v1/api-keys', { name: 'events', scopes: ['events:read'] })).body.key as string;
    const listed = await http().get('/v1/events').set('X-API-Key', key);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((e: { type: string }) => e.type)).toEqual(['todo.created']);
    const todosKey = (await as(alice).post('/v1/api-keys', { name: 'todos', scopes: ['todos:read'] })).body.key as string;
    const refused = await http().get('/v1/events').set('X-API-Key', todosKey);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual(errorBody('forbidden', 'missing scope events:read'));
    const write = await as(alice).post('/v1/api-keys', { name: 'w', scopes: ['events:write'] });
    expect([400, 422]).toContain(write.status);
  });

  it('retention: events older than EVENT_RETENTION_DAYS (30) are pruned in batches, newer ones kept', async () => {
    await as(alice).post('/v1/todos', { title: 'recent' });
    const repo = app.get(DataSource).getRepository(EventRecord);
    const old = new Date(Date.now() - 31 * 86_400_000);
    const rows = Array.from({ length: 1205 }, (_, i) => ({
      event_id: `evt_${i.toString(16).padStart(32, '0')}`,
      type: 'todo.created' as const,
      owner_id: alice.user.id,
      resource_id: i + 1,
      created_at: old,
      data_v1: '{}',
      data_v2: '{}',
    }));
    for (let i = 0; i < rows.length; i += 200) await repo.insert(rows.slice(i, i + 200));
    expect(await repo.count()).toBe(1206);
    expect(await app.get(EventRetention).prune()).toBe(1205);
    expect((await allEvents(alice)).map((e) => e.data.title)).toEqual(['recent']);
    expect(await app.get(EventRetention).prune()).toBe(0);
    // a run 30 days later removes the recent one too
    expect(await app.get(EventRetention).prune(new Date(Date.now() + 31 * 86_400_000))).toBe(1);
  });

  (/^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '') ? it : it.skip)(
    'retention on PostgreSQL: while another instance holds the retention lock (pg_try_advisory_xact_lock) a run deletes nothing; once it is released, the run prunes',
    async () => {
      const dataSource = app.get(DataSource);
      const repo = dataSource.getRepository(EventRecord);
      const old = new Date(Date.now() - 31 * 86_400_000);
      await repo.insert(
        Array.from({ length: 3 }, (_, i) => ({
          event_id: `evt_${(i + 1).toString(16).padStart(32, 'f')}`,
          type: 'todo.created' as const,
          owner_id: alice.user.id,
          resource_id: i + 1,
          created_at: old,
          data_v1: '{}',
          data_v2: '{}',
        })),
      );
      // "another instance": a transaction on a connection of its own holding the same transaction-level lock
      const other = dataSource.createQueryRunner();
      await other.connect();
      try {
        await other.startTransaction();
        expect(await other.query('SELECT pg_try_advisory_xact_lock($1) AS locked', [ADVISORY_LOCK_KEYS.eventRetention])).toEqual([{ locked: true }]);
        expect(await app.get(EventRetention).prune()).toBe(0);
        expect(await repo.count()).toBe(3);
        await other.commitTransaction();
      } finally {
        await other.release();
      }
      expect(await app.get(EventRetention).prune()).toBe(3);
      expect(await repo.count()).toBe(0);
    },
  );
});
