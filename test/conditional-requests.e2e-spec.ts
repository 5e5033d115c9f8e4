import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request, { type Response } from 'supertest';
import { DataSource } from 'typeorm';
import { Todo } from '../src/todos/todo.entity.js';
import { createArticle } from './factories/article.factory.js';
import { createComment } from './factories/comment.factory.js';
import { createTag } from './factories/tag.factory.js';
import { bearer, createUser, type CreatedUser } from './factories/user.factory.js';
import { errorBody } from './setup/error-body.js';
import { loadFreshApp } from './setup/fresh-app.js';
import { createTestApp } from './setup/test-app.js';

/** A strong entity tag as the service writes it: `"<row version>.v<api version>"`. */
const STRONG_TAG = /^"\d+\.v\d"$/;

/** How many PATCHes with the same `If-Match` race each other. */
const RACERS = 30;

/**
 * Conditional requests (RFC 9110 §8.8.3, §13; docs/writes.md#conditional-requests-etag-if-none-match-if-match): every single-resource representation of
 * every resource carries a strong ETag (row version + API version), GET honours If-None-Match
 * (304), PUT/PATCH/DELETE honour If-Match (412, nothing written; one conditional statement, so of
 * simultaneous writes with one tag exactly one wins), REQUIRE_IF_MATCH (428), access and existence
 * first; caching headers on authenticated responses. On SQLite and PostgreSQL (DATABASE_URL).
 */
