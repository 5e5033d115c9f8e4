import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { EXPANDED_COMMENTS } from '../src/articles/article-comments.expansion.js';
import { createArticle } from './factories/article.factory.js';
import { createComment } from './factories/comment.factory.js';
import { createTag } from './factories/tag.factory.js';
import { bearer, type CreatedUser, createUser } from './factories/user.factory.js';
import { errorBody } from './setup/error-body.js';
import { createTestApp } from './setup/test-app.js';

/**
 * `expand` (docs/lists.md#expanding-related-resources-expand) through HTTP, on whichever database
 * DATABASE_URL names: each path replaces its reference by the object (or adds an article's first
 * comments) in lists and single reads, in the served version's shape, with `fields`, one batched
 * statement per path whatever the page size, and every malformed `expand` a 400 naming it.
 */
describe('expand: related resources in one round trip (docs/lists.md#expanding-related-resources-expand)', () => {
  let app: NestExpressApplication;
  let alice: CreatedUser;
  let bob: CreatedUser;
  let admin: CreatedUser;
  let articleIds: number[];
  const tagNames = [`exp-a-${process.pid}`, `exp-b-${process.pid}`];
  const http = () => request(app.getHttpServer());
  const get = (caller: CreatedUser, path: string) => http().get(path).set('Authorization', bearer(caller.token));
  const summary = (user: CreatedUser) => ({ id: user.user.id, username: user.user.username, name: user.user.name });

  /** Runs `call` with TypeORM's logger recording every statement; returns how many ran. */
  async function statements(call: () => Promise<unknown>): Promise<string[]> {
    const dataSource = app.get(DataSource);
    const seen: string[] = [];
    const original = dataSource.logger;
    const noop = () => undefined;
    Object.assign(dataSource, {
      logger: { logQuery: (sql: string) => seen.push(sql), logQueryError: noop, logQuerySlow: noop, logSchemaBuild: noop, logMigration: noop, log: noop },
    });
    try {
      await call();
    } finally {
      Object.assign(dataSource, { logger: original });
    }
    return seen;
  }

  beforeAll(async () => {
    app = await createTestApp();
    alice = await createUser(app);
    bob = await createUser(app);
    admin = await createUser(app, { role: 'admin' });
    const tags = [await createTag(app, { name: tagNames[0] }), await createTag(app, { name: tagNames[1] })];
    articleIds = [];
    for (let i = 0; i < 6; i++) {
      const article = await createArticle(
        app,
        i % 2 === 0 ? alice.user : bob.user,
        { status: 'published', title: `Expandable ${i}` },
        i === 0 ? tags : [tags[1]],
      );
      articleIds.push(article.id);
    }
    // the first article: more comments than are embedded, by both users
    for (let i = 0; i < EXPANDED_COMMENTS + 2; i++)
      await createComment(app, { id: articleIds[0] }, i % 2 === 0 ? bob.user : alice.user, { body: `comment ${i}` });
    await createComment(app, { id: articleIds[1] }, alice.user, { body: 'only one' });
  });
  afterAll(async () => {
    await app.close();
  });

  describe('articles', () => {
    it('expand=author replaces the author id by the author’s summary (v1); without expand it stays an id', async () => {
      const plain = await get(bob, `/v1/articles?sort=id&size=2`);
      expect(plain.status).toBe(200);
      expect(plain.body.data[0].author).toBe(alice.user.id);
      const res = await get(bob, `/v1/articles?sort=id&size=2&expand=author`);
      expect(res.status).toBe(200);
      expect(res.body.data.map((a: { author: unknown }) => a.author)).toEqual([summary(alice), summary(bob)]);
      // the links stay as they were, and repeat expand
      expect(res.body.data[0].links).toEqual(plain.body.data[0].links);
      expect(res.body.links.find((l: { rel: string }) => l.rel === 'self').href).toBe('/v1/articles?expand=author&page=1&size=2');
    });

    it('expand=tags replaces the names by the tags, in the same order', async () => {
      const res = await get(bob, `/v1/articles/${articleIds[0]}?expand=tags`);
      expect(res.status).toBe(200);
      expect(res.body.tags).toEqual(
        tagNames.map((name) => ({ id: expect.any(Number), name, created_at: expect.any(String), updated_at: expect.any(String), links: expect.any(Array) })),
      );
      // an expanded read embeds other resources: no ETag; the plain read keeps its own
      expect(res.headers.etag).toBeUndefined();
      expect((await get(bob, `/v1/articles/${articleIds[0]}`)).headers.etag).toEqual(expect.any(String));
    });

    it(`expand=comments adds the first ${EXPANDED_COMMENTS} comments, oldest first, with their count and link; comments.author expands their authors`, async () => {
      const res = await get(bob, `/v1/articles?sort=id&size=3&expand=comments.author`);
      expect(res.status).toBe(200);
      const [first, second, third] = res.body.data;
      expect(first.comments.total).toBe(EXPANDED_COMMENTS + 2);
      expect(first.comments.data.map((c: { body: string }) => c.body)).toEqual(Array.from({ length: EXPANDED_COMMENTS }, (_, i) => `comment ${i}`));
      expect(first.comments.data[0].author).toEqual(summary(bob));
      expect(first.comments.data[1].author).toEqual(summary(alice));
      expect(first.comments.links).toEqual([{ rel: 'self', href: `/v1/articles/${articleIds[0]}/comments` }]);
      expect(second.comments).toEqual({ data: [expect.objectContaining({ body: 'only one', author: summary(alice) })], total: 1, links: expect.any(Array) });
      expect(third.comments).toEqual({ data: [], total: 0, links: [{ rel: 'self', href: `/v1/articles/${articleIds[2]}/comments` }] });
      // without the nested path, v1 comments keep author ids; v2 comments always embed them
      const v1 = await get(bob, `/v1/articles/${articleIds[0]}?expand=comments`);
      expect(v1.body.comments.data[0].author).toBe(bob.user.id);
      const v2 = await get(bob, `/v2/articles/${articleIds[0]}?expand=comments`);
      expect(v2.body.comments.data[0].author).toEqual(summary(bob));
      expect(v2.body.comments.links).toEqual([{ rel: 'self', href: `/v2/articles/${articleIds[0]}/comments` }]);
    });

    it('v2 already embeds the author: expand=author changes nothing there', async () => {
      const plain = await get(bob, `/v2/articles/${articleIds[1]}`);
      const expanded = await get(bob, `/v2/articles/${articleIds[1]}?expand=author`);
      expect(expanded.status).toBe(200);
      expect(expanded.body).toEqual(plain.body);
    });

    it('only the fields returned are expanded: fields=title&expand=author reads no author; fields can pick them', async () => {
      const unpicked = await statements(async () => {
        const res = await get(bob, `/v1/articles?fields=title&expand=author,comments`);
        expect(res.status).toBe(200);
        expect(Object.keys(res.body.data[0]).sort()).toEqual(['id', 'links', 'title']);
      });
      expect(unpicked.filter((sql) => /FROM "users"|FROM comments|FROM "comments"/.test(sql))).toEqual([]);
      const picked = await get(bob, `/v1/articles/${articleIds[0]}?fields=title,author,comments&expand=author,comments`);
      expect(picked.status).toBe(200);
      expect(Object.keys(picked.body).sort()).toEqual(['author', 'comments', 'id', 'links', 'title']);
      expect(picked.body.author).toEqual(summary(alice));
    });

    it('costs one statement per path, whatever the page size', async () => {
      const count = async (size: number, expand?: string) =>
        (await statements(async () => expect((await get(admin, `/v1/articles?size=${size}${expand ? `&expand=${expand}` : ''}`)).status).toBe(200))).length;
      // warm up (the caller's first request also checks their account, once per interval)
      await count(6);
      const base = await count(6);
      expect(await count(2, 'author,tags,comments.author')).toBe(base + 4);
      expect(await count(6, 'author,tags,comments.author')).toBe(base + 4);
      expect(await count(6, 'author')).toBe(base + 1);
    });
  });

  describe('comments, todos and orders', () => {
    it('comments: expand=author and expand=article (v1 ids inside, article.author expands it; v2 embeds the author)', async () => {
      const res = await get(bob, `/v1/articles/${articleIds[1]}/comments?expand=author,article`);
      expect(res.status).toBe(200);
      const [comment] = res.body.data;
      expect(comment.author).toEqual(summary(alice));
      expect(comment.article).toEqual(expect.objectContaining({ id: articleIds[1], title: 'Expandable 1', author: bob.user.id, tags: [tagNames[1]] }));
      const nested = await get(bob, `/v1/articles/${articleIds[1]}/comments?expand=article.author`);
      expect(nested.body.data[0].article.author).toEqual(summary(bob));
      expect(nested.body.data[0].author).toBe(alice.user.id);
      const v2 = await get(bob, `/v2/articles/${articleIds[1]}/comments?expand=article`);
      expect(v2.body.data[0].article).toEqual(expect.objectContaining({ id: articleIds[1], author: summary(bob) }));
      const one = await get(bob, `/v1/articles/${articleIds[1]}/comments/${comment.id}?expand=article`);
      expect(one.status).toBe(200);
      expect(one.body.article.id).toBe(articleIds[1]);
    });

    it('todos: expand=owner; orders: expand=user — for the owner and for an admin', async () => {
      const todo = await http().post('/v1/todos').set('Authorization', bearer(alice.token)).send({ title: 'expand me' });
      expect(todo.status).toBe(201);
      expect((await get(alice, `/v1/todos/${todo.body.id}?expand=owner`)).body.owner).toEqual(summary(alice));
      const list = await get(admin, `/v1/todos?owner=${alice.user.id}&expand=owner`);
      expect(list.body.data.map((t: { owner: unknown }) => t.owner)).toEqual([summary(alice)]);
      const order = await http()
        .post('/v1/orders')
        .set('Authorization', bearer(bob.token))
        .send({ currency: 'EUR', items: [{ sku: 'BOOK-1', quantity: 1, unit_price_cents: 100 }] });
      expect(order.status).toBe(201);
      expect((await get(bob, `/v1/orders?expand=user`)).body.data.map((o: { user: unknown }) => o.user)).toEqual([summary(bob)]);
    });
  });

  describe('refused with 400 naming expand', () => {
    it.each<[string, string, string]>([
      ['/v1/articles?expand=owner', 'expand', 'cannot expand owner; expandable: author, tags, comments, comments.author'],
      ['/v1/articles?expand=comments.article', 'expand', 'cannot expand comments.article; expandable: author, tags, comments, comments.author'],
      ['/v1/articles?expand=author,', 'expand', 'expand must be a comma-separated list of paths'],
      ['/v1/articles?expand=author&expand=tags', 'expand', 'expand must be given once'],
      ['/v1/articles/1?expand=nope', 'expand', 'cannot expand nope; expandable: author, tags, comments, comments.author'],
      ['/v1/tags?expand=articles', 'expand', 'unknown query parameter expand'],
      ['/v1/users/1?expand=todos', 'expand', 'unknown query parameter expand'],
    ])('%s', async (path, field, message) => {
      const res = await get(admin, path);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ ...errorBody('bad_request'), details: [{ field, message }] });
    });
  });
});
