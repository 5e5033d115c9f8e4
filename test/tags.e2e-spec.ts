import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Tag } from '../src/tags/tag.entity.js';
import { createArticle } from './factories/article.factory.js';
import { createTag } from './factories/tag.factory.js';
import { bearer, createUser, type CreatedUser } from './factories/user.factory.js';
import { createTestApp, truncateAll } from './setup/test-app.js';
import { errorBody } from './setup/error-body.js';
import { ISO_MS } from './setup/formats.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The response object of a tag (docs/resources/tags.md), for exact comparisons. */
function tagShape(id: number, name: string) {
  return {
    id,
    name,
    created_at: expect.stringMatching(ISO_MS),
    updated_at: expect.stringMatching(ISO_MS),
    links: [
      { rel: 'self', href: `/v1/tags/${id}` },
      { rel: 'articles', href: `/v1/articles?tag=${name}` },
    ],
  };
}

describe('tags (docs/resources/tags.md)', () => {
  let app: NestExpressApplication;
  let alice: CreatedUser;
  let bob: CreatedUser;
  let admin: CreatedUser;

  const http = () => request(app.getHttpServer());

  async function postTag(token: string, name: string): Promise<Record<string, any>> {
    const res = await http().post('/v1/tags').set('Authorization', bearer(token)).send({ name });
    expect(res.status).toBe(201);
    return res.body;
  }

  beforeAll(async () => {
    app = await createTestApp();
    alice = await createUser(app);
    bob = await createUser(app);
    admin = await createUser(app, { role: 'admin' });
  });
  afterAll(async () => {
    await app.close();
  });

  describe('POST /v1/tags', () => {
    it('lets any user create a tag: 201, Location, shape and links', async () => {
      const res = await http().post('/v1/tags').set('Authorization', bearer(alice.token)).send({ name: 'nestjs' });
      expect(res.status).toBe(201);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body).toEqual(tagShape(res.body.id, 'nestjs'));
      expect(res.headers.location).toBe(`/v1/tags/${res.body.id}`);
      expect(res.body.created_at).toBe(res.body.updated_at);

      const read = await http().get(res.headers.location).set('Authorization', bearer(bob.token));
      expect(read.status).toBe(200);
      expect(read.body).toEqual(res.body);
    });

    it('stores the name lower-case', async () => {
      const res = await http().post('/v1/tags').set('Authorization', bearer(bob.token)).send({ name: 'Nest-12' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual(tagShape(res.body.id, 'nest-12'));
    });

    it('answers a taken name, in any case, with 409 naming it, and creates nothing', async () => {
      await postTag(alice.token, 'typeorm');
      const before = await app.get(DataSource).getRepository(Tag).count();
      for (const name of ['typeorm', 'TypeORM']) {
        const res = await http().post('/v1/tags').set('Authorization', bearer(bob.token)).send({ name });
        expect(res.status).toBe(409);
        expect(res.body).toEqual(errorBody('conflict', 'tag name typeorm is already taken'));
      }
      expect(await app.get(DataSource).getRepository(Tag).count()).toBe(before);
    });

    it('answers a missing, null, empty or non-string name with 400', async () => {
      for (const body of [{}, { name: null }, { name: '' }, { name: 7 }]) {
        const res = await http().post('/v1/tags').set('Authorization', bearer(alice.token)).send(body);
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ code: 'bad_request', details: [{ field: 'name', message: expect.any(String) }] });
      }
      const missing = await http().post('/v1/tags').set('Authorization', bearer(alice.token)).send({});
      expect(missing.body).toEqual({ ...errorBody('bad_request', 'name is required'), details: [{ field: 'name', message: 'name is required' }] });
    });

    it('accepts 50 characters and answers 51, spaces or other characters with 422', async () => {
      const ok = await http()
        .post('/v1/tags')
        .set('Authorization', bearer(alice.token))
        .send({ name: 'a'.repeat(50) });
      expect(ok.status).toBe(201);
      for (const name of ['a'.repeat(51), 'two words', 'c++', 'snake_case']) {
        const res = await http().post('/v1/tags').set('Authorization', bearer(alice.token)).send({ name });
        expect(res.status).toBe(422);
        expect(res.body).toEqual({
          ...errorBody('validation_failed', 'name must be 1-50 characters of a-z, 0-9 and -'),
          details: [{ field: 'name', message: 'name must be 1-50 characters of a-z, 0-9 and -' }],
        });
      }
    });

    it('answers an unaccepted property with 400 and ignores read-only ones', async () => {
      const bad = await http().post('/v1/tags').set('Authorization', bearer(alice.token)).send({ name: 'x1', colour: 'red' });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ code: 'bad_request', details: [{ field: 'colour', message: 'colour is not an accepted property' }] });

      const res = await http()
        .post('/v1/tags')
        .set('Authorization', bearer(alice.token))
        .send({ id: 999, name: 'read-only', created_at: '2000-01-01T00:00:00.000Z', links: [] });
      expect(res.status).toBe(201);
      expect(res.body.id).not.toBe(999);
      expect(res.body.created_at).not.toBe('2000-01-01T00:00:00.000Z');
    });

    it('needs a credential', async () => {
      const res = await http().post('/v1/tags').send({ name: 'anon' });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(errorBody('unauthorized'));
      expect(res.headers['www-authenticate']).toBe('Bearer realm="api"');
    });
  });

  describe('GET /v1/tags/{id}', () => {
    it('answers a missing tag with 404 and a bad id with 400', async () => {
      const missing = await http().get('/v1/tags/999999').set('Authorization', bearer(alice.token));
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual(errorBody('not_found', 'tag 999999 not found'));
      const bad = await http().get('/v1/tags/abc').set('Authorization', bearer(alice.token));
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ code: 'bad_request', details: [{ field: 'id', message: expect.any(String) }] });
    });

    it('returns id, the named fields and links with fields=', async () => {
      const tag = await postTag(alice.token, 'fields-one');
      const res = await http().get(`/v1/tags/${tag.id}`).query({ fields: 'created_at' }).set('Authorization', bearer(bob.token));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: tag.id, created_at: tag.created_at, links: tag.links });
      const bad = await http().get(`/v1/tags/${tag.id}`).query({ fields: 'colour' }).set('Authorization', bearer(bob.token));
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ code: 'bad_request', details: [{ field: 'fields', message: expect.stringContaining('colour') }] });
    });
  });

  describe('renaming (PUT, PATCH) and DELETE: admins only', () => {
    it('lets an admin rename with PUT and PATCH, lower-casing the name and moving updated_at', async () => {
      const tag = await postTag(alice.token, 'old-name');
      await sleep(5);
      const put = await http().put(`/v1/tags/${tag.id}`).set('Authorization', bearer(admin.token)).send({ name: 'New-Name' });
      expect(put.status).toBe(200);
      expect(put.body).toEqual({ ...tagShape(tag.id, 'new-name'), created_at: tag.created_at });
      expect(Date.parse(put.body.updated_at)).toBeGreaterThan(Date.parse(tag.updated_at));

      const patch = await http().patch(`/v1/tags/${tag.id}`).set('Authorization', bearer(admin.token)).send({ name: 'newer-name' });
      expect(patch.status).toBe(200);
      expect(patch.body).toEqual({ ...tagShape(tag.id, 'newer-name'), created_at: tag.created_at });

      const read = await http().get(`/v1/tags/${tag.id}`).set('Authorization', bearer(alice.token));
      expect(read.status).toBe(200);
      expect(read.body).toEqual(patch.body);
    });

    it('accepts the tag’s own name (GET → PUT) and an empty PATCH', async () => {
      const tag = await postTag(alice.token, 'same-name');
      const put = await http()
        .put(`/v1/tags/${tag.id}`)
        .set('Authorization', bearer(admin.token))
        .send({ ...tag, name: 'SAME-NAME' });
      expect(put.status).toBe(200);
      expect(put.body).toEqual({ ...tag, updated_at: expect.stringMatching(ISO_MS) });
      const patch = await http().patch(`/v1/tags/${tag.id}`).set('Authorization', bearer(admin.token)).send({});
      expect(patch.status).toBe(200);
      expect(patch.body).toEqual({ ...tag, updated_at: expect.stringMatching(ISO_MS) });
    });

    it('answers a rename to a taken name (any case) with 409 and keeps the name', async () => {
      await postTag(alice.token, 'taken');
      const tag = await postTag(alice.token, 'free');
      for (const send of [(b: object) => http().put(`/v1/tags/${tag.id}`).send(b), (b: object) => http().patch(`/v1/tags/${tag.id}`).send(b)]) {
        const res = await send({ name: 'Taken' }).set('Authorization', bearer(admin.token));
        expect(res.status).toBe(409);
        expect(res.body).toEqual(errorBody('conflict', 'tag name taken is already taken'));
      }
      const read = await http().get(`/v1/tags/${tag.id}`).set('Authorization', bearer(alice.token));
      expect(read.body).toEqual(tag);
    });

    it('answers PUT without a name with 400, PATCH with a null name with 400, a bad name with 422', async () => {
      const tag = await postTag(alice.token, 'strict');
      const put = await http().put(`/v1/tags/${tag.id}`).set('Authorization', bearer(admin.token)).send({});
      expect(put.status).toBe(400);
      expect(put.body).toMatchObject({ code: 'bad_request', details: [{ field: 'name', message: 'name is required' }] });
      const nul = await http().patch(`/v1/tags/${tag.id}`).set('Authorization', bearer(admin.token)).send({ name: null });
      expect(nul.status).toBe(400);
      expect(nul.body).toMatchObject({ code: 'bad_request', details: [{ field: 'name', message: 'name is required' }] });
      const bad = await http().patch(`/v1/tags/${tag.id}`).set('Authorization', bearer(admin.token)).send({ name: 'no spaces' });
      expect(bad.status).toBe(422);
      expect(bad.body).toMatchObject({ code: 'validation_failed', details: [{ field: 'name', message: expect.any(String) }] });
    });

    it('refuses rename and delete by a non-admin with 403, even by the tag’s creator', async () => {
      const tag = await postTag(alice.token, 'mine');
      const put = await http().put(`/v1/tags/${tag.id}`).set('Authorization', bearer(alice.token)).send({ name: 'yours' });
      expect(put.status).toBe(403);
      expect(put.body).toEqual(errorBody('forbidden', 'this operation needs the admin role'));
      const patch = await http().patch(`/v1/tags/${tag.id}`).set('Authorization', bearer(alice.token)).send({ name: 'yours' });
      expect(patch.status).toBe(403);
      expect(patch.body).toEqual(errorBody('forbidden'));
      const del = await http().delete(`/v1/tags/${tag.id}`).set('Authorization', bearer(bob.token));
      expect(del.status).toBe(403);
      expect(del.body).toEqual(errorBody('forbidden'));
      const read = await http().get(`/v1/tags/${tag.id}`).set('Authorization', bearer(alice.token));
      expect(read.body).toEqual(tag);
    });

    it('answers an admin’s rename or delete of a missing tag with 404', async () => {
      const put = await http().put('/v1/tags/999999').set('Authorization', bearer(admin.token)).send({ name: 'ghost' });
      expect(put.status).toBe(404);
      expect(put.body).toEqual(errorBody('not_found', 'tag 999999 not found'));
      const del = await http().delete('/v1/tags/999999').set('Authorization', bearer(admin.token));
      expect(del.status).toBe(404);
      expect(del.body).toEqual(errorBody('not_found', 'tag 999999 not found'));
    });

    it('deletes with 204 and no body; articles lose the tag; then 404', async () => {
      const tag = await postTag(alice.token, 'doomed');
      const keep = await postTag(alice.token, 'kept');
      const article = await http()
        .post('/v1/articles')
        .set('Authorization', bearer(alice.token))
        .send({ title: 'Tagged', tags: ['doomed', 'kept'] });
      expect(article.status).toBe(201);
      expect(article.body.tags).toEqual(['doomed', 'kept']);

      const res = await http().delete(`/v1/tags/${tag.id}`).set('Authorization', bearer(admin.token));
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      const read = await http().get(`/v1/tags/${tag.id}`).set('Authorization', bearer(admin.token));
      expect(read.status).toBe(404);
      expect(read.body).toEqual(errorBody('not_found', `tag ${tag.id} not found`));

      const after = await http().get(`/v1/articles/${article.body.id}`).set('Authorization', bearer(alice.token));
      expect(after.status).toBe(200);
      expect(after.body.tags).toEqual([keep.name]);
    });
  });

  describe('GET /v1/tags (docs/lists.md)', () => {
    let t: Tag[];
    const list = (query: Record<string, string | string[]> | string = {}, token = alice.token) =>
      http().get('/v1/tags').query(query).set('Authorization', bearer(token));
    const names = (body: { data: Array<{ name: string }> }) => body.data.map((item) => item.name);

    beforeAll(async () => {
      await truncateAll(app);
      alice = await createUser(app);
      const t0 = Date.parse('2026-01-01T10:00:00.000Z');
      const at = (ms: number) => new Date(t0 + ms);
      t = [];
      t.push(await createTag(app, { name: 'delta', created_at: at(0), updated_at: at(0) }));
      t.push(await createTag(app, { name: 'alpha', created_at: at(2000), updated_at: at(2000) }));
      t.push(await createTag(app, { name: 'charlie', created_at: at(1000), updated_at: at(1000) }));
      t.push(await createTag(app, { name: 'bravo', created_at: at(1000), updated_at: at(1000) })); // same created_at as charlie
    });

    it('returns the envelope with every tag, id ascending, each element equal to the single GET', async () => {
      const res = await list();
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ page: 1, size: 20, total: 4 });
      expect(names(res.body)).toEqual(['delta', 'alpha', 'charlie', 'bravo']);
      for (const item of res.body.data) {
        const one = await http().get(`/v1/tags/${item.id}`).set('Authorization', bearer(alice.token));
        expect(item).toEqual(one.body);
      }
      expect(res.body.data[0]).toEqual({ ...tagShape(t[0].id, 'delta'), created_at: '2026-01-01T10:00:00.000Z' });
    });

    it('filters by name (case-insensitively; repeated = any of)', async () => {
      const one = await list({ name: 'Charlie' });
      expect(one.status).toBe(200);
      expect(one.body).toMatchObject({ total: 1 });
      expect(names(one.body)).toEqual(['charlie']);
      const any = await list('name=alpha&name=delta&name=zulu');
      expect(names(any.body)).toEqual(['delta', 'alpha']);
      expect(any.body.total).toBe(2);
    });

    it('sorts by name, -name and created_at with id as tie-breaker, and by several keys; refuses a field that does not sort', async () => {
      expect(names((await list({ sort: 'name' })).body)).toEqual(['alpha', 'bravo', 'charlie', 'delta']);
      expect(names((await list({ sort: '-name' })).body)).toEqual(['delta', 'charlie', 'bravo', 'alpha']);
      expect(names((await list({ sort: 'created_at' })).body)).toEqual(['delta', 'charlie', 'bravo', 'alpha']);
      expect(names((await list({ sort: '-created_at,name' })).body)).toEqual(['alpha', 'bravo', 'charlie', 'delta']);
      const bad = await list({ sort: 'links' });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({
        code: 'bad_request',
        details: [{ field: 'sort', message: 'cannot sort by links; sortable: id, name, created_at, updated_at, relevance' }],
      });
    });

    it('pages with page/size and offset/limit', async () => {
      const page = await list({ sort: 'name', page: '2', size: '3' });
      expect(page.status).toBe(200);
      expect(page.body).toMatchObject({ page: 2, size: 3, total: 4 });
      expect(names(page.body)).toEqual(['delta']);
      expect(page.body.links.map((l: { rel: string }) => l.rel)).toEqual(['self', 'first', 'prev', 'last']);
      const offset = await list({ sort: 'name', offset: '1', limit: '2' });
      expect(offset.body).toMatchObject({ offset: 1, limit: 2, page: 1, size: 2, total: 4 });
      expect(names(offset.body)).toEqual(['bravo', 'charlie']);
    });

    it('applies fields= to every element, keeping id and links', async () => {
      const res = await list({ fields: 'created_at', size: '1' });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([{ id: t[0].id, created_at: '2026-01-01T10:00:00.000Z', links: tagShape(t[0].id, 'delta').links }]);
    });

    it('answers unknown parameters and bad filters with 400', async () => {
      const res = await list({ colour: 'red' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        ...errorBody('bad_request', 'unknown query parameter colour'),
        details: [{ field: 'colour', message: 'unknown query parameter colour' }],
      });
      const empty = await list({ name: '' });
      expect(empty.status).toBe(400);
      expect(empty.body).toMatchObject({ code: 'bad_request', details: [{ field: 'name', message: expect.any(String) }] });
    });

    it('links each tag to its articles, which the tag filter of articles then finds', async () => {
      const published = await createArticle(app, alice.user, { status: 'published' }, [t[1]]);
      const res = await http().get(`/v1/tags/${t[1].id}`).set('Authorization', bearer(alice.token));
      const href = res.body.links.find((l: { rel: string }) => l.rel === 'articles').href;
      expect(href).toBe('/v1/articles?tag=alpha');
      const articles = await http().get(href).set('Authorization', bearer(alice.token));
      expect(articles.status).toBe(200);
      expect(articles.body.data.map((a: { id: number }) => a.id)).toEqual([published.id]);
    });

    it('needs a credential', async () => {
      const res = await http().get('/v1/tags');
      expect(res.status).toBe(401);
      expect(res.body).toEqual(errorBody('unauthorized'));
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

    it('names the schemas Tag, TagList, CreateTagBody and UpdateTagBody', () => {
      const schemas = doc.components.schemas;
      expect(Object.keys(schemas.Tag.properties ?? {}).sort()).toEqual(['created_at', 'id', 'links', 'name', 'updated_at']);
      expect(schemas.TagList.properties?.data.items.$ref).toBe('#/components/schemas/Tag');
      expect(schemas.CreateTagBody.required).toEqual(['name']);
      expect(schemas.UpdateTagBody.required ?? []).toEqual([]);
      expect(bodyOf('/v1/tags', 'post')).toBe('#/components/schemas/CreateTagBody');
      expect(bodyOf('/v1/tags/{id}', 'put')).toBe('#/components/schemas/CreateTagBody');
      expect(bodyOf('/v1/tags/{id}', 'patch')).toBe('#/components/schemas/UpdateTagBody');
    });

    it('documents every error status of every tags operation', () => {
      expect(statuses('/v1/tags', 'post')).toEqual(['201', '400', '401', '403', '409', '413', '415', '422', '429', '500', '503']);
      expect(statuses('/v1/tags', 'get')).toEqual(['200', '400', '401', '403', '429', '500', '503']);
      expect(statuses('/v1/tags/{id}', 'get')).toEqual(['200', '304', '400', '401', '403', '404', '429', '500', '503']);
      for (const method of ['put', 'patch'])
        expect(statuses('/v1/tags/{id}', method)).toEqual(['200', '400', '401', '403', '404', '409', '412', '413', '415', '422', '428', '429', '500', '503']);
      expect(statuses('/v1/tags/{id}', 'delete')).toEqual(['204', '400', '401', '403', '404', '412', '428', '429', '500', '503']);
    });
  });

  describe('API-key scopes (docs/authentication.md#api-keys)', () => {
    it('needs tags:read to read and tags:write to create', async () => {
      const owner = await createUser(app);
      const key = await http()
        .post('/v1/api-keys')
        .set('Authorization', bearer(owner.token))
        .send({ name: 'tags', scopes: ['tags:read'] });
      expect(key.status).toBe(201);
      const read = await http().get('/v1/tags').set('X-API-Key', key.body.key);
      expect(read.status).toBe(200);
      const write = await http().post('/v1/tags').set('X-API-Key', key.body.key).send({ name: 'by-key' });
      expect(write.status).toBe(403);
      expect(write.body).toEqual(errorBody('forbidden', 'missing scope tags:write'));
    });
  });
});