describe('conditional requests and caching headers (docs/wire.md#caching)', () => {
  let app: NestExpressApplication;
  let base: string;
  let alice: CreatedUser;
  let bob: CreatedUser;
  let admin: CreatedUser;

  beforeAll(async () => {
    app = await createTestApp();
    // one listening server, so the racing requests really run side by side
    await app.listen(0, '127.0.0.1');
    base = await app.getUrl();
    alice = await createUser(app);
    bob = await createUser(app);
    admin = await createUser(app, { role: 'admin' });
  });
  afterAll(async () => {
    await app.close();
  });

  const http = () => request(base);
  const as = (caller: CreatedUser) => ({ Authorization: bearer(caller.token) });

  async function newTodo(caller = alice, title = 'Buy milk'): Promise<Response> {
    const res = await http().post('/v1/todos').set(as(caller)).send({ title });
    expect(res.status).toBe(201);
    return res;
  }

  async function newOrder(caller = alice): Promise<Response> {
    const res = await http()
      .post('/v1/orders')
      .set(as(caller))
      .send({ currency: 'EUR', items: [{ sku: 'BOOK-1', quantity: 1, unit_price_cents: 1000 }] });
    expect(res.status).toBe(201);
    return res;
  }

  describe('ETag', () => {
    it('every single-resource response of every resource carries a strong ETag; lists carry none', async () => {
      const todo = await newTodo();
      expect(todo.headers.etag).toMatch(STRONG_TAG);
      const tag = await http()
        .post('/v1/tags')
        .set(as(alice))
        .send({ name: `etag-${Date.now()}` });
      expect(tag.status).toBe(201);
      expect(tag.headers.etag).toMatch(STRONG_TAG);
      const article = await http().post('/v1/articles').set(as(alice)).send({ title: 'Hello', status: 'published' });
      expect(article.status).toBe(201);
      expect(article.headers.etag).toMatch(STRONG_TAG);
      const comment = await http().post(`/v1/articles/${article.body.id}/comments`).set(as(bob)).send({ body: 'Nice' });
      expect(comment.status).toBe(201);
      expect(comment.headers.etag).toMatch(STRONG_TAG);
      const order = await newOrder();
      expect(order.headers.etag).toMatch(STRONG_TAG);
      const user = await http()
        .post('/v1/users')
        .send({ username: `etag_${Date.now()}`, password: 'password-123', name: 'Etag' });
      expect(user.status).toBe(201);
      expect(user.headers.etag).toMatch(STRONG_TAG);

      for (const path of [
        `/todos/${todo.body.id}`,
        `/tags/${tag.body.id}`,
        `/articles/${article.body.id}`,
        `/articles/${article.body.id}/comments/${comment.body.id}`,
        `/orders/${order.body.id}`,
        `/users/${alice.user.id}`,
      ]) {
        for (const version of ['1', '2']) {
          const read = await http().get(`/v${version}${path}`).set(as(admin));
          expect(read.status).toBe(200);
          expect(read.headers.etag).toMatch(new RegExp(`^"\\d+\\.v${version}"$`));
        }
      }
      for (const path of ['/todos', '/tags', '/articles', `/articles/${article.body.id}/comments`, '/orders', '/users']) {
        const list = await http().get(`/v1${path}`).set(as(admin));
        expect(list.status).toBe(200);
        expect(list.headers.etag).toBeUndefined();
      }
    });

    it('names the representation: the same row has different tags as v1 and v2, the same with or without fields', async () => {
      const article = await createArticle(app, alice.user, { status: 'published' });
      const v1 = await http().get(`/v1/articles/${article.id}`).set(as(bob));
      const v2 = await http().get(`/v2/articles/${article.id}`).set(as(bob));
      expect(v1.headers.etag).toMatch(STRONG_TAG);
      expect(v2.headers.etag).toMatch(STRONG_TAG);
      expect(v1.headers.etag).not.toBe(v2.headers.etag);
      const sparse = await http().get(`/v1/articles/${article.id}?fields=title`).set(as(bob));
      expect(sparse.status).toBe(200);
      expect(Object.keys(sparse.body).sort()).toEqual(['id', 'links', 'title']);
      expect(sparse.headers.etag).toBe(v1.headers.etag);
    });

    it('PUT and PATCH answer the new ETag, which a GET then returns', async () => {
      const todo = await newTodo();
      const patched = await http().patch(`/v1/todos/${todo.body.id}`).set(as(alice)).send({ status: 'done' });
      expect(patched.status).toBe(200);
      expect(patched.headers.etag).toMatch(STRONG_TAG);
      expect(patched.headers.etag).not.toBe(todo.headers.etag);
      const put = await http().put(`/v1/todos/${todo.body.id}`).set(as(alice)).send({ title: 'Replaced' });
      expect(put.status).toBe(200);
      expect(put.headers.etag).not.toBe(patched.headers.etag);
      const read = await http().get(`/v1/todos/${todo.body.id}`).set(as(alice));
      expect(read.headers.etag).toBe(put.headers.etag);
    });

    it('changes with every write path: order status moves, article publishing, user password and role changes', async () => {
      const order = await newOrder();
      const paid = await http().patch(`/v1/orders/${order.body.id}`).set(as(alice)).send({ status: 'paid' });
      expect(paid.status).toBe(200);
      expect(paid.headers.etag).not.toBe(order.headers.etag);
      const shipped = await http().patch(`/v1/orders/${order.body.id}`).set(as(admin)).send({ status: 'shipped' });
      expect(shipped.status).toBe(200);
      expect(shipped.headers.etag).not.toBe(paid.headers.etag);
      expect((await http().get(`/v1/orders/${order.body.id}`).set(as(alice))).headers.etag).toBe(shipped.headers.etag);

      const draft = await createArticle(app, alice.user);
      const before = await http().get(`/v1/articles/${draft.id}`).set(as(alice));
      const published = await http().patch(`/v1/articles/${draft.id}`).set(as(alice)).send({ status: 'published' });
      expect(published.status).toBe(200);
      expect(published.headers.etag).not.toBe(before.headers.etag);

      const carol = await createUser(app);
      const tags: string[] = [(await http().get(`/v1/users/${carol.user.id}`).set(as(admin))).headers.etag];
      const password = await http().patch(`/v1/users/${carol.user.id}`).set(as(admin)).send({ password: 'another-password-1' });
      expect(password.status).toBe(200);
      tags.push(password.headers.etag);
      const role = await http().patch(`/v1/users/${carol.user.id}`).set(as(admin)).send({ role: 'admin' });
      expect(role.status).toBe(200);
      tags.push(role.headers.etag);
      expect(new Set(tags).size).toBe(3);
    });

    it('changes when what a representation embeds changes: a tag renamed or deleted, an author renamed (v2)', async () => {
      const tag = await createTag(app, { name: `embed-${Date.now()}` });
      const article = await createArticle(app, alice.user, { status: 'published' }, [tag]);
      const read = () => http().get(`/v1/articles/${article.id}`).set(as(bob));
      const first = await read();
      expect(first.body.tags).toEqual([tag.name]);
      const renamed = await http()
        .patch(`/v1/tags/${tag.id}`)
        .set(as(admin))
        .send({ name: `${tag.name}-x` });
      expect(renamed.status).toBe(200);
      const second = await read();
      expect(second.body.tags).toEqual([`${tag.name}-x`]);
      expect(second.headers.etag).not.toBe(first.headers.etag);
      expect((await http().delete(`/v1/tags/${tag.id}`).set(as(admin))).status).toBe(204);
      const third = await read();
      expect(third.body.tags).toEqual([]);
      expect(third.headers.etag).not.toBe(second.headers.etag);

      const comment = await createComment(app, article, bob.user);
      const v2Article = await http().get(`/v2/articles/${article.id}`).set(as(bob));
      const v2Comment = await http().get(`/v2/articles/${article.id}/comments/${comment.id}`).set(as(bob));
      expect((await http().patch(`/v1/users/${alice.user.id}`).set(as(alice)).send({ name: 'Alice Renamed' })).status).toBe(200);
      expect((await http().patch(`/v1/users/${bob.user.id}`).set(as(bob)).send({ name: 'Bob Renamed' })).status).toBe(200);
      const v2ArticleAfter = await http().get(`/v2/articles/${article.id}`).set(as(bob));
      expect(v2ArticleAfter.body.author.name).toBe('Alice Renamed');
      expect(v2ArticleAfter.headers.etag).not.toBe(v2Article.headers.etag);
      const v2CommentAfter = await http().get(`/v2/articles/${article.id}/comments/${comment.id}`).set(as(bob));
      expect(v2CommentAfter.body.author.name).toBe('Bob Renamed');
      expect(v2CommentAfter.headers.etag).not.toBe(v2Comment.headers.etag);
    });
  });

  describe('If-None-Match (GET)', () => {
    it('answers 304 with the ETag and no body when a listed tag matches (weak comparison, lists, *); 200 otherwise', async () => {
      const todo = await newTodo();
      const path = `/v1/todos/${todo.body.id}`;
      const etag = todo.headers.etag;
      for (const value of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
        const res = await http().get(path).set(as(alice)).set('If-None-Match', value);
        expect(res.status).toBe(304);
        expect(res.headers.etag).toBe(etag);
        expect(res.text ?? '').toBe('');
      }
      const stale = await http().get(path).set(as(alice)).set('If-None-Match', '"0.v1"');
      expect(stale.status).toBe(200);
      expect(stale.body.id).toBe(todo.body.id);
      // the v1 tag does not name the v2 representation
      const other = await http().get(`/v2/todos/${todo.body.id}`).set(as(alice)).set('If-None-Match', etag);
      expect(other.status).toBe(200);
      expect(other.headers.etag).not.toBe(etag);
    });

    it("answers Node's fetch with 304 too: the Cache-Control and Pragma no-cache that fetch adds to a conditional GET do not matter", async () => {
      const article = await createArticle(app, alice.user, { status: 'published' });
      const comment = await createComment(app, article, bob.user);
      const tag = await createTag(app);
      const order = await newOrder();
      const paths = [
        `/todos/${(await newTodo()).body.id}`,
        `/articles/${article.id}`,
        `/articles/${article.id}/comments/${comment.id}`,
        `/tags/${tag.id}`,
        `/orders/${order.body.id}`,
        `/users/${alice.user.id}`,
      ];
      for (const path of paths) {
        for (const version of ['1', '2']) {
          const url = `${base}/v${version}${path}`;
          const first = await fetch(url, { headers: as(alice) });
          expect(first.status).toBe(200);
          const etag = first.headers.get('etag')!;
          expect(etag).toMatch(STRONG_TAG);
          expect(((await first.json()) as { id: number }).id).toEqual(expect.any(Number));
          for (const value of [etag, `W/${etag}`, `"0.v1", ${etag}`, '*']) {
            const again = await fetch(url, { headers: { ...as(alice), 'If-None-Match': value } });
            expect(again.status).toBe(304);
            expect(again.headers.get('etag')).toBe(etag);
            expect(await again.text()).toBe('');
          }
          const head = await fetch(url, { method: 'HEAD', headers: { ...as(alice), 'If-None-Match': etag } });
          expect(head.status).toBe(304);
          const stale = await fetch(url, { headers: { ...as(alice), 'If-None-Match': '"0.v1"' } });
          expect(stale.status).toBe(200);
          expect(stale.headers.get('etag')).toBe(etag);
          expect(((await stale.json()) as { id: number }).id).toBe(((await (await fetch(url, { headers: as(alice) })).json()) as { id: number }).id);
        }
      }
    });

    it('answers 304 whatever Cache-Control and Pragma the request carries; a tag that does not match is 200 with the body', async () => {
      const todo = await newTodo();
      const path = `/v1/todos/${todo.body.id}`;
      const etag = todo.headers.etag;
      for (const cacheHeaders of [
        { 'Cache-Control': 'no-cache' },
        { Pragma: 'no-cache' },
        { 'Cache-Control': 'no-cache', Pragma: 'no-cache' },
        { 'Cache-Control': 'max-age=0, no-cache, no-store' },
      ]) {
        const fresh = await http().get(path).set(as(alice)).set(cacheHeaders).set('If-None-Match', etag);
        expect(fresh.status).toBe(304);
        expect(fresh.headers.etag).toBe(etag);
        expect(fresh.text ?? '').toBe('');
        const stale = await http().get(path).set(as(alice)).set(cacheHeaders).set('If-None-Match', '"0.v1", W/"1.v2"');
        expect(stale.status).toBe(200);
        expect(stale.headers.etag).toBe(etag);
        expect(stale.body).toMatchObject({ id: todo.body.id, title: 'Buy milk' });
      }
      // a write changes the tag: the old one no longer matches, for fetch either
      const patched = await http().patch(path).set(as(alice)).send({ status: 'done' });
      expect(patched.status).toBe(200);
      const changed = await fetch(`${base}${path}`, { headers: { ...as(alice), 'If-None-Match': etag } });
      expect(changed.status).toBe(200);
      expect(changed.headers.get('etag')).toBe(patched.headers.etag);
      expect(((await changed.json()) as { status: string }).status).toBe('done');
    });

    it('lists carry no ETag, so If-None-Match (even *) never makes them 304', async () => {
      await newTodo();
      for (const path of ['/v1/todos', '/v1/tags', '/v1/articles', '/v1/orders', '/v1/users']) {
        for (const value of ['*', '"1.v1"']) {
          const res = await http().get(path).set(as(admin)).set('If-None-Match', value);
          expect(res.status).toBe(200);
          expect(res.headers.etag).toBeUndefined();
          expect(res.body).toMatchObject({ data: expect.any(Array) });
        }
        const fetched = await fetch(`${base}${path}`, { headers: { ...as(admin), 'If-None-Match': '*' } });
        expect(fetched.status).toBe(200);
        expect(((await fetched.json()) as { data: unknown[] }).data).toEqual(expect.any(Array));
      }
    });

    it('comes after authentication, authorization and existence', async () => {
      const todo = await newTodo(alice);
      expect((await http().get(`/v1/todos/${todo.body.id}`).set('If-None-Match', '*')).status).toBe(401);
      const forbidden = await http().get(`/v1/todos/${todo.body.id}`).set(as(bob)).set('If-None-Match', '*');
      expect(forbidden.status).toBe(403);
      expect(forbidden.body).toEqual(errorBody('forbidden'));
      const missing = await http().get('/v1/todos/999999').set(as(alice)).set('If-None-Match', '*');
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual(errorBody('not_found', 'todo 999999 not found'));
    });
  });

  describe('If-Match (PUT, PATCH, DELETE)', () => {
    it('writes when the tag matches (or *), and answers 412 precondition_failed writing nothing when it does not', async () => {
      const todo = await newTodo();
      const path = `/v1/todos/${todo.body.id}`;
      const ok = await http().patch(path).set(as(alice)).set('If-Match', todo.headers.etag).send({ status: 'done' });
      expect(ok.status).toBe(200);
      expect(ok.body.status).toBe('done');
      for (const send of [
        () => http().patch(path).set(as(alice)).set('If-Match', todo.headers.etag).send({ title: 'lost update' }),
        () => http().put(path).set(as(alice)).set('If-Match', todo.headers.etag).send({ title: 'lost update' }),
        () => http().patch(path).set(as(alice)).set('If-Match', `W/${ok.headers.etag}`).send({ title: 'weak tags never match' }),
        () => http().patch(path).set(as(alice)).set('If-Match', ok.headers.etag.replace('.v1', '.v2')).send({ title: 'another representation' }),
        () => http().delete(path).set(as(alice)).set('If-Match', todo.headers.etag),
      ]) {
        const refused = await send();
        expect(refused.status).toBe(412);
        expect(refused.body).toEqual(
          errorBody('precondition_failed', `todo ${todo.body.id} has changed: If-Match names no current representation; read it again`),
        );
      }
      const unchanged = await http().get(path).set(as(alice));
      expect(unchanged.body.title).toBe('Buy milk');
      expect(unchanged.headers.etag).toBe(ok.headers.etag);
      const listed = await http().patch(path).set(as(alice)).set('If-Match', `"0.v1", ${ok.headers.etag}`).send({ title: 'listed' });
      expect(listed.status).toBe(200);
      const star = await http().patch(path).set(as(alice)).set('If-Match', '*').send({ title: 'star' });
      expect(star.status).toBe(200);
      expect((await http().delete(path).set(as(alice)).set('If-Match', star.headers.etag)).status).toBe(204);
      expect((await http().get(path).set(as(alice))).status).toBe(404);
    });

    it('applies to every resource: articles, comments, tags, orders and users (v1 and v2)', async () => {
      const article = await createArticle(app, alice.user, { status: 'published' });
      const comment = await createComment(app, article, alice.user);
      const tag = await createTag(app);
      const order = await newOrder();
      const carol = await createUser(app);
      const cases: Array<{ path: string; caller: CreatedUser; body: object; resource: string; id: number }> = [
        { path: `/articles/${article.id}`, caller: alice, body: { title: 'T' }, resource: 'article', id: article.id },
        { path: `/articles/${article.id}/comments/${comment.id}`, caller: alice, body: { body: 'B' }, resource: 'comment', id: comment.id },
        { path: `/tags/${tag.id}`, caller: admin, body: { name: `${tag.name}-y` }, resource: 'tag', id: tag.id },
        { path: `/orders/${order.body.id}`, caller: alice, body: { status: 'paid' }, resource: 'order', id: order.body.id },
        { path: `/users/${carol.user.id}`, caller: carol, body: { name: 'Carol' }, resource: 'user', id: carol.user.id },
      ];
      for (const { path, caller, body, resource, id } of cases) {
        for (const version of ['2', '1']) {
          const read = await http().get(`/v${version}${path}`).set(as(caller));
          expect(read.status).toBe(200);
          const stale = await http().patch(`/v${version}${path}`).set(as(caller)).set('If-Match', '"0.v1"').send(body);
          expect(stale.status).toBe(412);
          expect(stale.body).toEqual(
            errorBody('precondition_failed', `${resource} ${id} has changed: If-Match names no current representation; read it again`),
          );
          expect((await http().get(`/v${version}${path}`).set(as(caller))).headers.etag).toBe(read.headers.etag);
          if (version === '2') continue;
          const written = await http().patch(`/v1${path}`).set(as(caller)).set('If-Match', read.headers.etag).send(body);
          expect(written.status).toBe(200);
          expect(written.headers.etag).not.toBe(read.headers.etag);
          expect((await http().delete(`/v1${path}`).set(as(caller)).set('If-Match', read.headers.etag)).status).toBe(412);
        }
      }
      const orderNow = await http().get(`/v1/orders/${order.body.id}`).set(as(alice));
      expect(orderNow.body.status).toBe('paid');
      const articleNow = await http().get(`/v1/articles/${article.id}`).set(as(alice));
      expect((await http().delete(`/v1/articles/${article.id}`).set(as(alice)).set('If-Match', articleNow.headers.etag)).status).toBe(204);
    });

    it('a matching If-Match leaves the state rules in force: DELETE of a paid order is still 409, an unchanged PATCH still checks the tag', async () => {
      const order = await newOrder();
      const paid = await http().patch(`/v1/orders/${order.body.id}`).set(as(alice)).set('If-Match', order.headers.etag).send({ status: 'paid' });
      expect(paid.status).toBe(200);
      const refused = await http().delete(`/v1/orders/${order.body.id}`).set(as(alice)).set('If-Match', paid.headers.etag);
      expect(refused.status).toBe(409);
      expect(refused.body).toEqual(errorBody('conflict', `order ${order.body.id} is paid; only pending or cancelled orders can be deleted`));
      // the same items and currency write nothing: the tag is still checked
      const same = { currency: 'EUR', items: [{ sku: 'BOOK-1', quantity: 1, unit_price_cents: 1000 }] };
      expect((await http().patch(`/v1/orders/${order.body.id}`).set(as(alice)).set('If-Match', order.headers.etag).send(same)).status).toBe(412);
      const unchanged = await http().patch(`/v1/orders/${order.body.id}`).set(as(alice)).set('If-Match', paid.headers.etag).send(same);
      expect(unchanged.status).toBe(200);
      expect(unchanged.headers.etag).toBe(paid.headers.etag);
    });

    it('comes after authentication, authorization and existence: 401, 403 and 404 stay', async () => {
      const todo = await newTodo(alice);
      expect((await http().patch(`/v1/todos/${todo.body.id}`).set('If-Match', '"0.v1"').send({ title: 'x' })).status).toBe(401);
      const forbidden = await http().patch(`/v1/todos/${todo.body.id}`).set(as(bob)).set('If-Match', '"0.v1"').send({ title: 'x' });
      expect(forbidden.status).toBe(403);
      expect(forbidden.body).toEqual(errorBody('forbidden'));
      const missing = await http().delete('/v1/todos/999999').set(as(alice)).set('If-Match', '*');
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual(errorBody('not_found', 'todo 999999 not found'));
    });

    it(`of ${RACERS} simultaneous PATCHes with the same If-Match exactly one gets 200, the others 412, and one write is stored`, async () => {
      const todo = await newTodo();
      const path = `/v1/todos/${todo.body.id}`;
      const responses = await Promise.all(
        Array.from({ length: RACERS }, (_, i) =>
          http()
            .patch(path)
            .set(as(alice))
            .set('If-Match', todo.headers.etag)
            .send({ title: `racer ${i}` }),
        ),
      );
      const statuses = responses.map((res) => res.status).sort();
      expect(statuses).toEqual([200, ...Array<number>(RACERS - 1).fill(412)]);
      const winner = responses.find((res) => res.status === 200)!;
      for (const loser of responses.filter((res) => res.status === 412)) expect(loser.body).toEqual(errorBody('precondition_failed'));
      const stored = await http().get(path).set(as(alice));
      expect(stored.body.title).toBe(winner.body.title);
      expect(stored.headers.etag).toBe(winner.headers.etag);
      const row = await app.get(DataSource).getRepository(Todo).findOneByOrFail({ id: todo.body.id });
      expect(row.version).toBe(2);
    });

    it(`the same race on articles (locked transaction) and orders (status move): one 200, ${RACERS - 1} × 412`, async () => {
      const article = await createArticle(app, alice.user);
      const read = await http().get(`/v1/articles/${article.id}`).set(as(alice));
      const articles = await Promise.all(
        Array.from({ length: RACERS }, (_, i) =>
          http()
            .patch(`/v1/articles/${article.id}`)
            .set(as(alice))
            .set('If-Match', read.headers.etag)
            .send({ title: `racer ${i}` }),
        ),
      );
      expect(articles.map((res) => res.status).sort()).toEqual([200, ...Array<number>(RACERS - 1).fill(412)]);
      const order = await newOrder();
      const orders = await Promise.all(
        Array.from({ length: RACERS }, () =>
          http()
            .patch(`/v1/orders/${order.body.id}`)
            .set(as(alice))
            .set('If-Match', order.headers.etag)
            .send({ items: [{ sku: 'BOOK-2', quantity: 2, unit_price_cents: 500 }] }),
        ),
      );
      expect(orders.map((res) => res.status).sort()).toEqual([200, ...Array<number>(RACERS - 1).fill(412)]);
    });
  });

  describe('caching headers', () => {
    it('authenticated resource responses are private, no-cache and vary on the credential and Accept', async () => {
      const todo = await newTodo();
      for (const res of [
        todo,
        await http().get(`/v1/todos/${todo.body.id}`).set(as(alice)),
        await http().get('/v1/todos').set(as(alice)),
        await http().get('/v1/todos/999999').set(as(alice)),
      ]) {
        expect(res.headers['cache-control']).toBe('private, no-cache');
        for (const name of ['Authorization', 'Cookie', 'Accept']) expect(res.headers.vary).toContain(name);
      }
    });

    it('responses carrying a secret are no-store: tokens, API keys, OAuth client secrets', async () => {
      const login = await http().post('/v1/login').send({ username: alice.user.username, password: 'password-123' });
      expect(login.status).toBe(200);
      expect(login.headers['cache-control']).toBe('no-store');
      const key = await http()
        .post('/v1/api-keys')
        .set(as(alice))
        .send({ name: 'nightly', scopes: ['todos:read'] });
      expect(key.status).toBe(201);
      expect(key.headers['cache-control']).toBe('no-store');
      const client = await http()
        .post('/v1/oauth-clients')
        .set(as(admin))
        .send({ name: 'App', redirect_uris: ['https://app.example.com/callback'], scopes: ['todos:read'], confidential: true });
      expect(client.status).toBe(201);
      expect(client.body.client_secret).toEqual(expect.any(String));
      expect(client.headers['cache-control']).toBe('no-store');
    });
  });
});

