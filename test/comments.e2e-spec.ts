import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type { Article } from '../src/articles/article.entity.js';
import { Comment } from '../src/comments/comment.entity.js';
import { createArticle } from './factories/article.factory.js';
import { createComment } from './factories/comment.factory.js';
import { bearer, createUser, type CreatedUser } from './factories/user.factory.js';
import { createTestApp, truncateAll } from './setup/test-app.js';
import { errorBody } from './setup/error-body.js';
import { ISO_MS } from './setup/formats.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A comment as returned by the API. */
type CommentBody = Record<string, any> & { id: number };

/** The response object of a comment (docs/resources/comments.md), for exact comparisons. */
function commentShape(fields: { id: number; body: string; article: number; author: number }) {
  return {
    ...fields,
    created_at: expect.stringMatching(ISO_MS),
    updated_at: expect.stringMatching(ISO_MS),
    links: [
      { rel: 'self', href: `/v1/articles/${fields.article}/comments/${fields.id}` },
      { rel: 'article', href: `/v1/articles/${fields.article}` },
      { rel: 'author', href: `/v1/users/${fields.author}` },
    ],
  };
}

describe('comments (docs/resources/comments.md)', () => {
  let app: NestExpressApplication;
  /** Writes articles. */
  let alice: CreatedUser;
  /** Comments. */
  let bob: CreatedUser;
  /** Another reader. */
  let carol: CreatedUser;
  let admin: CreatedUser;
  let published: Article;
  let draft: Article;
  let archived: Article;
  let other: Article;

  const http = () => request(app.getHttpServer());
  const as = (user: CreatedUser) => ({
    get: (path: string, query: Record<string, string | string[]> | string = {}) => http().get(path).query(query).set('Authorization', bearer(user.token)),
    post: (path: string, body: object) => http().post(path).set('Authorization', bearer(user.token)).send(body),
    put: (path: string, body: object) => http().put(path).set('Authorization', bearer(user.token)).send(body),
    patch: (path: string, body: object) => http().patch(path).set('Authorization', bearer(user.token)).send(body),
    delete: (path: string) => http().delete(path).set('Authorization', bearer(user.token)),
  });
  const path = (article: { id: number }, comment?: { id: number } | number) =>
    `/v1/articles/${article.id}/comments${comment === undefined ? '' : `/${typeof comment === 'number' ? comment : comment.id}`}`;

  /** Comments through the API; returns the response body. */
  async function postComment(user: CreatedUser, article: { id: number }, body: string): Promise<CommentBody> {
    const res = await as(user).post(path(article), { body });
    expect(res.status).toBe(201);
    return res.body;
  }

  beforeAll(async () => {
    app = await createTestApp();
    alice = await createUser(app);
    bob = await createUser(app);
    carol = await createUser(app);
    admin = await createUser(app, { role: 'admin' });
    published = await createArticle(app, alice.user, { status: 'published' });
    draft = await createArticle(app, alice.user, { status: 'draft' });
    archived = await createArticle(app, alice.user, { status: 'archived' });
    other = await createArticle(app, carol.user, { status: 'published' });
  });
  afterAll(async () => {
    await app.close();
  });

  describe('POST /v1/articles/{id}/comments', () => {
    it('comments on a published article: 201, Location, shape and links', async () => {
      const res = await as(bob).post(path(published), { body: 'Nice article.' });
      expect(res.status).toBe(201);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body).toEqual(commentShape({ id: res.body.id, body: 'Nice article.', article: published.id, author: bob.user.id }));
      expect(res.headers.location).toBe(path(published, res.body.id));
      expect(res.body.created_at).toBe(res.body.updated_at);

      const read = await as(carol).get(res.headers.location);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(res.body);
    });

    it('ignores author, article and the other read-only properties', async () => {
      const res = await as(bob).post(path(published), { body: 'Mine', author: carol.user.id, article: other.id, id: 999, links: [] });
      expect(res.status).toBe(201);
      expect(res.body).toEqual(commentShape({ id: res.body.id, body: 'Mine', article: published.id, author: bob.user.id }));
    });

    it('answers a comment on a draft or archived article with 409 naming the status, even for its author', async () => {
      for (const [article, status] of [
        [draft, 'draft'],
        [archived, 'archived'],
      ] as const) {
        const res = await as(alice).post(path(article), { body: 'Hello?' });
        expect(res.status).toBe(409);
        expect(res.body).toEqual(errorBody('conflict', `article ${article.id} is ${status}; only published articles take comments`));
        const byAdmin = await as(admin).post(path(article), { body: 'Hello?' });
        expect(byAdmin.status).toBe(409);
      }
      expect(
        await app
          .get(DataSource)
          .getRepository(Comment)
          .count({ where: { article_id: draft.id } }),
      ).toBe(0);
    });

    it('answers a comment on another user’s draft with 403 and on a missing article with 404', async () => {
      const forbidden = await as(bob).post(path(draft), { body: 'Peek' });
      expect(forbidden.status).toBe(403);
      expect(forbidden.body).toEqual(errorBody('forbidden', `article ${draft.id} is draft and belongs to another user`));
      const missing = await as(bob).post(path({ id: 999999 }), { body: 'Anyone?' });
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual(errorBody('not_found', 'article 999999 not found'));
    });

    it('answers a missing, null, empty or non-string body with 400, and 5,001 characters with 422', async () => {
      const missing = await as(bob).post(path(published), {});
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({ ...errorBody('bad_request', 'body is required'), details: [{ field: 'body', message: 'body is required' }] });
      for (const body of [{ body: null }, { body: '' }, { body: 5 }]) {
        const res = await as(bob).post(path(published), body);
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ code: 'bad_request', details: [{ field: 'body', message: expect.any(String) }] });
      }
      const longest = await as(bob).post(path(published), { body: 'c'.repeat(5_000) });
      expect(longest.status).toBe(201);
      const tooLong = await as(bob).post(path(published), { body: 'c'.repeat(5_001) });
      expect(tooLong.status).toBe(422);
      expect(tooLong.body).toMatchObject({ code: 'validation_failed', details: [{ field: 'body', message: expect.any(String) }] });
      const unknown = await as(bob).post(path(published), { body: 'x', rating: 5 });
      expect(unknown.status).toBe(400);
      expect(unknown.body).toMatchObject({ code: 'bad_request', details: [{ field: 'rating', message: 'rating is not an accepted property' }] });
    });

    it('answers bad path ids with 400 naming the parameter, and no credential with 401', async () => {
      const article = await as(bob).get('/v1/articles/abc/comments');
      expect(article.status).toBe(400);
      expect(article.body).toMatchObject({ code: 'bad_request', details: [{ field: 'id', message: expect.any(String) }] });
      const comment = await as(bob).get(`/v1/articles/${published.id}/comments/0`);
      expect(comment.status).toBe(400);
      expect(comment.body).toMatchObject({ code: 'bad_request', details: [{ field: 'comment_id', message: expect.any(String) }] });
      const anon = await http().post(path(published)).send({ body: 'x' });
      expect(anon.status).toBe(401);
      expect(anon.body).toEqual(errorBody('unauthorized'));
    });
  });

  describe('reading: whenever the article is readable', () => {
    let onDraft: Comment;
    let onPublished: CommentBody;

    beforeAll(async () => {
      onDraft = await createComment(app, draft, alice.user, { body: 'note to self' });
      onPublished = await postComment(bob, published, 'Readable');
    });

    it('answers another user’s draft’s comments with 403 (list and single) and lets its author and admins read them', async () => {
      const list = await as(bob).get(path(draft));
      expect(list.status).toBe(403);
      expect(list.body).toEqual(errorBody('forbidden', `article ${draft.id} is draft and belongs to another user`));
      const one = await as(bob).get(path(draft, onDraft));
      expect(one.status).toBe(403);
      expect(one.body).toEqual(errorBody('forbidden'));
      for (const user of [alice, admin]) {
        const res = await as(user).get(path(draft));
        expect(res.status).toBe(200);
        expect(res.body.data).toEqual([commentShape({ id: onDraft.id, body: 'note to self', article: draft.id, author: alice.user.id })]);
      }
    });

    it('answers a missing article with 404 (list and single)', async () => {
      const list = await as(bob).get(path({ id: 999999 }));
      expect(list.status).toBe(404);
      expect(list.body).toEqual(errorBody('not_found', 'article 999999 not found'));
      const one = await as(bob).get(path({ id: 999999 }, onPublished.id));
      expect(one.status).toBe(404);
      expect(one.body).toEqual(errorBody('not_found', 'article 999999 not found'));
    });

    it('answers a missing comment, or one under another article, with 404', async () => {
      const missing = await as(bob).get(path(published, 999999));
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual(errorBody('not_found', 'comment 999999 not found'));
      const elsewhere = await as(bob).get(path(other, onPublished.id));
      expect(elsewhere.status).toBe(404);
      expect(elsewhere.body).toEqual(errorBody('not_found', `comment ${onPublished.id} not found`));
      for (const res of [
        await as(bob).patch(path(other, onPublished.id), { body: 'moved?' }),
        await as(bob).put(path(other, onPublished.id), { body: 'moved?' }),
        await as(bob).delete(path(other, onPublished.id)),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body).toEqual(errorBody('not_found', `comment ${onPublished.id} not found`));
      }
      expect((await as(bob).get(path(published, onPublished.id))).body).toEqual(onPublished);
    });

    it('hides the comments once the article goes back to draft (403 for others)', async () => {
      const article = await createArticle(app, alice.user, { status: 'published' });
      const comment = await postComment(bob, article, 'Before unpublishing');
      const unpublish = await as(alice).patch(`/v1/articles/${article.id}`, { status: 'draft' });
      expect(unpublish.status).toBe(200);
      const res = await as(bob).get(path(article, comment.id));
      expect(res.status).toBe(403);
      expect(res.body).toEqual(errorBody('forbidden'));
      const edit = await as(bob).patch(path(article, comment.id), { body: 'Edited' });
      expect(edit.status).toBe(403);
      expect((await as(alice).get(path(article, comment.id))).body).toEqual(comment);
    });

    it('applies fields= to a single comment', async () => {
      const res = await as(carol).get(path(published, onPublished.id), { fields: 'author' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: onPublished.id, author: bob.user.id, links: onPublished.links });
      const bad = await as(carol).get(path(published, onPublished.id), { fields: 'title' });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ code: 'bad_request', details: [{ field: 'fields', message: expect.stringContaining('title') }] });
    });
  });

  describe('editing (PUT, PATCH): the comment’s author only', () => {
    it('lets the author change the body with PATCH and PUT, moving updated_at', async () => {
      const comment = await postComment(bob, published, 'Frist');
      await sleep(5);
      const patch = await as(bob).patch(path(published, comment), { body: 'First' });
      expect(patch.status).toBe(200);
      expect(patch.body).toEqual({ ...comment, body: 'First', updated_at: expect.stringMatching(ISO_MS) });
      expect(Date.parse(patch.body.updated_at)).toBeGreaterThan(Date.parse(comment.updated_at));
      const put = await as(bob).put(path(published, comment), { ...patch.body, body: 'First!' });
      expect(put.status).toBe(200);
      expect(put.body).toEqual({ ...comment, body: 'First!', updated_at: expect.stringMatching(ISO_MS) });
      const empty = await as(bob).patch(path(published, comment), {});
      expect(empty.status).toBe(200);
      expect(empty.body).toMatchObject({ body: 'First!' });
      const read = await as(carol).get(path(published, comment));
      expect(read.body).toEqual(empty.body);
    });

    it('refuses edits by the article’s author, an admin or anyone else with 403', async () => {
      const comment = await postComment(bob, published, 'Only mine to edit');
      for (const user of [alice, admin, carol]) {
        const patch = await as(user).patch(path(published, comment), { body: 'Edited' });
        expect(patch.status).toBe(403);
        expect(patch.body).toEqual(errorBody('forbidden', 'only the comment’s author may edit it'));
        const put = await as(user).put(path(published, comment), { body: 'Edited' });
        expect(put.status).toBe(403);
        expect(put.body).toEqual(errorBody('forbidden'));
      }
      expect((await as(bob).get(path(published, comment))).body).toEqual(comment);
    });

    it('answers a null body (PATCH) or a missing body (PUT) with 400, and changes nothing', async () => {
      const comment = await postComment(bob, published, 'Stays');
      const patch = await as(bob).patch(path(published, comment), { body: null });
      expect(patch.status).toBe(400);
      expect(patch.body).toMatchObject({ code: 'bad_request', details: [{ field: 'body', message: 'body is required' }] });
      const put = await as(bob).put(path(published, comment), {});
      expect(put.status).toBe(400);
      expect(put.body).toMatchObject({ code: 'bad_request', details: [{ field: 'body', message: 'body is required' }] });
      const tooLong = await as(bob).patch(path(published, comment), { body: 'x'.repeat(5_001) });
      expect(tooLong.status).toBe(422);
      expect((await as(bob).get(path(published, comment))).body).toEqual(comment);
    });

    it('answers an edit of a missing comment with 404', async () => {
      const res = await as(bob).patch(path(published, 999999), { body: 'x' });
      expect(res.status).toBe(404);
      expect(res.body).toEqual(errorBody('not_found', 'comment 999999 not found'));
    });
  });

  describe('DELETE: the comment’s author, the article’s author or an admin', () => {
    it('lets each of them delete (204, no body), then 404', async () => {
      for (const user of [bob, alice, admin]) {
        const comment = await postComment(bob, published, `Deleted by user ${user.user.id}`);
        const res = await as(user).delete(path(published, comment));
        expect(res.status).toBe(204);
        expect(res.text).toBe('');
        const read = await as(bob).get(path(published, comment));
        expect(read.status).toBe(404);
        expect(read.body).toEqual(errorBody('not_found', `comment ${comment.id} not found`));
      }
    });

    it('refuses anyone else with 403 and keeps the comment', async () => {
      const comment = await postComment(bob, published, 'Not yours');
      const res = await as(carol).delete(path(published, comment));
      expect(res.status).toBe(403);
      expect(res.body).toEqual(errorBody('forbidden', 'only the comment’s author, the article’s author or an admin may delete it'));
      expect((await as(bob).get(path(published, comment))).body).toEqual(comment);
      const again = await as(bob).delete(path(published, comment));
      expect(again.status).toBe(204);
      const gone = await as(bob).delete(path(published, comment));
      expect(gone.status).toBe(404);
    });
  });

  describe('GET /v1/articles/{id}/comments (docs/lists.md)', () => {
    let article: Article;
    let c: Comment[];

    const ids = (body: { data: Array<{ id: number }> }) => body.data.map((item) => item.id);
    const list = (user: CreatedUser, query: Record<string, string | string[]> | string = {}) => as(user).get(path(article), query);

    beforeAll(async () => {
      await truncateAll(app);
      alice = await createUser(app);
      bob = await createUser(app);
      carol = await createUser(app);
      article = await createArticle(app, alice.user, { status: 'published' });
      const elsewhere = await createArticle(app, alice.user, { status: 'published' });
      await createComment(app, elsewhere, bob.user);
      const t0 = Date.parse('2026-01-01T10:00:00.000Z');
      const at = (ms: number) => new Date(t0 + ms);
      c = [];
      c.push(await createComment(app, article, bob.user, { body: 'one', created_at: at(3000), updated_at: at(3000) }));
      c.push(await createComment(app, article, carol.user, { body: 'two', created_at: at(1000), updated_at: at(1000) }));
      c.push(await createComment(app, article, bob.user, { body: 'three', created_at: at(1000), updated_at: at(1000) }));
      c.push(await createComment(app, article, alice.user, { body: 'four', created_at: at(0), updated_at: at(0) }));
    });

    it('returns the envelope with the article’s comments only, id ascending, each equal to the single GET', async () => {
      const res = await list(carol);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['data', 'links', 'page', 'size', 'total']);
      expect(res.body).toMatchObject({ page: 1, size: 20, total: 4 });
      expect(ids(res.body)).toEqual(c.map((x) => x.id));
      for (const item of res.body.data) {
        const one = await as(carol).get(path(article, item.id));
        expect(item).toEqual(one.body);
      }
      expect(res.body.data[0]).toEqual({
        ...commentShape({ id: c[0].id, body: 'one', article: article.id, author: bob.user.id }),
        created_at: '2026-01-01T10:00:03.000Z',
        updated_at: '2026-01-01T10:00:03.000Z',
      });
      expect(res.body.links.find((l: { rel: string }) => l.rel === 'self').href).toBe(`/v1/articles/${article.id}/comments?page=1&size=20`);
    });

    it('filters by author (repeated = any of)', async () => {
      expect(ids((await list(carol, { author: String(bob.user.id) })).body)).toEqual([c[0].id, c[2].id]);
      expect(ids((await list(carol, { author: [String(carol.user.id), String(alice.user.id)] })).body)).toEqual([c[1].id, c[3].id]);
      const bad = await list(carol, { author: 'bob' });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ code: 'bad_request', details: [{ field: 'author', message: expect.any(String) }] });
    });

    it('sorts by created_at and -created_at with id as tie-breaker; other keys → 400', async () => {
      expect(ids((await list(carol, { sort: 'created_at' })).body)).toEqual([c[3].id, c[1].id, c[2].id, c[0].id]);
      expect(ids((await list(carol, { sort: '-created_at' })).body)).toEqual([c[0].id, c[2].id, c[1].id, c[3].id]);
      expect(ids((await list(carol, { sort: '-created_at,id' })).body)).toEqual([c[0].id, c[1].id, c[2].id, c[3].id]);
      const bad = await list(carol, { sort: 'body' });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ code: 'bad_request', details: [{ field: 'sort', message: expect.stringContaining('body') }] });
    });

    it('pages with page/size and offset/limit, and applies fields=', async () => {
      const page = await list(carol, { size: '3', page: '2' });
      expect(page.body).toMatchObject({ page: 2, size: 3, total: 4 });
      expect(ids(page.body)).toEqual([c[3].id]);
      const offset = await list(carol, { offset: '1', limit: '2' });
      expect(offset.body).toMatchObject({ offset: 1, limit: 2, page: 1, size: 2, total: 4 });
      expect(ids(offset.body)).toEqual([c[1].id, c[2].id]);
      const fields = await list(carol, { fields: 'body', size: '1' });
      expect(fields.body.data).toEqual([
        { id: c[0].id, body: 'one', links: commentShape({ id: c[0].id, body: '', article: article.id, author: bob.user.id }).links },
      ]);
      const unknown = await list(carol, { status: 'x' });
      expect(unknown.status).toBe(400);
      expect(unknown.body).toMatchObject({ code: 'bad_request', details: [{ field: 'status', message: 'unknown query parameter status' }] });
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

    it('names the schemas Comment, CommentList, CreateCommentBody and UpdateCommentBody', () => {
      const schemas = doc.components.schemas;
      expect(Object.keys(schemas.Comment.properties ?? {}).sort()).toEqual(['article', 'author', 'body', 'created_at', 'id', 'links', 'updated_at']);
      expect(schemas.CommentList.properties?.data.items.$ref).toBe('#/components/schemas/Comment');
      expect(schemas.CreateCommentBody.required).toEqual(['body']);
      expect(schemas.UpdateCommentBody.required ?? []).toEqual([]);
      expect(bodyOf('/v1/articles/{id}/comments', 'post')).toBe('#/components/schemas/CreateCommentBody');
      expect(bodyOf('/v1/articles/{id}/comments/{comment_id}', 'put')).toBe('#/components/schemas/CreateCommentBody');
      expect(bodyOf('/v1/articles/{id}/comments/{comment_id}', 'patch')).toBe('#/components/schemas/UpdateCommentBody');
    });

    it('documents every error status of every comments operation', () => {
      const one = '/v1/articles/{id}/comments/{comment_id}';
      expect(statuses('/v1/articles/{id}/comments', 'post')).toEqual(['201', '400', '401', '403', '404', '409', '413', '415', '422', '429', '500', '503']);
      expect(statuses('/v1/articles/{id}/comments', 'get')).toEqual(['200', '400', '401', '403', '404', '429', '500', '503']);
      expect(statuses(one, 'get')).toEqual(['200', '304', '400', '401', '403', '404', '429', '500', '503']);
      for (const method of ['put', 'patch'])
        expect(statuses(one, method)).toEqual(['200', '400', '401', '403', '404', '412', '413', '415', '422', '428', '429', '500', '503']);
      expect(statuses(one, 'delete')).toEqual(['204', '400', '401', '403', '404', '412', '428', '429', '500', '503']);
    });
  });

  describe('API-key scopes (docs/authentication.md#api-keys)', () => {
    it('needs comments:read to read comments and comments:write to comment', async () => {
      const owner = await createUser(app);
      const article = await createArticle(app, owner.user, { status: 'published' });
      const articlesOnly = await as(owner).post('/v1/api-keys', { name: 'articles', scopes: ['articles:read'] });
      expect(articlesOnly.status).toBe(201);
      const refused = await http().get(path(article)).set('X-API-Key', articlesOnly.body.key);
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual(errorBody('forbidden', 'missing scope comments:read'));

      const reader = await as(owner).post('/v1/api-keys', { name: 'comments', scopes: ['comments:read'] });
      const read = await http().get(path(article)).set('X-API-Key', reader.body.key);
      expect(read.status).toBe(200);
      const write = await http().post(path(article)).set('X-API-Key', reader.body.key).send({ body: 'By key' });
      expect(write.status).toBe(403);
      expect(write.body).toEqual(errorBody('forbidden', 'missing scope comments:write'));
    });
  });
});
