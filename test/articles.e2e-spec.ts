import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource, SelectQueryBuilder } from 'typeorm';
import { Article, ArticleTag, type ArticleStatus } from '../src/articles/article.entity.js';
import { Comment } from '../src/comments/comment.entity.js';
import type { Tag } from '../src/tags/tag.entity.js';
import { createArticle } from './factories/article.factory.js';
import { createTag } from './factories/tag.factory.js';
import { bearer, createUser, type CreatedUser } from './factories/user.factory.js';
import { createTestApp, truncateAll } from './setup/test-app.js';
import { errorBody } from './setup/error-body.js';
import { ISO_MS } from './setup/formats.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Shape {
  id: number;
  title: string;
  body: string;
  status: ArticleStatus;
  tags: string[];
  author: number;
  published_at: unknown;
}

/** The response object of an article (docs/resources/articles.md), for exact comparisons. */
function articleShape(fields: Shape) {
  return {
    ...fields,
    created_at: expect.stringMatching(ISO_MS),
    updated_at: expect.stringMatching(ISO_MS),
    links: [
      { rel: 'self', href: `/v1/articles/${fields.id}` },
      { rel: 'author', href: `/v1/users/${fields.author}` },
      { rel: 'comments', href: `/v1/articles/${fields.id}/comments` },
    ],
  };
}

/**
 * Makes every insert into article_tags fail (a database trigger), so a write that links tags
 * fails after the article row was written; returns a function that removes the trigger.
 */
async function breakTagLinks(dataSource: DataSource): Promise<() => Promise<void>> {
  if (dataSource.options.type === 'postgres') {
    await dataSource.query(`CREATE OR REPLACE FUNCTION e2e_refuse_tag_link() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'boom'; END $$ LANGUAGE plpgsql`);
    await dataSource.query('CREATE TRIGGER e2e_refuse_tag_link BEFORE INSERT ON article_tags FOR EACH ROW EXECUTE FUNCTION e2e_refuse_tag_link()');
    return async () => {
      await dataSource.query('DROP TRIGGER e2e_refuse_tag_link ON article_tags');
      await dataSource.query('DROP FUNCTION e2e_refuse_tag_link()');
    };
  }
  await dataSource.query(`CREATE TRIGGER e2e_refuse_tag_link BEFORE INSERT ON article_tags BEGIN SELECT RAISE(ABORT, 'boom'); END`);
  return async () => {
    await dataSource.query('DROP TRIGGER e2e_refuse_tag_link');
  };
}