describe('REQUIRE_IF_MATCH=true (docs/writes.md#conditional-requests-etag-if-none-match-if-match)', () => {
  let app: NestExpressApplication;
  let restoreEnv: () => void;
  let token: string;
  let other: string;

  beforeAll(async () => {
    const fresh = await loadFreshApp({ REQUIRE_IF_MATCH: 'true' });
    restoreEnv = fresh.restoreEnv;
    app = await fresh.createTestApp();
    token = (await fresh.createUser(app)).token;
    other = (await fresh.createUser(app)).token;
  });
  afterAll(async () => {
    await app.close();
    restoreEnv();
  });

  it('PUT, PATCH and DELETE without If-Match are 428 precondition_required and write nothing; with it they work', async () => {
    const server = app.getHttpServer();
    const auth = { Authorization: bearer(token) };
    const created = await request(server).post('/v1/todos').set(auth).send({ title: 'Guarded' });
    expect(created.status).toBe(201);
    const path = `/v1/todos/${created.body.id}`;
    for (const send of [
      () => request(server).patch(path).set(auth).send({ title: 'x' }),
      () => request(server).put(path).set(auth).send({ title: 'x' }),
      () => request(server).delete(path).set(auth),
    ]) {
      const refused = await send();
      expect(refused.status).toBe(428);
      expect(refused.body).toEqual(errorBody('precondition_required'));
    }
    expect((await request(server).get(path).set(auth)).body.title).toBe('Guarded');
    // access and existence first
    expect(
      (
        await request(server)
          .patch(path)
          .set({ Authorization: bearer(other) })
          .send({ title: 'x' })
      ).status,
    ).toBe(403);
    expect((await request(server).delete('/v1/todos/999999').set(auth)).status).toBe(404);
    const written = await request(server).patch(path).set(auth).set('If-Match', created.headers.etag).send({ title: 'Changed' });
    expect(written.status).toBe(200);
    expect((await request(server).delete(path).set(auth).set('If-Match', '*')).status).toBe(204);
  });
});
