import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request, { type Response } from 'supertest';
import { DataSource } from 'typeorm';
import { OAuthGrant } from '../src/oauth/oauth-grant.entity.js';
import { Order } from '../src/orders/order.entity.js';
import { createArticle } from './factories/article.factory.js';
import { createComment } from './factories/comment.factory.js';
import { registerClient } from './factories/oauth.factory.js';
import { createTag } from './factories/tag.factory.js';
import { bearer, createUser, type CreatedUser } from './factories/user.factory.js';
import { errorBody } from './setup/error-body.js';
import { createTestApp } from './setup/test-app.js';

/** How many identical requests race each other. */
const RACERS = 10;

/**
 * Conditional writes (docs/writes.md#conditional-requests-etag-if-none-match-if-match): a DELETE or state change decides in one statement whether it finds
 * what it needs, so of N simultaneous identical requests exactly one succeeds and the others get the
 * documented error — on SQLite and on PostgreSQL (DATABASE_URL), for every resource with a DELETE.
 */
describe('concurrent writes (docs/writes.md#concurrency, docs/resources/orders.md#status)', () => {
  let app: NestExpressApplication;
  let dataSource: DataSource;
  let base: string;
  let alice: CreatedUser;
  let admin: CreatedUser;

  beforeAll(async () => {
    app = await createTestApp();
    // one listening server, so the racing requests really run side by side
    await app.listen(0, '127.0.0.1');
    base = await app.getUrl();
    dataSource = app.get(DataSource);
    alice = await createUser(app);
    admin = await createUser(app, { role: 'admin' });
  });
  afterAll(async () => {
    await app.close();
  });

  const http = () => request(base);

  /** Fires `RACERS` copies of a request at once; returns the responses. */
  const race = (send: () => Promise<Response>) => Promise.all(Array.from({ length: RACERS }, send));

  /** Exactly one response has `winner`, every other `loser` with the ErrorResp `code` and `message`. */
  function expectOneWinner(responses: Response[], winner: number, loser: number, code: string, message: string): Response {
    const statuses = responses.map((res) => res.status).sort();
    expect(statuses).toEqual([winner, ...Array<number>(RACERS - 1).fill(loser)].sort());
    for (const res of responses.filter((r) => r.status === loser)) expect(res.body).toEqual(errorBody(code, message));
    return responses.find((res) => res.status === winner) as Response;
  }

  /** Races `RACERS` DELETEs of `path`: one 204 with no body, the rest 404 `<resource> <id> not found`, and a GET then 404. */
  async function raceDelete(path: string, caller: CreatedUser, resource: string, id: number, readPath: string | null = path): Promise<void> {
    const responses = await race(() => http().delete(path).set('Authorization', bearer(caller.token)));
    const won = expectOneWinner(responses, 204, 404, 'not_found', `${resource} ${id} not found`);
    expect(won.text).toBe('');
    if (readPath !== null) {
      const after = await http().get(readPath).set('Authorization', bearer(caller.token));
      expect(after.status).toBe(404);
      expect(after.body).toEqual(errorBody('not_found', `${resource} ${id} not found`));
    }
  }

  it('todos: one DELETE of ten wins, the others get 404', async () => {
    const created = await http().post('/v1/todos').set('Authorization', bearer(alice.token)).send({ title: 'race me' });
    expect(created.status).toBe(201);
    await raceDelete(`/v1/todos/${created.body.id}`, alice, 'todo', created.body.id);
  });

  it('articles: one DELETE of ten wins, the others get 404', async () => {
    const article = await createArticle(app, alice.user);
    await raceDelete(`/v1/articles/${article.id}`, alice, 'article', article.id);
  });

  it('comments: one DELETE of ten wins, the others get 404', async () => {
    const article = await createArticle(app, alice.user, { status: 'published' });
    const comment = await createComment(app, article, alice.user);
    await raceDelete(`/v1/articles/${article.id}/comments/${comment.id}`, alice, 'comment', comment.id);
  });

  it('tags: one DELETE of ten wins, the others get 404', async () => {
    const tag = await createTag(app);
    await raceDelete(`/v1/tags/${tag.id}`, admin, 'tag', tag.id);
  });

  it('orders: one DELETE of ten wins, the others get 404', async () => {
    const created = await http()
      .post('/v1/orders')
      .set('Authorization', bearer(alice.token))
      .send({ items: [{ sku: 'RACE-1', quantity: 1, unit_price_cents: 100 }], currency: 'EUR' });
    expect(created.status).toBe(201);
    await raceDelete(`/v1/orders/${created.body.id}`, alice, 'order', created.body.id);
    expect(await dataSource.getRepository(Order).countBy({ id: created.body.id })).toBe(0);
  });

  it('users: one DELETE of ten (by an admin) wins, the others get 404', async () => {
    const victim = await createUser(app);
    await raceDelete(`/v1/users/${victim.user.id}`, admin, 'user', victim.user.id);
  });

  it('api keys: one DELETE of ten wins, the others get 404', async () => {
    const created = await http()
      .post('/v1/api-keys')
      .set('Authorization', bearer(alice.token))
      .send({ name: 'race', scopes: ['todos:read'] });
    expect(created.status).toBe(201);
    await raceDelete(`/v1/api-keys/${created.body.id}`, alice, 'api key', created.body.id, null);
    const list = await http().get('/v1/api-keys').set('Authorization', bearer(alice.token));
    expect(list.status).toBe(200);
    expect(list.body.data.map((key: { id: number }) => key.id)).not.toContain(created.body.id);
  });

  it('oauth clients: one DELETE of ten wins, the others get 404', async () => {
    const client = await registerClient(app, admin);
    await raceDelete(`/v1/oauth-clients/${client.id}`, admin, 'oauth client', client.id);
  });

  it('oauth grants: one DELETE of ten wins, the others get 404', async () => {
    const client = await registerClient(app, admin);
    const now = new Date();
    const grant = await dataSource
      .getRepository(OAuthGrant)
      .save({ user_id: alice.user.id, oauth_client_id: client.id, scopes: 'todos:read', family_id: randomUUID(), created_at: now, last_used_at: now });
    await raceDelete(`/v1/oauth-grants/${grant.id}`, alice, 'oauth grant', grant.id);
  });

  describe('order status moves', () => {
    const items = [{ sku: 'RACE-2', quantity: 2, unit_price_cents: 250 }];

    async function newOrder(): Promise<number> {
      const res = await http().post('/v1/orders').set('Authorization', bearer(alice.token)).send({ items, currency: 'EUR' });
      expect(res.status).toBe(201);
      return res.body.id;
    }

    it('ten PATCH pending → paid: exactly one 200, the others 409 naming both states; paid once', async () => {
      const id = await newOrder();
      const responses = await race(() => http().patch(`/v1/orders/${id}`).set('Authorization', bearer(alice.token)).send({ status: 'paid' }));
      const won = expectOneWinner(responses, 200, 409, 'conflict', 'cannot change status from paid to paid');
      expect(won.body).toMatchObject({ id, status: 'paid' });
      expect((await dataSource.getRepository(Order).findOneByOrFail({ id })).status).toBe('paid');
    });

    it('ten PATCH paid → cancelled by the owner and an admin: exactly one 200, the others 409', async () => {
      const id = await newOrder();
      expect((await http().patch(`/v1/orders/${id}`).set('Authorization', bearer(alice.token)).send({ status: 'paid' })).status).toBe(200);
      let turn = 0;
      const responses = await race(() =>
        http()
          .patch(`/v1/orders/${id}`)
          .set('Authorization', bearer((turn++ % 2 === 0 ? alice : admin).token))
          .send({ status: 'cancelled' }),
      );
      expectOneWinner(responses, 200, 409, 'conflict', 'cannot change status from cancelled to cancelled');
      expect((await dataSource.getRepository(Order).findOneByOrFail({ id })).status).toBe('cancelled');
    });

    it('a status move racing a DELETE: exactly one wins; the loser is told what it met (404 or 409)', async () => {
      for (let round = 0; round < 3; round++) {
        const id = await newOrder();
        const [move, removal] = await Promise.all([
          http().patch(`/v1/orders/${id}`).set('Authorization', bearer(alice.token)).send({ status: 'paid' }),
          http().delete(`/v1/orders/${id}`).set('Authorization', bearer(alice.token)),
        ]);
        const stored = await dataSource.getRepository(Order).findOneBy({ id });
        if (removal.status === 204) {
          expect(stored).toBeNull();
          expect(move.status).toBe(404);
          expect(move.body).toEqual(errorBody('not_found', `order ${id} not found`));
        } else {
          // the move won: a paid order cannot be deleted
          expect(removal.status).toBe(409);
          expect(removal.body).toEqual(errorBody('conflict', `order ${id} is paid; only pending or cancelled orders can be deleted`));
          expect(move.status).toBe(200);
          expect(stored?.status).toBe('paid');
        }
      }
    });
  });
});
