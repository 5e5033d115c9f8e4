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
 * Full-text search with `q` (docs/lists.md#full-text-search-q) through HTTP, on whichever database
 * DATABASE_URL names (PostgreSQL: the stored vectors of `<table>_search` and `websearch_to_tsquery`; SQLite:
 * the FTS5 tables kept by triggers): words, phrases, exclusions and alternatives; `sort=relevance`;
 * combined with filters, operators, `fields`, counts and cursors; never widening visibility; the
 * index following every write; hostile input refused with 400 or matched literally, never a 500.
 */
describe('full-text search: q and sort=relevance (docs/lists.md#full-text-search-q)', () => {
  let app: NestExpressApplication;
  let alice: CreatedUser;
  let bob: CreatedUser;
  let admin: CreatedUser;
  const http = () => request(app.getHttpServer());
  const titles = (body: { data: Array<{ title?: string }> }) => body.data.map((item) => item.title);
  const articles = (caller: CreatedUser, query: string) => http().get(`/v1/articles?${query}`).set('Authorization', bearer(caller.token));
  /** Titles of the articles `caller` finds for `query`, asserting a 200 and a total equal to the items (one page). */
  async function found(caller: CreatedUser, query: string): Promise<Array<string | undefined>> {
    const res = await articles(caller, query);
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(res.body.data.length);
    return titles(res.body);
  }

  beforeAll(async () => {
    app = await createTestApp();
    alice = await createUser(app);
    bob = await createUser(app);
    admin = await createUser(app, { role: 'admin' });
    const published = { status: 'published' as const };
    await createArticle(app, alice.user, { ...published, title: 'NestJS guide', body: 'Modules, providers and the query builder of TypeORM.' });
    await createArticle(app, alice.user, { ...published, title: 'Prisma or TypeORM', body: 'A builder of query objects compared.' });
    await createArticle(app, bob.user, { ...published, title: 'Gardening', body: 'Tomatoes in nestjs-free soil; nestjsx is something else.' });
    await createArticle(app, bob.user, { ...published, title: 'Café crème', body: 'Un café, s’il vous plaît.' });
    await createArticle(app, bob.user, { title: 'Secret nestjs draft', body: 'Only bob and admins see this.' });
    await createArticle(app, alice.user, { ...published, title: 'Deep dive', body: 'Everything about NestJS interceptors, and nestjs again: NestJS.' });
  });
  afterAll(async () => {
    await app.close();
  });

  describe('the query syntax, on both databases alike', () => {
    it.each<[string, string[]]>([
      // whole words, case-insensitive, in the title or the body; another user's draft stays invisible
      ['q=nestjs', ['NestJS guide', 'Gardening', 'Deep dive']],
      ['q=NESTJS%20interceptors', ['Deep dive']],
      // a phrase: the words next to each other, in order
      ['q=%22query%20builder%22', ['NestJS guide']],
      ['q=query%20builder', ['NestJS guide', 'Prisma or TypeORM']],
      // exclusion and alternatives (`or` binds loosest)
      ['q=typeorm%20-prisma', ['NestJS guide']],
      ['q=gardening%20or%20prisma', ['Prisma or TypeORM', 'Gardening']],
      ['q=typeorm%20builder%20or%20tomatoes', ['NestJS guide', 'Prisma or TypeORM', 'Gardening']],
      // diacritics are kept: café is not cafe
      ['q=caf%C3%A9', ['Café crème']],
      ['q=cafe', []],
      // no stemming: "module" does not find "Modules"
      ['q=module', []],
      ['q=modules', ['NestJS guide']],
    ])('%s', async (query, want) => {
      expect(await found(alice, query)).toEqual(want);
    });

    it('never widens visibility: the draft is found by its author and by admins only', async () => {
      expect(await found(alice, 'q=secret')).toEqual([]);
      expect(await found(bob, 'q=secret')).toEqual(['Secret nestjs draft']);
      expect(await found(admin, 'q=nestjs&sort=title')).toEqual(['Deep dive', 'Gardening', 'NestJS guide', 'Secret nestjs draft']);
    });

    it.each<[string, string[]]>([
      // FTS5 and tsquery operators in the input are plain text
      ['q=NEAR(nestjs%20guide)', []],
      ['q=title%3Anestjs', []],
      ['q=nest*', []],
      ['q=%5Enestjs', ['NestJS guide', 'Gardening', 'Deep dive']],
      // `&` and `|` are no words, `!` no operator: nestjs and typeorm
      ['q=nestjs%20%26%20!typeorm%20%7C', ['NestJS guide']],
      ['q=%22unbalanced%20nestjs', []],
      ['q=%27%20OR%201%3D1%20--', []],
      // the words "and" or "not" (`OR` between them is the alternative)
      ['q=AND%20OR%20NOT', ['NestJS guide', 'Deep dive']],
      // an emoji is no word
      ['q=%F0%9F%98%80%20nestjs', ['NestJS guide', 'Gardening', 'Deep dive']],
    ])('hostile q %s is matched as text, never a 500', async (query, want) => {
      const res = await articles(alice, query);
      expect(res.status).toBe(200);
      expect(titles(res.body)).toEqual(want);
    });

    it.each<[string, RegExp]>([
      ['q=', /q must contain a word to search for/],
      ['q=!!!%20%22%22%20-', /q must contain a word to search for/],
      ['q=-nestjs', /not only -exclusions/],
      ['q=nestjs%20or%20-typeorm', /not only -exclusions/],
      [`q=${'a'.repeat(257)}`, /q must be at most 256 characters/],
      [`q=${Array.from({ length: 33 }, (_, i) => `w${i}`).join('%20')}`, /q has more than 32 terms/],
      ['q=a&q=b', /q must be given once/],
    ])('%s → 400 naming q', async (query, message) => {
      const res = await articles(alice, query);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ ...errorBody('bad_request'), details: [{ field: 'q', message: expect.stringMatching(message) }] });
    });

    it('sort=relevance without q → 400 naming sort; q on a list without search → 400 unknown parameter', async () => {
      const res = await articles(alice, 'sort=-relevance');
      expect(res.status).toBe(400);
      expect(res.body.details).toEqual([{ field: 'sort', message: 'sort by relevance needs q' }]);
      const keys = await http().get('/v1/api-keys?q=x').set('Authorization', bearer(alice.token));
      expect(keys.status).toBe(400);
      expect(keys.body.details).toEqual([{ field: 'q', message: 'unknown query parameter q' }]);
    });
  });

  describe('relevance, filters, fields, counts and cursors', () => {
    it('sort=-relevance puts the better match first: more occurrences, the title above the body', async () => {
      await createArticle(app, bob.user, { status: 'published', title: 'Animals', body: 'Somewhere a zebra appears.' });
      await createArticle(app, bob.user, { status: 'published', title: 'Zebra notes', body: 'zebra zebra zebra stripes' });
      await createArticle(app, bob.user, { status: 'published', title: 'Zebra', body: 'Unrelated words here.' });
      expect(await found(alice, 'q=zebra&sort=-relevance')).toEqual(['Zebra notes', 'Zebra', 'Animals']);
      // ascending relevance is the reverse
      expect(await found(alice, 'q=zebra&sort=relevance')).toEqual(['Animals', 'Zebra', 'Zebra notes']);
      // without sort, by id
      expect(await found(alice, 'q=zebra')).toEqual(['Animals', 'Zebra notes', 'Zebra']);
    });

    it('combines with filters, operators, fields and Prefer: count; links repeat q', async () => {
      const res = await articles(alice, `q=nestjs&author=${alice.user.id}&title[prefix]=Deep&fields=title`);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([{ id: expect.any(Number), title: 'Deep dive', links: expect.any(Array) }]);
      expect(res.body.total).toBe(1);
      const self = res.body.links.find((l: { rel: string }) => l.rel === 'self').href as string;
      expect(self).toBe(`/v1/articles?q=nestjs&author=${alice.user.id}&title[prefix]=Deep&fields=title&page=1&size=20`);
      const none = await articles(alice, 'q=nestjs').set('Prefer', 'count=none');
      expect(none.status).toBe(200);
      expect(none.body.total).toBeUndefined();
      expect(titles(none.body)).toEqual(['NestJS guide', 'Gardening', 'Deep dive']);
    });

    it('a cursor walk of sort=-relevance visits every match once, in the order of one page; the cursor is bound to q', async () => {
      const whole = await found(admin, 'q=nestjs%20or%20typeorm%20or%20caf%C3%A9&sort=-relevance');
      expect(whole).toHaveLength(6);
      const seen: Array<string | undefined> = [];
      let res = await articles(admin, 'q=nestjs%20or%20typeorm%20or%20caf%C3%A9&sort=-relevance&size=2');
      seen.push(...titles(res.body));
      const first = res.body.next_cursor as string;
      while (res.body.next_cursor) {
        res = await articles(admin, `q=nestjs%20or%20typeorm%20or%20caf%C3%A9&sort=-relevance&size=2&cursor=${res.body.next_cursor}`);
        expect(res.status).toBe(200);
        seen.push(...titles(res.body));
      }
      expect(seen).toEqual(whole);
      const other = await articles(admin, `q=typeorm&sort=-relevance&size=2&cursor=${first}`);
      expect(other.status).toBe(400);
      expect(other.body.details).toEqual([expect.objectContaining({ field: 'cursor' })]);
    });
  });

  describe('the index follows every write', () => {
    it('create, rename and delete through the API: found by the new words only, gone after the delete', async () => {
      const created = await http()
        .post('/v1/articles')
        .set('Authorization', bearer(alice.token))
        .send({ title: 'Quokka facts', body: 'Marsupials.', status: 'published' });
      expect(created.status).toBe(201);
      expect(await found(bob, 'q=quokka')).toEqual(['Quokka facts']);
      const renamed = await http().patch(`/v1/articles/${created.body.id}`).set('Authorization', bearer(alice.token)).send({ title: 'Wombat facts' });
      expect(renamed.status).toBe(200);
      expect(await found(bob, 'q=quokka')).toEqual([]);
      expect(await found(bob, 'q=wombat%20marsupials')).toEqual(['Wombat facts']);
      expect((await http().delete(`/v1/articles/${created.body.id}`).set('Authorization', bearer(alice.token))).status).toBe(204);
      expect(await found(bob, 'q=wombat')).toEqual([]);
    });
  });

  describe('the other searchable collections', () => {
    it('todos: title and content, the caller’s own only', async () => {
      for (const [caller, todo] of [
        [alice, { title: 'Buy oat milk', content: 'organic' }],
        [alice, { title: 'Call the vet', content: 'about the organic food' }],
        [bob, { title: 'Organic garden' }],
      ] as const)
        expect((await http().post('/v1/todos').set('Authorization', bearer(caller.token)).send(todo)).status).toBe(201);
      const res = await http().get('/v1/todos?q=organic&sort=-relevance').set('Authorization', bearer(alice.token));
      expect(res.status).toBe(200);
      expect(titles(res.body).sort()).toEqual(['Buy oat milk', 'Call the vet']);
    });

    it('users (admins): name and username', async () => {
      const zed = await createUser(app, { username: `zed_${process.pid}`, name: 'Zebulon Quartermaine' });
      const res = await http().get('/v1/users?q=quartermaine').set('Authorization', bearer(admin.token));
      expect(res.status).toBe(200);
      expect(res.body.data.map((u: { id: number }) => u.id)).toEqual([zed.user.id]);
      const byUsername = await http().get(`/v1/users?q=zed_${process.pid}`).set('Authorization', bearer(admin.token));
      expect(byUsername.body.data.map((u: { id: number }) => u.id)).toEqual([zed.user.id]);
    });

    it('tags: name; comments: body, within one article', async () => {
      const tag = await createTag(app, { name: `kubernetes-${process.pid}` });
      const tags = await http().get(`/v1/tags?q=kubernetes`).set('Authorization', bearer(bob.token));
      expect(tags.status).toBe(200);
      expect(tags.body.data.map((t: { id: number }) => t.id)).toEqual([tag.id]);
      const article = await createArticle(app, alice.user, { status: 'published' });
      await createComment(app, article, bob.user, { body: 'Brilliant explanation of sharding' });
      await createComment(app, article, alice.user, { body: 'Thanks!' });
      const comments = await http().get(`/v1/articles/${article.id}/comments?q=sharding`).set('Authorization', bearer(bob.token));
      expect(comments.status).toBe(200);
      expect(comments.body.data.map((c: { body: string }) => c.body)).toEqual(['Brilliant explanation of sharding']);
    });
  });
});
