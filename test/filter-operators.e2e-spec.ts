import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { createArticle } from './factories/article.factory.js';
import { createComment } from './factories/comment.factory.js';
import { createTag } from './factories/tag.factory.js';
import { bearer, type CreatedUser, createUser } from './factories/user.factory.js';
import { errorBody } from './setup/error-body.js';
import { createTestApp } from './setup/test-app.js';

/**
 * The filter operators (docs/lists.md#filter-operators) through HTTP, on whichever database
 * DATABASE_URL names: `[ne]`, `[in]`, `[null]`, `[prefix]` (case-sensitive, code point order) and
 * `[contains]` (case-insensitive, `%` and `_` literal) on the fields that declare them, combined
 * with equality filters, `fields`, counts and cursors, never widening what a caller may read; and
 * every malformed or undeclared operator a 400 naming its parameter.
 */
describe('filter operators: [ne], [in], [null], [prefix], [contains] (docs/lists.md#filter-operators)', () => {
  let app: NestExpressApplication;
  let alice: CreatedUser;
  let bob: CreatedUser;
  let admin: CreatedUser;
  const http = () => request(app.getHttpServer());
  const titles = (body: { data: Array<{ title?: string }> }) => body.data.map((item) => item.title);
  const todos = (caller: CreatedUser, query: string) => http().get(`/v1/todos?${query}`).set('Authorization', bearer(caller.token));

  /** Alice's todos, by title: content and status as given. */
  const ALICE_TODOS: Array<{ title: string; content?: string; status?: string }> = [
    { title: 'Buy milk', content: 'two litres', status: 'pending' },
    { title: 'Buy bread', status: 'done' },
    { title: 'buy eggs', content: 'a dozen', status: 'in_progress' },
    { title: 'Call Bob', status: 'pending' },
    { title: '100% done_now', content: 'percent and underscore' },
    { title: '100 percent done' },
    { title: 'Äpfel kaufen', status: 'done' },
    { title: 'Buzz' },
  ];

  beforeAll(async () => {
    app = await createTestApp();
    alice = await createUser(app);
    bob = await createUser(app);
    admin = await createUser(app, { role: 'admin' });
    for (const todo of ALICE_TODOS) {
      const res = await http().post('/v1/todos').set('Authorization', bearer(alice.token)).send(todo);
      expect(res.status).toBe(201);
    }
    // bob's todos match every filter below: they must never appear in alice's lists
    for (const title of ['Buy milk too', 'buy eggs too', '100% done_now too'])
      expect((await http().post('/v1/todos').set('Authorization', bearer(bob.token)).send({ title })).status).toBe(201);
  });
  afterAll(async () => {
    await app.close();
  });

  describe('on todos, as their owner', () => {
    it.each<[string, string[]]>([
      ['title[prefix]=Buy', ['Buy milk', 'Buy bread']],
      ['title[prefix]=Bu', ['Buy milk', 'Buy bread', 'Buzz']],
      ['title[prefix]=buy', ['buy eggs']],
      ['title[prefix]=%C3%84', ['Äpfel kaufen']],
      ['title[prefix]=Buy%20milk%20and%20more', []],
      ['title[contains]=BUY', ['Buy milk', 'Buy bread', 'buy eggs']],
      ['title[contains]=100%25', ['100% done_now']],
      ['title[contains]=_', ['100% done_now']],
      ['title[contains]=e_n', ['100% done_now']],
      ['title[contains]=%27%20OR%201%3D1%20--', []],
      ['content[null]=true', ['Buy bread', 'Call Bob', '100 percent done', 'Äpfel kaufen', 'Buzz']],
      ['content[null]=false', ['Buy milk', 'buy eggs', '100% done_now']],
      ['content[contains]=DOZEN', ['buy eggs']],
      ['status[ne]=pending', ['Buy bread', 'buy eggs', 'Äpfel kaufen']],
      ['status[in]=done,in_progress', ['Buy bread', 'buy eggs', 'Äpfel kaufen']],
      ['status[in]=done&status=pending', []],
      ['status[in]=done,pending&status=pending', ['Buy milk', 'Call Bob', '100% done_now', '100 percent done', 'Buzz']],
      ['status[in]=done&status[in]=in_progress', ['Buy bread', 'buy eggs', 'Äpfel kaufen']],
      ['status[ne]=done&title[contains]=buy', ['Buy milk', 'buy eggs']],
    ])('%s keeps exactly the matching todos of the caller', async (query, want) => {
      const res = await todos(alice, query);
      expect(res.status).toBe(200);
      expect(titles(res.body)).toEqual(want);
      expect(res.body.total).toBe(want.length);
    });

    it('never widens visibility: owner[in] naming another user, and an admin sees both owners', async () => {
      const res = await todos(alice, `owner[in]=${bob.user.id},${alice.user.id}&title[contains]=too`);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([]);
      const all = await todos(admin, `owner[in]=${bob.user.id},${alice.user.id}&title[contains]=buy&sort=title`);
      expect(all.status).toBe(200);
      expect(titles(all.body)).toEqual(['Buy bread', 'Buy milk', 'Buy milk too', 'buy eggs', 'buy eggs too']);
      const onlyBob = await todos(admin, `owner[in]=${bob.user.id}&title[prefix]=100`);
      expect(titles(onlyBob.body)).toEqual(['100% done_now too']);
    });

    it('links repeat the operators, and a cursor walk with them visits each match once; the cursor is bound to them', async () => {
      const first = await todos(alice, 'title[contains]=u&status[in]=pending,done&size=2&fields=title');
      expect(first.status).toBe(200);
      expect(first.body.total).toBe(4);
      const self = first.body.links.find((l: { rel: string }) => l.rel === 'self').href as string;
      expect(self).toBe('/v1/todos?status[in]=pending,done&title[contains]=u&fields=title&page=1&size=2');
      const seen: Array<string | undefined> = [...titles(first.body)];
      let cursor = first.body.next_cursor as string;
      while (cursor) {
        const page = await todos(alice, `title[contains]=u&status[in]=pending,done&size=2&fields=title&cursor=${cursor}`);
        expect(page.status).toBe(200);
        expect(Object.keys(page.body.data[0]).sort()).toEqual(['id', 'links', 'title']);
        seen.push(...titles(page.body));
        cursor = page.body.next_cursor;
      }
      expect(seen).toEqual(['Buy milk', 'Buy bread', 'Äpfel kaufen', 'Buzz']);
      const other = await todos(alice, `title[contains]=x&status[in]=pending,done&size=2&cursor=${first.body.next_cursor}`);
      expect(other.status).toBe(400);
      expect(other.body).toEqual({ ...errorBody('bad_request'), details: [expect.objectContaining({ field: 'cursor' })] });
    });

    it('counts with the operators under Prefer: count=exact and count=none', async () => {
      const exact = await todos(alice, 'title[prefix]=Bu&size=1').set('Prefer', 'count=exact');
      expect(exact.body.total).toBe(3);
      const none = await todos(alice, 'title[prefix]=Bu&size=1').set('Prefer', 'count=none');
      expect(none.status).toBe(200);
      expect(none.body.total).toBeUndefined();
      expect(none.body.next_cursor).toEqual(expect.any(String));
    });
  });

  describe('refused with 400 naming the parameter', () => {
    it.each<[string, string, RegExp]>([
      ['title[ne]=x', 'title[ne]', /title takes no ne filter; it takes: prefix, contains/],
      ['status[like]=x', 'status[like]', /status takes no like filter; it takes: ne, in/],
      ['created_at[contains]=2026', 'created_at[contains]', /created_at takes no contains filter; it takes: gte, gt, lte, lt/],
      ['created_at[bogus]=1', 'created_at[bogus]', /unknown range operator bogus; use gte, gt, lte or lt/],
      ['colour[in]=red', 'colour[in]', /unknown query parameter colour\[in\]/],
      ['status[in]=', 'status[in]', /comma-separated list of values without empty entries/],
      ['status[in]=pending,,done', 'status[in]', /without empty entries/],
      ['status[in]=pending,nope', 'status[in]', /status\[in\] must be one of pending, in_progress, done/],
      ['status[ne]=nope', 'status[ne]', /must be one of/],
      ['owner[in]=1,-2', 'owner[in]', /must be a non-negative integer/],
      ['content[null]=yes', 'content[null]', /must be true or false/],
      ['title[prefix]=', 'title[prefix]', /must be 1 to 200 characters/],
      [`title[contains]=${'é'.repeat(201)}`, 'title[contains]', /must be 1 to 200 characters/],
      ['title[prefix]=a&title[prefix]=b', 'title[prefix]', /must be given once/],
      ['title[prefix][x]=a', 'title[prefix][x]', /unknown query parameter/],
    ])('%s', async (query, field, message) => {
      const res = await todos(alice, query);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ ...errorBody('bad_request'), details: [{ field, message: expect.stringMatching(message) }] });
    });

    it('a contains of 200 characters is accepted, and of 200 astral characters too', async () => {
      expect((await todos(alice, `title[contains]=${'a'.repeat(200)}`)).status).toBe(200);
      expect((await todos(alice, `title[contains]=${encodeURIComponent('😀'.repeat(200))}`)).status).toBe(200);
    });
  });

  describe('on the other collections', () => {
    it('articles: author[ne], status[in], tag[in] (case-insensitive), published_at[null], title[prefix] — within what the caller may read', async () => {
      const nest = await createTag(app, { name: `nest-${process.pid}` });
      const other = await createTag(app, { name: `other-${process.pid}` });
      const prefix = `Ops ${process.pid}`;
      await createArticle(app, alice.user, { title: `${prefix} alice published`, status: 'published' }, [nest]);
      await createArticle(app, alice.user, { title: `${prefix} alice draft`, status: 'draft' }, [nest, other]);
      await createArticle(app, bob.user, { title: `${prefix} bob published`, status: 'published' }, [other]);
      await createArticle(app, bob.user, { title: `${prefix} bob draft`, status: 'draft' }, [nest]);
      const list = async (caller: CreatedUser, query: string) => {
        const res = await http()
          .get(`/v1/articles?title[prefix]=${encodeURIComponent(prefix)}&sort=title&${query}`)
          .set('Authorization', bearer(caller.token));
        expect(res.status).toBe(200);
        return titles(res.body).map((t) => t?.slice(prefix.length + 1));
      };
      expect(await list(alice, '')).toEqual(['alice draft', 'alice published', 'bob published']);
      expect(await list(alice, `author[ne]=${alice.user.id}`)).toEqual(['bob published']);
      expect(await list(bob, `author[ne]=${bob.user.id}`)).toEqual(['alice published']);
      expect(await list(alice, 'status[in]=draft,archived')).toEqual(['alice draft']);
      expect(await list(alice, 'status[ne]=published')).toEqual(['alice draft']);
      expect(await list(alice, `tag[in]=${nest.name.toUpperCase()},nothing`)).toEqual(['alice draft', 'alice published']);
      expect(await list(admin, `tag[in]=${nest.name},${other.name}`)).toEqual(['alice draft', 'alice published', 'bob draft', 'bob published']);
      expect(await list(alice, 'published_at[null]=true')).toEqual(['alice draft']);
      expect(await list(admin, 'published_at[null]=true')).toEqual(['alice draft', 'bob draft']);
      expect(await list(admin, 'published_at[null]=false&title[contains]=PUBLISHED')).toEqual(['alice published', 'bob published']);
    });

    it('users (admins): name[prefix], name[contains], username[prefix], role[in], age[null], email[null]', async () => {
      const tag = `op${process.pid}`;
      const carol = await createUser(app, { username: `${tag}_carol`, name: `Carol ${tag}`, age: 41, email: `carol-${tag}@example.com` });
      const dave = await createUser(app, { username: `${tag}_dave`, name: `Dave ${tag}`, age: null, email: null });
      const users = async (query: string) => {
        const res = await http().get(`/v1/users?${query}&sort=name`).set('Authorization', bearer(admin.token));
        expect(res.status).toBe(200);
        return res.body.data.map((u: { id: number }) => u.id);
      };
      expect(await users(`username[prefix]=${tag}_`)).toEqual([carol.user.id, dave.user.id]);
      expect(await users(`name[contains]=${tag.toUpperCase()}`)).toEqual([carol.user.id, dave.user.id]);
      expect(await users(`name[prefix]=Dave%20${tag}`)).toEqual([dave.user.id]);
      expect(await users(`username[prefix]=${tag}_&age[null]=true`)).toEqual([dave.user.id]);
      expect(await users(`username[prefix]=${tag}_&email[null]=false`)).toEqual([carol.user.id]);
      expect(await users(`username[prefix]=${tag}_&role[in]=admin`)).toEqual([]);
      expect(await users(`username[prefix]=${tag}_&role[ne]=admin`)).toEqual([carol.user.id, dave.user.id]);
      const refused = await http().get(`/v1/users?name[contains]=x`).set('Authorization', bearer(alice.token));
      expect(refused.status).toBe(403);
    });

    it('tags: name[prefix] compared lower-case as names are stored, name[contains]', async () => {
      const one = await createTag(app, { name: `zprefix-${process.pid}-one` });
      const two = await createTag(app, { name: `zprefix-${process.pid}-two` });
      const res = await http().get(`/v1/tags?name[prefix]=ZPREFIX-${process.pid}&sort=name`).set('Authorization', bearer(alice.token));
      expect(res.status).toBe(200);
      expect(res.body.data.map((t: { name: string }) => t.name)).toEqual([one.name, two.name]);
      const contains = await http().get(`/v1/tags?name[contains]=${process.pid}-TW`).set('Authorization', bearer(alice.token));
      expect(contains.body.data.map((t: { name: string }) => t.name)).toEqual([two.name]);
    });

    it('comments: body[contains] and author[ne] within one article', async () => {
      const article = await createArticle(app, alice.user, { status: 'published' });
      await createComment(app, article, alice.user, { body: 'First! 50% off' });
      await createComment(app, article, bob.user, { body: 'Agreed, 50 percent' });
      await createComment(app, article, bob.user, { body: 'Nothing here' });
      const comments = async (query: string) => {
        const res = await http().get(`/v1/articles/${article.id}/comments?${query}`).set('Authorization', bearer(bob.token));
        expect(res.status).toBe(200);
        return res.body.data.map((c: { body: string }) => c.body);
      };
      expect(await comments('body[contains]=50')).toEqual(['First! 50% off', 'Agreed, 50 percent']);
      expect(await comments('body[contains]=50%25')).toEqual(['First! 50% off']);
      expect(await comments(`author[ne]=${alice.user.id}`)).toEqual(['Agreed, 50 percent', 'Nothing here']);
      expect(await comments(`author[in]=${alice.user.id}&body[contains]=here`)).toEqual([]);
    });

    it('orders: status[in], currency[ne], user[in] only within the own orders', async () => {
      const order = (currency: string) =>
        http()
          .post('/v1/orders')
          .set('Authorization', bearer(bob.token))
          .send({ currency, items: [{ sku: 'BOOK-1', quantity: 1, unit_price_cents: 100 }] });
      const eur = await order('EUR');
      const usd = await order('USD');
      expect([eur.status, usd.status]).toEqual([201, 201]);
      const list = async (caller: CreatedUser, query: string) => {
        const res = await http().get(`/v1/orders?${query}`).set('Authorization', bearer(caller.token));
        expect(res.status).toBe(200);
        return res.body.data.map((o: { id: number }) => o.id);
      };
      expect(await list(bob, 'currency[ne]=EUR')).toEqual([usd.body.id]);
      expect(await list(bob, 'status[in]=pending,paid&currency[in]=EUR,GBP')).toEqual([eur.body.id]);
      expect(await list(alice, `user[in]=${bob.user.id}`)).toEqual([]);
      expect(await list(admin, `user[in]=${bob.user.id}&currency[ne]=GBP`)).toEqual([eur.body.id, usd.body.id]);
    });
  });
});