describe('articles (docs/writes.md, docs/resources/articles.md)', () => {
  let app: NestExpressApplication;
  let alice: CreatedUser;
  let bob: CreatedUser;
  let admin: CreatedUser;

  const http = () => request(app.getHttpServer());
  const as = (user: CreatedUser) => ({
    get: (path: string, query: Record<string, string | string[]> | string = {}) => http().get(path).query(query).set('Authorization', bearer(user.token)),
    post: (path: string, body: object) => http().post(path).set('Authorization', bearer(user.token)).send(body),
    put: (path: string, body: object) => http().put(path).set('Authorization', bearer(user.token)).send(body),
    patch: (path: string, body: object) => http().patch(path).set('Authorization', bearer(user.token)).send(body),
    delete: (path: string) => http().delete(path).set('Authorization', bearer(user.token)),
  });

  /** Creates an article through the API; returns the response body. */
  async function postArticle(user: CreatedUser, body: object): Promise<Record<string, any>> {
    const res = await as(user).post('/v1/articles', body);
    expect(res.status).toBe(201);
    return res.body;
  }

  const countArticles = () => app.get(DataSource).getRepository(Article).count();

  beforeAll(async () => {
    app = await createTestApp();
    alice = await createUser(app);
    bob = await createUser(app);
    admin = await createUser(app, { role: 'admin' });
    for (const name of ['nestjs', 'esm', 'typeorm', 'sqlite']) await createTag(app, { name });
  });
  afterAll(async () => {
    await app.close();
  });

  describe('POST /v1/articles', () => {
    it('creates a draft by the caller: 201, Location, defaults and links', async () => {
      const res = await as(alice).post('/v1/articles', { title: 'Hello' });
      expect(res.status).toBe(201);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body).toEqual(
        articleShape({ id: res.body.id, title: 'Hello', body: '', status: 'draft', tags: [], author: alice.user.id, published_at: null }),
      );
      expect(res.headers.location).toBe(`/v1/articles/${res.body.id}`);
      expect(res.body.created_at).toBe(res.body.updated_at);

      const read = await as(alice).get(res.headers.location);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(res.body);
    });

    it('takes body, tags (lower-cased, duplicates collapsed, sorted) and status published (sets published_at)', async () => {
      const res = await as(alice).post('/v1/articles', { title: 'Full', body: 'Text.', status: 'published', tags: ['TypeORM', 'esm', 'nestjs', 'esm'] });
      expect(res.status).toBe(201);
      expect(res.body).toEqual(
        articleShape({
          id: res.body.id,
          title: 'Full',
          body: 'Text.',
          status: 'published',
          tags: ['esm', 'nestjs', 'typeorm'],
          author: alice.user.id,
          published_at: res.body.created_at,
        }),
      );
      expect(res.body.published_at).toMatch(ISO_MS);
      const read = await as(bob).get(res.headers.location);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(res.body);
    });

    it('can create an archived article directly (never published: published_at stays null)', async () => {
      const res = await as(alice).post('/v1/articles', { title: 'Straight to the archive', status: 'archived' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ status: 'archived', published_at: null });
    });

    it('ignores author, published_at and the other read-only properties', async () => {
      const res = await as(alice).post('/v1/articles', {
        id: 999,
        title: 'Mine',
        author: bob.user.id,
        published_at: '2000-01-01T00:00:00.000Z',
        created_at: '2000-01-01T00:00:00.000Z',
        links: [],
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual(
        articleShape({ id: res.body.id, title: 'Mine', body: '', status: 'draft', tags: [], author: alice.user.id, published_at: null }),
      );
      expect(res.body.id).not.toBe(999);
    });

    it('answers an unknown tag with 422 naming it, and writes nothing', async () => {
      const before = await countArticles();
      const res = await as(alice).post('/v1/articles', { title: 'Bad tags', tags: ['nestjs', 'nestjs', 'nope', 'Ghost', 'nope'] });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        ...errorBody('validation_failed', '2 fields are invalid'),
        details: [
          { field: 'tags[2]', message: 'tag nope does not exist' },
          { field: 'tags[3]', message: 'tag ghost does not exist' },
        ],
      });
      const one = await as(alice).post('/v1/articles', { title: 'Bad tag', tags: ['nope'] });
      expect(one.status).toBe(422);
      expect(one.body).toEqual({
        ...errorBody('validation_failed', 'tag nope does not exist'),
        details: [{ field: 'tags[0]', message: 'tag nope does not exist' }],
      });
      expect(await countArticles()).toBe(before);
    });

    it('answers missing, null, empty or non-string title and non-nullable nulls with 400', async () => {
      const missing = await as(alice).post('/v1/articles', { body: 'no title' });
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({ ...errorBody('bad_request', 'title is required'), details: [{ field: 'title', message: 'title is required' }] });
      for (const body of [{ title: '' }, { title: null }, { title: 3 }, { title: 'x', body: null }, { title: 'x', status: null }, { title: 'x', tags: null }]) {
        const res = await as(alice).post('/v1/articles', body);
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ code: 'bad_request', details: [{ field: expect.any(String), message: expect.any(String) }] });
      }
    });

    it('answers tags of the wrong JSON type with 400', async () => {
      for (const tags of ['nestjs', [1], [{ name: 'nestjs' }]]) {
        const res = await as(alice).post('/v1/articles', { title: 'x', tags });
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ code: 'bad_request', details: [{ field: 'tags', message: expect.any(String) }] });
      }
    });

    it('answers rule-breaking values with 422, listing every field', async () => {
      const res = await as(alice).post('/v1/articles', {
        title: 't'.repeat(201),
        status: 'deleted',
        tags: Array.from({ length: 21 }, (_, i) => `tag-${i}`),
      });
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['status', 'tags', 'title']);
      const badName = await as(alice).post('/v1/articles', { title: 'x', tags: ['no spaces'] });
      expect(badName.status).toBe(422);
      expect(badName.body).toMatchObject({ code: 'validation_failed', details: [{ field: 'tags', message: expect.any(String) }] });
    });

    it('accepts a body of 100,000 characters and answers 100,001 with 422', async () => {
      const ok = await as(alice).post('/v1/articles', { title: 'Long', body: 'b'.repeat(100_000) });
      expect(ok.status).toBe(201);
      expect(ok.body.body).toHaveLength(100_000);
      const res = await as(alice).post('/v1/articles', { title: 'Too long', body: 'b'.repeat(100_001) });
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ code: 'validation_failed', details: [{ field: 'body', message: expect.any(String) }] });
    });

    it('answers an unaccepted property with 400 naming it, and a missing credential with 401', async () => {
      const res = await as(alice).post('/v1/articles', { title: 'x', views: 3 });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        ...errorBody('bad_request', 'views is not an accepted property'),
        details: [{ field: 'views', message: 'views is not an accepted property' }],
      });
      const anon = await http().post('/v1/articles').send({ title: 'x' });
      expect(anon.status).toBe(401);
      expect(anon.body).toEqual(errorBody('unauthorized'));
    });
  });

  describe('status transitions (docs/writes.md#state-changes: refused → 409 naming both states)', () => {
    it('draft → published sets published_at; → draft keeps it; → published again keeps the first one', async () => {
      const article = await postArticle(alice, { title: 'Lifecycle' });
      await sleep(5);
      const published = await as(alice).patch(`/v1/articles/${article.id}`, { status: 'published' });
      expect(published.status).toBe(200);
      expect(published.body).toEqual({
        ...article,
        status: 'published',
        published_at: expect.stringMatching(ISO_MS),
        updated_at: expect.stringMatching(ISO_MS),
      });
      expect(Date.parse(published.body.published_at)).toBeGreaterThan(Date.parse(article.created_at));
      const firstPublished = published.body.published_at;

      await sleep(5);
      const draft = await as(alice).patch(`/v1/articles/${article.id}`, { status: 'draft' });
      expect(draft.status).toBe(200);
      expect(draft.body).toMatchObject({ status: 'draft', published_at: firstPublished });

      await sleep(5);
      const again = await as(alice).patch(`/v1/articles/${article.id}`, { status: 'published' });
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ status: 'published', published_at: firstPublished });

      const archived = await as(alice).patch(`/v1/articles/${article.id}`, { status: 'archived' });
      expect(archived.status).toBe(200);
      expect(archived.body).toMatchObject({ status: 'archived', published_at: firstPublished });

      const read = await as(alice).get(`/v1/articles/${article.id}`);
      expect(read.body).toEqual(archived.body);
    });

    it('allows draft → archived', async () => {
      const article = await postArticle(alice, { title: 'Shelved' });
      const res = await as(alice).patch(`/v1/articles/${article.id}`, { status: 'archived' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...article, status: 'archived', updated_at: expect.stringMatching(ISO_MS) });
    });

    it('treats setting the current status as no change (200), published_at untouched', async () => {
      for (const status of ['draft', 'published', 'archived'] as const) {
        const article = await postArticle(alice, { title: `Stay ${status}`, status });
        const res = await as(alice).patch(`/v1/articles/${article.id}`, { status });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ ...article, updated_at: expect.stringMatching(ISO_MS) });
      }
    });

    it('refuses every change out of archived with 409 naming both states, leaving the article unchanged', async () => {
      const article = await postArticle(alice, { title: 'Final', status: 'published', tags: ['esm'] });
      const archived = (await as(alice).patch(`/v1/articles/${article.id}`, { status: 'archived' })).body;
      for (const status of ['draft', 'published']) {
        const res = await as(alice).patch(`/v1/articles/${article.id}`, { status, title: 'Changed' });
        expect(res.status).toBe(409);
        expect(res.body).toEqual(errorBody('conflict', `cannot change status from archived to ${status}`));
      }
      const byAdmin = await as(admin).patch(`/v1/articles/${article.id}`, { status: 'published' });
      expect(byAdmin.status).toBe(409);
      expect(byAdmin.body).toEqual(errorBody('conflict', 'cannot change status from archived to published'));
      const read = await as(alice).get(`/v1/articles/${article.id}`);
      expect(read.body).toEqual(archived);
    });

    it('still lets the author edit an archived article’s other fields', async () => {
      const article = await postArticle(alice, { title: 'Archived edit', status: 'archived' });
      const res = await as(alice).patch(`/v1/articles/${article.id}`, { title: 'Renamed in the archive' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ title: 'Renamed in the archive', status: 'archived' });
    });
  });

  describe('PATCH and PUT /v1/articles/{id}', () => {
    it('PATCH changes only the fields sent; tags are replaced as a whole', async () => {
      const article = await postArticle(alice, { title: 'Patch me', body: 'Keep', status: 'published', tags: ['nestjs'] });
      await sleep(5);
      const res = await as(alice).patch(`/v1/articles/${article.id}`, { tags: ['SQLite', 'esm'] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...article, tags: ['esm', 'sqlite'], updated_at: expect.stringMatching(ISO_MS) });
      expect(Date.parse(res.body.updated_at)).toBeGreaterThan(Date.parse(article.updated_at));
      const title = await as(alice).patch(`/v1/articles/${article.id}`, { title: 'Patched' });
      expect(title.body).toEqual({ ...article, title: 'Patched', tags: ['esm', 'sqlite'], updated_at: expect.stringMatching(ISO_MS) });
      const cleared = await as(alice).patch(`/v1/articles/${article.id}`, { tags: [], body: '' });
      expect(cleared.body).toMatchObject({ tags: [], body: '', title: 'Patched' });
      const read = await as(alice).get(`/v1/articles/${article.id}`);
      expect(read.body).toEqual(cleared.body);
    });

    it('accepts application/merge-patch+json', async () => {
      const article = await postArticle(alice, { title: 'Merge' });
      const res = await http()
        .patch(`/v1/articles/${article.id}`)
        .set('Authorization', bearer(alice.token))
        .set('Content-Type', 'application/merge-patch+json')
        .send(JSON.stringify({ status: 'published' }));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'published', published_at: expect.stringMatching(ISO_MS) });
    });

    it('PATCH answers null for title, body, status or tags with 400 and an unknown tag with 422, changing nothing', async () => {
      const article = await postArticle(alice, { title: 'Strict', body: 'b', tags: ['esm'] });
      for (const field of ['title', 'body', 'status', 'tags']) {
        const res = await as(alice).patch(`/v1/articles/${article.id}`, { [field]: null });
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ code: 'bad_request', details: [{ field, message: expect.any(String) }] });
      }
      const unknown = await as(alice).patch(`/v1/articles/${article.id}`, { title: 'Changed', tags: ['esm', 'missing'] });
      expect(unknown.status).toBe(422);
      expect(unknown.body).toEqual({
        ...errorBody('validation_failed', 'tag missing does not exist'),
        details: [{ field: 'tags[1]', message: 'tag missing does not exist' }],
      });
      const read = await as(alice).get(`/v1/articles/${article.id}`);
      expect(read.body).toEqual(article);
    });

    it('PUT replaces the article: omitted body → "", tags → [], status → draft (published → draft is allowed)', async () => {
      const article = await postArticle(alice, { title: 'Old', body: 'old body', status: 'published', tags: ['esm', 'nestjs'] });
      const res = await as(alice).put(`/v1/articles/${article.id}`, { title: 'New' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...article, title: 'New', body: '', tags: [], status: 'draft', updated_at: expect.stringMatching(ISO_MS) });
      expect(res.body.published_at).toBe(article.published_at);
      const read = await as(alice).get(`/v1/articles/${article.id}`);
      expect(read.body).toEqual(res.body);
    });

    it('PUT accepts what a GET returned (GET → edit → PUT)', async () => {
      const article = await postArticle(alice, { title: 'Round trip', body: 'text', status: 'published', tags: ['typeorm'] });
      const res = await as(alice).put(`/v1/articles/${article.id}`, { ...article, title: 'Round trip, edited' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...article, title: 'Round trip, edited', updated_at: expect.stringMatching(ISO_MS) });
    });

    it('PUT without status on an archived article is a refused transition (409), as is PUT draft', async () => {
      const article = await postArticle(alice, { title: 'Archived', status: 'archived' });
      const res = await as(alice).put(`/v1/articles/${article.id}`, { title: 'Revive' });
      expect(res.status).toBe(409);
      expect(res.body).toEqual(errorBody('conflict', 'cannot change status from archived to draft'));
      const same = await as(alice).put(`/v1/articles/${article.id}`, { title: 'Still archived', status: 'archived' });
      expect(same.status).toBe(200);
      expect(same.body).toMatchObject({ title: 'Still archived', status: 'archived' });
    });

    it('PUT answers a missing title with 400 and the merge-patch media type with 415', async () => {
      const article = await postArticle(alice, { title: 'Put rules' });
      const res = await as(alice).put(`/v1/articles/${article.id}`, { body: 'only body' });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'bad_request', details: [{ field: 'title', message: 'title is required' }] });
      const media = await http()
        .put(`/v1/articles/${article.id}`)
        .set('Authorization', bearer(alice.token))
        .set('Content-Type', 'application/merge-patch+json')
        .send(JSON.stringify({ title: 'x' }));
      expect(media.status).toBe(415);
      expect(media.body).toMatchObject({ code: 'unsupported_media_type' });
    });

    it('answers writes to a missing article with 404 and a bad id with 400', async () => {
      const patch = await as(alice).patch('/v1/articles/999999', { title: 'x' });
      expect(patch.status).toBe(404);
      expect(patch.body).toEqual(errorBody('not_found', 'article 999999 not found'));
      const put = await as(alice).put('/v1/articles/999999', { title: 'x' });
      expect(put.status).toBe(404);
      const del = await as(alice).delete('/v1/articles/999999');
      expect(del.status).toBe(404);
      expect(del.body).toEqual(errorBody('not_found', 'article 999999 not found'));
      const bad = await as(alice).patch('/v1/articles/0', { title: 'x' });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ code: 'bad_request', details: [{ field: 'id', message: expect.any(String) }] });
    });
  });

  describe('one transaction per write (article and tag links)', () => {
    it('rolls a failing POST back completely: no article without its tags', async () => {
      const dataSource = app.get(DataSource);
      const before = await countArticles();
      const restore = await breakTagLinks(dataSource);
      try {
        const res = await as(alice).post('/v1/articles', { title: 'Half written?', tags: ['esm'] });
        expect(res.status).toBe(500);
        expect(res.body).toEqual(errorBody('internal', 'internal server error'));
        expect(JSON.stringify(res.body)).not.toMatch(/boom|article_tags|INSERT/i);
      } finally {
        await restore();
      }
      expect(await countArticles()).toBe(before);
      expect(await dataSource.getRepository(Article).count({ where: { title: 'Half written?' } })).toBe(0);
    });

    it('rolls a failing PUT back completely: title, status and old tags stay', async () => {
      const dataSource = app.get(DataSource);
      const article = await postArticle(alice, { title: 'Before', status: 'draft', tags: ['nestjs'] });
      const restore = await breakTagLinks(dataSource);
      try {
        const res = await as(alice).put(`/v1/articles/${article.id}`, { title: 'After', status: 'published', tags: ['esm'] });
        expect(res.status).toBe(500);
        expect(res.body).toEqual(errorBody('internal', 'internal server error'));
      } finally {
        await restore();
      }
      const read = await as(alice).get(`/v1/articles/${article.id}`);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(article);
      expect(await dataSource.getRepository(ArticleTag).count({ where: { article_id: article.id } })).toBe(1);
    });
  });

  describe('visibility and ownership', () => {
    let draft: Record<string, any>;
    let archived: Record<string, any>;
    let published: Record<string, any>;

    beforeAll(async () => {
      // a fresh author and tag, so that lists hold only these three
      alice = await createUser(app);
      await createTag(app, { name: 'visibility' });
      draft = await postArticle(alice, { title: 'Alice draft', tags: ['visibility'] });
      archived = await postArticle(alice, { title: 'Alice archived', status: 'archived', tags: ['visibility'] });
      published = await postArticle(alice, { title: 'Alice published', status: 'published', tags: ['visibility'] });
    });

    it('shows a published article to every caller', async () => {
      for (const user of [alice, bob, admin]) {
        const res = await as(user).get(`/v1/articles/${published.id}`);
        expect(res.status).toBe(200);
        expect(res.body).toEqual(published);
      }
    });

    it('answers another user’s draft or archived article with 403; its author and admins read it', async () => {
      for (const article of [draft, archived]) {
        const res = await as(bob).get(`/v1/articles/${article.id}`);
        expect(res.status).toBe(403);
        expect(res.body).toEqual(errorBody('forbidden', `article ${article.id} is ${article.status} and belongs to another user`));
        expect((await as(alice).get(`/v1/articles/${article.id}`)).body).toEqual(article);
        expect((await as(admin).get(`/v1/articles/${article.id}`)).body).toEqual(article);
      }
      const missing = await as(bob).get('/v1/articles/999999');
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual(errorBody('not_found', 'article 999999 not found'));
    });

    it('hides other users’ drafts and archived articles from lists, whatever the filters', async () => {
      const ids = (body: { data: Array<{ id: number }> }) => body.data.map((item) => item.id);
      const mine = (await as(bob).get('/v1/articles', { author: String(alice.user.id) })).body;
      expect(ids(mine)).toEqual([published.id]);
      expect(mine.total).toBe(1);
      for (const status of ['draft', 'archived']) {
        const res = await as(bob).get('/v1/articles', { status, author: String(alice.user.id) });
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ data: [], total: 0 });
      }
      const byTag = await as(bob).get('/v1/articles', { tag: 'visibility' });
      expect(ids(byTag.body)).toEqual([published.id]);
      const all = await as(bob).get('/v1/articles', { size: '100' });
      expect(ids(all.body)).not.toContain(draft.id);
      expect(ids(all.body)).not.toContain(archived.id);

      const own = await as(alice).get('/v1/articles', { tag: 'visibility' });
      expect(ids(own.body)).toEqual([draft.id, archived.id, published.id]);
      const adminView = await as(admin).get('/v1/articles', { tag: 'visibility', status: ['draft', 'archived'] });
      expect(ids(adminView.body)).toEqual([draft.id, archived.id]);
    });

    it('refuses PATCH, PUT and DELETE by another user with 403, readable or not, changing nothing', async () => {
      for (const article of [draft, published]) {
        const patch = await as(bob).patch(`/v1/articles/${article.id}`, { title: 'Bob was here' });
        expect(patch.status).toBe(403);
        expect(patch.body).toEqual(errorBody('forbidden', 'only the article’s author or an admin may change it'));
        const put = await as(bob).put(`/v1/articles/${article.id}`, { title: 'Bob was here' });
        expect(put.status).toBe(403);
        expect(put.body).toEqual(errorBody('forbidden'));
        const del = await as(bob).delete(`/v1/articles/${article.id}`);
        expect(del.status).toBe(403);
        expect(del.body).toEqual(errorBody('forbidden'));
        expect((await as(alice).get(`/v1/articles/${article.id}`)).body).toEqual(article);
      }
    });

    it('lets an admin change another user’s article, keeping its author', async () => {
      const article = await postArticle(alice, { title: 'Moderated', status: 'published' });
      const res = await as(admin).patch(`/v1/articles/${article.id}`, { status: 'archived', author: admin.user.id });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...article, status: 'archived', author: alice.user.id, updated_at: expect.stringMatching(ISO_MS) });
    });
  });

  describe('DELETE /v1/articles/{id}', () => {
    it('answers 204 without a body, removes the comments and tag links, then 404', async () => {
      const article = await postArticle(alice, { title: 'Delete me', status: 'published', tags: ['esm'] });
      const comment = await as(bob).post(`/v1/articles/${article.id}/comments`, { body: 'First!' });
      expect(comment.status).toBe(201);
      const res = await as(alice).delete(`/v1/articles/${article.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(res.headers['content-type']).toBeUndefined();
      const read = await as(alice).get(`/v1/articles/${article.id}`);
      expect(read.status).toBe(404);
      expect(read.body).toEqual(errorBody('not_found', `article ${article.id} not found`));
      const dataSource = app.get(DataSource);
      expect(await dataSource.getRepository(Comment).count({ where: { article_id: article.id } })).toBe(0);
      expect(await dataSource.getRepository(ArticleTag).count({ where: { article_id: article.id } })).toBe(0);
      const again = await as(alice).delete(`/v1/articles/${article.id}`);
      expect(again.status).toBe(404);
    });

    it('lets an admin delete another user’s draft', async () => {
      const article = await postArticle(bob, { title: 'Bob draft' });
      const res = await as(admin).delete(`/v1/articles/${article.id}`);
      expect(res.status).toBe(204);
      expect((await as(bob).get(`/v1/articles/${article.id}`)).status).toBe(404);
    });
  });

  describe('deleting a user (docs/resources/users.md)', () => {
    it('removes their articles and their comments, and nobody else’s', async () => {
      const carol = await createUser(app);
      const own = await postArticle(carol, { title: 'Carol article', status: 'published', tags: ['esm'] });
      const other = await postArticle(alice, { title: 'Alice article', status: 'published' });
      const onOwn = await as(alice).post(`/v1/articles/${own.id}/comments`, { body: 'Alice on Carol' });
      const onOther = await as(carol).post(`/v1/articles/${other.id}/comments`, { body: 'Carol on Alice' });
      const aliceOnOther = await as(alice).post(`/v1/articles/${other.id}/comments`, { body: 'Alice on Alice' });
      expect([onOwn.status, onOther.status, aliceOnOther.status]).toEqual([201, 201, 201]);

      const res = await as(carol).delete(`/v1/users/${carol.user.id}`);
      expect(res.status).toBe(204);

      expect((await as(alice).get(`/v1/articles/${own.id}`)).status).toBe(404);
      const comments = await as(alice).get(`/v1/articles/${other.id}/comments`);
      expect(comments.status).toBe(200);
      expect(comments.body.data.map((c: { id: number }) => c.id)).toEqual([aliceOnOther.body.id]);
      const dataSource = app.get(DataSource);
      expect(await dataSource.getRepository(Article).count({ where: { author_id: carol.user.id } })).toBe(0);
      expect(await dataSource.getRepository(Comment).count({ where: { author_id: carol.user.id } })).toBe(0);
      expect(await dataSource.getRepository(Comment).count({ where: { article_id: own.id } })).toBe(0);
    });
  });

  describe('GET /v1/articles (docs/lists.md)', () => {
    let dave: CreatedUser;
    let erin: CreatedUser;
    let boss: CreatedUser;
    let tags: Record<string, Tag>;
    /** Articles in insertion (= id) order. */
    let a: Article[];

    const ids = (body: { data: Array<{ id: number }> }) => body.data.map((item) => item.id);
    const list = (user: CreatedUser, query: Record<string, string | string[]> | string = {}) => as(user).get('/v1/articles', query);

    beforeAll(async () => {
      await truncateAll(app);
      dave = await createUser(app);
      erin = await createUser(app);
      boss = await createUser(app, { role: 'admin' });
      tags = {};
      for (const name of ['red', 'green', 'blue']) tags[name] = await createTag(app, { name });
      const t0 = Date.parse('2026-01-01T10:00:00.000Z');
      const at = (ms: number) => new Date(t0 + ms);
      a = [];
      a.push(await createArticle(app, dave.user, { title: 'delta', status: 'published', created_at: at(0), published_at: at(5000) }, [tags.red, tags.green]));
      a.push(await createArticle(app, dave.user, { title: 'alpha', status: 'published', created_at: at(1000), published_at: at(1000) }, [tags.blue]));
      a.push(await createArticle(app, dave.user, { title: 'charlie', status: 'draft', created_at: at(1000) }, [tags.red]));
      a.push(await createArticle(app, erin.user, { title: 'bravo', status: 'published', created_at: at(2000), published_at: at(3000) }, [tags.red]));
      a.push(await createArticle(app, erin.user, { title: 'alpha', status: 'archived', created_at: at(3000), published_at: at(3000) }, [tags.green]));
      a.push(await createArticle(app, erin.user, { title: 'echo', status: 'draft', created_at: at(500) }));
    });

    it('returns the envelope with the articles the caller may read, id ascending', async () => {
      const res = await list(dave);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(Object.keys(res.body).sort()).toEqual(['data', 'links', 'page', 'size', 'total']);
      expect(res.body).toMatchObject({ page: 1, size: 20, total: 4 });
      expect(ids(res.body)).toEqual([a[0].id, a[1].id, a[2].id, a[3].id]);
      expect(ids((await list(erin)).body)).toEqual([a[0].id, a[1].id, a[3].id, a[4].id, a[5].id]);
      expect((await list(boss)).body.total).toBe(6);
    });

    it('returns each element exactly as the single GET, with sorted tag names', async () => {
      const res = await list(boss);
      expect(res.body.data).toHaveLength(6);
      for (const item of res.body.data) {
        const one = await as(boss).get(`/v1/articles/${item.id}`);
        expect(one.status).toBe(200);
        expect(item).toEqual(one.body);
      }
      expect(res.body.data[0]).toEqual({
        ...articleShape({
          id: a[0].id,
          title: 'delta',
          body: '',
          status: 'published',
          tags: ['green', 'red'],
          author: dave.user.id,
          published_at: '2026-01-01T10:00:05.000Z',
        }),
        created_at: '2026-01-01T10:00:00.000Z',
        updated_at: '2026-01-01T10:00:00.000Z',
      });
      expect(res.body.data[5]).toMatchObject({ tags: [], published_at: null });
    });

    it('loads the tags of a whole page with one query, not one per article', async () => {
      const spy = jest.spyOn(SelectQueryBuilder.prototype, 'getRawMany');
      const queriesFor = async (size: string) => {
        spy.mockClear();
        const res = await list(boss, { size });
        expect(res.status).toBe(200);
        expect(res.body.data).toHaveLength(Number(size));
        return spy.mock.calls.length;
      };
      try {
        const one = await queriesFor('1');
        const six = await queriesFor('6');
        expect(six).toBe(one);
        expect(six).toBeLessThanOrEqual(3); // the page, its count, the page's tags
      } finally {
        spy.mockRestore();
      }
    });

    it('filters by status, author and tag (repeated = any of), within what the caller may read', async () => {
      expect(ids((await list(boss, { status: 'draft' })).body)).toEqual([a[2].id, a[5].id]);
      expect(ids((await list(boss, { status: ['draft', 'archived'] })).body)).toEqual([a[2].id, a[4].id, a[5].id]);
      expect(ids((await list(dave, { author: String(erin.user.id) })).body)).toEqual([a[3].id]);
      expect(ids((await list(dave, { tag: 'red' })).body)).toEqual([a[0].id, a[2].id, a[3].id]);
      expect(ids((await list(erin, { tag: 'red' })).body)).toEqual([a[0].id, a[3].id]);
      expect(ids((await list(boss, { tag: 'RED' })).body)).toEqual([a[0].id, a[2].id, a[3].id]);
      const any = await list(boss, 'tag=blue&tag=green');
      expect(ids(any.body)).toEqual([a[0].id, a[1].id, a[4].id]);
      expect(any.body.total).toBe(3);
      expect(ids((await list(boss, { tag: ['red', 'green'], author: String(dave.user.id), status: 'published' })).body)).toEqual([a[0].id]);
      const none = await list(boss, { tag: 'no-such-tag' });
      expect(none.status).toBe(200);
      expect(none.body).toMatchObject({ data: [], total: 0 });
    });

    it('answers bad filter values with 400', async () => {
      const status = await list(boss, { status: 'deleted' });
      expect(status.status).toBe(400);
      expect(status.body).toMatchObject({ code: 'bad_request', details: [{ field: 'status', message: expect.any(String) }] });
      const author = await list(boss, { author: 'dave' });
      expect(author.status).toBe(400);
      expect(author.body).toMatchObject({ code: 'bad_request', details: [{ field: 'author', message: expect.any(String) }] });
      const unknown = await list(boss, { tags: 'red' });
      expect(unknown.status).toBe(400);
      expect(unknown.body).toMatchObject({ code: 'bad_request', details: [{ field: 'tags', message: 'unknown query parameter tags' }] });
    });

    it('sorts by title, created_at, updated_at and published_at (nulls last ascending), several keys, id last in the first key’s direction', async () => {
      expect(ids((await list(boss, { sort: 'title' })).body)).toEqual([a[1].id, a[4].id, a[3].id, a[2].id, a[0].id, a[5].id]);
      // ties (the two alphas; the unpublished ones; published_at 3000) go by id in the key's direction
      expect(ids((await list(boss, { sort: '-title' })).body)).toEqual([a[5].id, a[0].id, a[2].id, a[3].id, a[4].id, a[1].id]);
      expect(ids((await list(boss, { sort: 'created_at' })).body)).toEqual([a[0].id, a[5].id, a[1].id, a[2].id, a[3].id, a[4].id]);
      expect(ids((await list(boss, { sort: '-created_at,title' })).body)).toEqual([a[4].id, a[3].id, a[1].id, a[2].id, a[5].id, a[0].id]);
      expect(ids((await list(boss, { sort: 'title,-created_at' })).body)).toEqual([a[4].id, a[1].id, a[3].id, a[2].id, a[0].id, a[5].id]);
      expect(ids((await list(boss, { sort: 'updated_at' })).body)).toEqual([a[0].id, a[5].id, a[1].id, a[2].id, a[3].id, a[4].id]);
      expect(ids((await list(boss, { sort: 'published_at' })).body)).toEqual([a[1].id, a[3].id, a[4].id, a[0].id, a[2].id, a[5].id]);
      expect(ids((await list(boss, { sort: '-published_at' })).body)).toEqual([a[5].id, a[2].id, a[0].id, a[4].id, a[3].id, a[1].id]);
      const bad = await list(boss, { sort: 'status' });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ code: 'bad_request', details: [{ field: 'sort', message: expect.stringContaining('status') }] });
    });

    it('pages with page/size (links keep filters and sort) and offset/limit', async () => {
      const res = await list(boss, { sort: 'title', tag: ['red', 'green'], size: '2', page: '2' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ page: 2, size: 2, total: 4 });
      expect(ids(res.body)).toEqual([a[2].id, a[0].id]);
      expect(res.body.links.map((l: { rel: string }) => l.rel)).toEqual(['self', 'first', 'prev', 'last']);
      const prev = new URL(res.body.links.find((l: { rel: string }) => l.rel === 'prev').href, 'http://x');
      expect(prev.pathname).toBe('/v1/articles');
      expect(prev.searchParams.getAll('tag').sort()).toEqual(['green', 'red']);
      expect(prev.searchParams.get('sort')).toBe('title');
      expect(prev.searchParams.get('page')).toBe('1');

      const offset = await list(boss, { offset: '4', limit: '3' });
      expect(offset.body).toMatchObject({ offset: 4, limit: 3, page: 2, size: 3, total: 6 });
      expect(ids(offset.body)).toEqual([a[4].id, a[5].id]);
      const past = await list(boss, { page: '9', size: '5' });
      expect(past.status).toBe(200);
      expect(past.body).toMatchObject({ data: [], page: 9, total: 6 });
      const mixed = await list(boss, { page: '1', limit: '3' });
      expect(mixed.status).toBe(400);
      expect(mixed.body).toMatchObject({ code: 'bad_request' });
    });

    it('applies fields= in lists and single reads, tags included or left out', async () => {
      const links = articleShape({ id: a[0].id, author: dave.user.id } as Shape).links;
      const withTags = await list(boss, { fields: 'title,tags', size: '1' });
      expect(withTags.status).toBe(200);
      expect(withTags.body.data).toEqual([{ id: a[0].id, title: 'delta', tags: ['green', 'red'], links }]);
      const noTags = await list(boss, { fields: 'status,published_at', size: '1' });
      expect(noTags.body.data).toEqual([{ id: a[0].id, status: 'published', published_at: '2026-01-01T10:00:05.000Z', links }]);
      const one = await as(dave).get(`/v1/articles/${a[0].id}`, { fields: 'tags,author' });
      expect(one.status).toBe(200);
      expect(one.body).toEqual({ id: a[0].id, tags: ['green', 'red'], author: dave.user.id, links });
      const bad = await as(dave).get(`/v1/articles/${a[0].id}`, { fields: 'tags,secret' });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ code: 'bad_request', details: [{ field: 'fields', message: expect.stringContaining('secret') }] });
    });

    it('needs a credential', async () => {
      const res = await http().get('/v1/articles');
      expect(res.status).toBe(401);
      expect(res.body).toEqual(errorBody('unauthorized'));
      expect(res.headers['www-authenticate']).toBe('Bearer realm="api"');
    });
  });

  describe('documentation (README.md#api-documentation-and-clients)', () => {
    type Doc = {
      paths: Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: { content: Record<string, { schema: { $ref: string } }> } }>>;
      components: { schemas: Record<string, { properties?: Record<string, any>; required?: string[] }> };
    };
    let doc: Doc;
    const statuses = (path: string, method: string) => Object.keys(doc.paths[path][method].responses).sort();
    const bodyOf = (path: string, method: string) => doc.paths[path][method].requestBody?.content['application/json'].schema.$ref;

    beforeAll(async () => {
      const res = await http().get('/docs/v1/openapi.json');
      expect(res.status).toBe(200);
      doc = res.body;
    });

    it('names the schemas Article, ArticleList, CreateArticleBody, ReplaceArticleBody and UpdateArticleBody', () => {
      const schemas = doc.components.schemas;
      expect(Object.keys(schemas.Article.properties ?? {}).sort()).toEqual([
        'author',
        'body',
        'comments',
        'created_at',
        'id',
        'links',
        'published_at',
        'status',
        'tags',
        'title',
        'updated_at',
      ]);
      expect(schemas.Article.properties?.status.enum).toEqual(['draft', 'published', 'archived']);
      expect(schemas.ArticleList.properties?.data.items.$ref).toBe('#/components/schemas/Article');
      expect(schemas.CreateArticleBody.required).toEqual(['title']);
      expect(Object.keys(schemas.CreateArticleBody.properties ?? {}).sort()).toEqual(['body', 'status', 'tags', 'title']);
      expect(schemas.UpdateArticleBody.required ?? []).toEqual([]);
      expect(bodyOf('/v1/articles', 'post')).toBe('#/components/schemas/CreateArticleBody');
      expect(bodyOf('/v1/articles/{id}', 'put')).toBe('#/components/schemas/ReplaceArticleBody');
      expect(bodyOf('/v1/articles/{id}', 'patch')).toBe('#/components/schemas/UpdateArticleBody');
    });

    it('documents every error status of every articles operation', () => {
      // 409: a request with the same Idempotency-Key is still running
      expect(statuses('/v1/articles', 'post')).toEqual(['201', '400', '401', '403', '409', '413', '415', '422', '429', '500', '503']);
      expect(statuses('/v1/articles', 'get')).toEqual(['200', '400', '401', '403', '429', '500', '503']);
      expect(statuses('/v1/articles/{id}', 'get')).toEqual(['200', '304', '400', '401', '403', '404', '429', '500', '503']);
      for (const method of ['put', 'patch'])
        expect(statuses('/v1/articles/{id}', method)).toEqual([
          '200',
          '400',
          '401',
          '403',
          '404',
          '409',
          '412',
          '413',
          '415',
          '422',
          '428',
          '429',
          '500',
          '503',
        ]);
      expect(statuses('/v1/articles/{id}', 'delete')).toEqual(['204', '400', '401', '403', '404', '412', '428', '429', '500', '503']);
    });
  });

  describe('API-key scopes (docs/authentication.md#api-keys)', () => {
    it('needs articles:read to read and articles:write to write', async () => {
      const owner = await createUser(app);
      const key = await as(owner).post('/v1/api-keys', { name: 'articles', scopes: ['articles:read'] });
      expect(key.status).toBe(201);
      const read = await http().get('/v1/articles').set('X-API-Key', key.body.key);
      expect(read.status).toBe(200);
      const write = await http().post('/v1/articles').set('X-API-Key', key.body.key).send({ title: 'By key' });
      expect(write.status).toBe(403);
      expect(write.body).toEqual(errorBody('forbidden', 'missing scope articles:write'));
      const writer = await as(owner).post('/v1/api-keys', { name: 'articles-write', scopes: ['articles:write'] });
      const created = await http().post('/v1/articles').set('X-API-Key', writer.body.key).send({ title: 'By key' });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ title: 'By key', author: owner.user.id });
    });
  });
});
