import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { bearer, createUser, DEFAULT_PASSWORD, type CreatedUser } from './factories/user.factory.js';
import { createTestApp, truncateAll } from './setup/test-app.js';
import { ISO_MS } from './setup/formats.js';

const JSON_UTF8 = 'application/json; charset=utf-8';

const userLinks = (id: number) => [
  { rel: 'self', href: `/v1/users/${id}` },
  { rel: 'todos', href: `/v1/todos?owner=${id}` },
];

/** An ErrorResp body (docs/errors.md#the-body) with the given code and, when given, exactly these details. */
const errorBody = (code: string, details?: Array<{ field: string; message: unknown }>) => ({
  error: expect.any(String),
  code,
  ...(details ? { details } : {}),
  request_id: expect.any(String),
});

let seq = 0;
/** A valid registration body with a fresh username. */
function registration(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  seq += 1;
  return { username: `reg_${seq}`, password: 'correct horse battery', name: `Registered ${seq}`, ...overrides };
}

describe('users (docs/resources/users.md)', () => {
  let app: NestExpressApplication;
  let admin: CreatedUser;
  const api = () => request(app.getHttpServer());

  beforeAll(async () => {
    app = await createTestApp();
    admin = await createUser(app, { role: 'admin', name: 'Admin' });
  });
  afterAll(async () => {
    await app.close();
  });

  describe('POST /v1/users (public registration)', () => {
    it('creates a user: 201, Location, the user without password, email lower-cased, role user', async () => {
      const res = await api()
        .post('/v1/users')
        .send({ username: 'ada_l', password: 'correct horse battery', name: 'Ada Lovelace', age: 36, email: 'Ada.Lovelace@Example.COM' });
      expect(res.status).toBe(201);
      expect(res.headers['content-type']).toBe(JSON_UTF8);
      const id = res.body.id as number;
      expect(Number.isInteger(id) && id > 0).toBe(true);
      expect(res.headers.location).toBe(`/v1/users/${id}`);
      expect(res.body).toEqual({
        id,
        username: 'ada_l',
        name: 'Ada Lovelace',
        age: 36,
        email: 'ada.lovelace@example.com',
        email_verified_at: null,
        role: 'user',
        created_at: expect.stringMatching(ISO_MS),
        updated_at: expect.stringMatching(ISO_MS),
        links: userLinks(id),
      });
      expect(res.body).not.toHaveProperty('password');
      expect(res.body).not.toHaveProperty('password_hash');

      const login = await api().post('/v1/login').send({ username: 'ada_l', password: 'correct horse battery' });
      expect(login.status).toBe(200);
      expect(login.body.token_type).toBe('Bearer');
    });

    it('returns null for omitted optional fields and ignores read-only properties', async () => {
      const res = await api()
        .post('/v1/users')
        .send(registration({ id: 999, created_at: '2000-01-01T00:00:00.000Z', updated_at: '2000-01-01T00:00:00.000Z', links: [] }));
      expect(res.status).toBe(201);
      expect(res.body.id).not.toBe(999);
      expect(res.body.created_at).not.toBe('2000-01-01T00:00:00.000Z');
      expect(res.body).toMatchObject({ age: null, email: null, role: 'user', links: userLinks(res.body.id) });
    });

    it('accepts role "user"', async () => {
      const res = await api()
        .post('/v1/users')
        .send(registration({ role: 'user' }));
      expect(res.status).toBe(201);
      expect(res.body.role).toBe('user');
    });

    it('answers a missing name with 400 bad_request naming it', async () => {
      const res = await api().post('/v1/users').send({ username: 'no_name', password: 'correct horse battery' });
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toBe(JSON_UTF8);
      expect(res.body).toEqual({
        error: 'name is required',
        code: 'bad_request',
        details: [{ field: 'name', message: 'name is required' }],
        request_id: expect.any(String),
      });
    });

    it.each([
      ['null', null],
      ['an empty string', ''],
    ])('answers a name that is %s with 400', async (_label, name) => {
      const res = await api().post('/v1/users').send(registration({ name }));
      expect(res.status).toBe(400);
      expect(res.body).toEqual(errorBody('bad_request', [{ field: 'name', message: 'name is required' }]));
    });

    it('answers age -1 with 422 validation_failed', async () => {
      const res = await api()
        .post('/v1/users')
        .send(registration({ age: -1 }));
      expect(res.status).toBe(422);
      expect(res.body).toEqual(errorBody('validation_failed', [{ field: 'age', message: expect.stringContaining('age') }]));
    });

    it('answers age "ten" (wrong JSON type) with 400', async () => {
      const res = await api()
        .post('/v1/users')
        .send(registration({ age: 'ten' }));
      expect(res.status).toBe(400);
      expect(res.body).toEqual(errorBody('bad_request', [{ field: 'age', message: expect.stringContaining('age') }]));
    });

    it('answers a bad email with 422', async () => {
      const res = await api()
        .post('/v1/users')
        .send(registration({ email: 'x' }));
      expect(res.status).toBe(422);
      expect(res.body).toEqual(errorBody('validation_failed', [{ field: 'email', message: expect.stringContaining('email') }]));
    });

    it.each(['Ada', 'ab', 'has-dash', 'a'.repeat(33)])('answers username %p (bad pattern) with 422', async (username) => {
      const res = await api().post('/v1/users').send(registration({ username }));
      expect(res.status).toBe(422);
      expect(res.body).toEqual(errorBody('validation_failed', [{ field: 'username', message: expect.stringContaining('username') }]));
    });

    it('lists every failing field, not just the first', async () => {
      const res = await api().post('/v1/users').send({ username: 'X', password: 'short', name: 'n', age: 151, email: 'nope' });
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['age', 'email', 'password', 'username']);
    });

    it('answers an unknown property with 400 naming it', async () => {
      const res = await api()
        .post('/v1/users')
        .send(registration({ is_admin: true }));
      expect(res.status).toBe(400);
      expect(res.body).toEqual(errorBody('bad_request', [{ field: 'is_admin', message: expect.stringContaining('is_admin') }]));
      expect(res.body.error).toContain('is_admin');
    });

    it('answers role "admin" with 403 and creates nothing', async () => {
      const body = registration({ role: 'admin' });
      const res = await api().post('/v1/users').send(body);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(errorBody('forbidden'));
      const login = await api().post('/v1/login').send({ username: body.username, password: body.password });
      expect(login.status).toBe(401);
      expect(login.body.code).toBe('unauthorized');
    });

    it('answers role null with 400 (role may be omitted, not null)', async () => {
      const res = await api()
        .post('/v1/users')
        .send(registration({ role: null }));
      expect(res.status).toBe(400);
      expect(res.body).toEqual(errorBody('bad_request', [{ field: 'role', message: expect.stringContaining('role') }]));
    });

    it('answers a taken username with 409', async () => {
      const first = await api()
        .post('/v1/users')
        .send(registration({ username: 'taken_name' }));
      expect(first.status).toBe(201);
      const res = await api()
        .post('/v1/users')
        .send(registration({ username: 'taken_name' }));
      expect(res.status).toBe(409);
      expect(res.body).toEqual(errorBody('conflict'));
    });

    it('answers a taken email, compared case-insensitively, with 409', async () => {
      const first = await api()
        .post('/v1/users')
        .send(registration({ email: 'grace@example.com' }));
      expect(first.status).toBe(201);
      const res = await api()
        .post('/v1/users')
        .send(registration({ email: 'Grace@EXAMPLE.com' }));
      expect(res.status).toBe(409);
      expect(res.body).toEqual(errorBody('conflict'));
    });
  });

  describe('GET /v1/users/{id}', () => {
    it('lets a user read itself', async () => {
      const me = await createUser(app, { name: 'Self Reader', age: 41, email: 'self@example.com' });
      const res = await api().get(`/v1/users/${me.user.id}`).set('Authorization', bearer(me.token));
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(JSON_UTF8);
      expect(res.body).toEqual({
        id: me.user.id,
        username: me.user.username,
        name: 'Self Reader',
        age: 41,
        email: 'self@example.com',
        email_verified_at: null,
        role: 'user',
        created_at: expect.stringMatching(ISO_MS),
        updated_at: expect.stringMatching(ISO_MS),
        links: userLinks(me.user.id),
      });
    });

    it('answers another user with 403', async () => {
      const me = await createUser(app);
      const other = await createUser(app);
      const res = await api().get(`/v1/users/${other.user.id}`).set('Authorization', bearer(me.token));
      expect(res.status).toBe(403);
      expect(res.body).toEqual(errorBody('forbidden'));
    });

    it('answers a non-existent id with 403 for a non-admin and 404 for an admin', async () => {
      const me = await createUser(app);
      const asUser = await api().get('/v1/users/999999').set('Authorization', bearer(me.token));
      expect(asUser.status).toBe(403);
      expect(asUser.body).toEqual(errorBody('forbidden'));
      const asAdmin = await api().get('/v1/users/999999').set('Authorization', bearer(admin.token));
      expect(asAdmin.status).toBe(404);
      expect(asAdmin.body).toEqual(errorBody('not_found'));
    });

    it('lets an admin read anyone', async () => {
      const other = await createUser(app, { name: 'Read By Admin' });
      const res = await api().get(`/v1/users/${other.user.id}`).set('Authorization', bearer(admin.token));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: other.user.id, username: other.user.username, name: 'Read By Admin', role: 'user' });
    });

    it('returns only id, the requested fields and links with fields=name', async () => {
      const me = await createUser(app, { name: 'Only Name', age: 20 });
      const res = await api().get(`/v1/users/${me.user.id}?fields=name`).set('Authorization', bearer(me.token));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: me.user.id, name: 'Only Name', links: userLinks(me.user.id) });
    });

    it('answers an unknown field or query parameter with 400', async () => {
      const me = await createUser(app);
      const badField = await api().get(`/v1/users/${me.user.id}?fields=password_hash`).set('Authorization', bearer(me.token));
      expect(badField.status).toBe(400);
      expect(badField.body).toEqual(errorBody('bad_request', [{ field: 'fields', message: expect.stringContaining('password_hash') }]));
      const badParam = await api().get(`/v1/users/${me.user.id}?expand=todos`).set('Authorization', bearer(me.token));
      expect(badParam.status).toBe(400);
      expect(badParam.body).toEqual(errorBody('bad_request', [{ field: 'expand', message: expect.stringContaining('expand') }]));
    });

    it('answers without a credential with 401', async () => {
      const res = await api().get(`/v1/users/${admin.user.id}`);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(errorBody('unauthorized'));
    });

    it.each(['abc', '0', '-1', '1.5'])('answers the path id %p with 400', async (id) => {
      const res = await api().get(`/v1/users/${id}`).set('Authorization', bearer(admin.token));
      expect(res.status).toBe(400);
      expect(res.body).toEqual(errorBody('bad_request', [{ field: 'id', message: expect.stringContaining('positive integer') }]));
    });
  });

  describe('PUT /v1/users/{id}', () => {
    it('replaces the user: omitted age and email become null, the password is kept', async () => {
      const me = await createUser(app, { name: 'Before', age: 30, email: 'before@example.com' });
      const res = await api().put(`/v1/users/${me.user.id}`).set('Authorization', bearer(me.token)).send({ name: 'After' });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(JSON_UTF8);
      expect(res.body).toEqual({
        id: me.user.id,
        username: me.user.username,
        name: 'After',
        age: null,
        email: null,
        email_verified_at: null,
        role: 'user',
        created_at: expect.stringMatching(ISO_MS),
        updated_at: expect.stringMatching(ISO_MS),
        links: userLinks(me.user.id),
      });
      const read = await api().get(`/v1/users/${me.user.id}`).set('Authorization', bearer(me.token));
      expect(read.status).toBe(200);
      expect(read.body).toEqual(res.body);
      const login = await api().post('/v1/login').send({ username: me.user.username, password: DEFAULT_PASSWORD });
      expect(login.status).toBe(200);
      expect(login.body.token).toEqual(expect.any(String));
    });

    it('accepts a body read with GET and edited (GET → edit → PUT)', async () => {
      const me = await createUser(app, { name: 'Round Trip', age: 22, email: 'round@example.com' });
      const read = await api().get(`/v1/users/${me.user.id}`).set('Authorization', bearer(me.token));
      expect(read.status).toBe(200);
      const res = await api()
        .put(`/v1/users/${me.user.id}`)
        .set('Authorization', bearer(me.token))
        .send({ ...read.body, name: 'Round Trip 2', age: 23 });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...read.body, name: 'Round Trip 2', age: 23, updated_at: expect.stringMatching(ISO_MS) });
      expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(read.body.updated_at));
    });

    it('answers a missing name with 400', async () => {
      const me = await createUser(app);
      const res = await api().put(`/v1/users/${me.user.id}`).set('Authorization', bearer(me.token)).send({ age: 3 });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(errorBody('bad_request', [{ field: 'name', message: 'name is required' }]));
    });

    it('answers password null with 400 and keeps the password', async () => {
      const me = await createUser(app);
      const res = await api().put(`/v1/users/${me.user.id}`).set('Authorization', bearer(me.token)).send({ name: 'X', password: null });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(errorBody('bad_request', [{ field: 'password', message: expect.stringContaining('password') }]));
      const login = await api().post('/v1/login').send({ username: me.user.username, password: DEFAULT_PASSWORD });
      expect(login.status).toBe(200);
      expect(login.body.token).toEqual(expect.any(String));
    });

    it('answers a changed username with 422', async () => {
      const me = await createUser(app);
      const res = await api().put(`/v1/users/${me.user.id}`).set('Authorization', bearer(me.token)).send({ name: 'X', username: 'renamed_user' });
      expect(res.status).toBe(422);
      expect(res.body).toEqual(errorBody('validation_failed', [{ field: 'username', message: expect.stringContaining('username') }]));
      const read = await api().get(`/v1/users/${me.user.id}`).set('Authorization', bearer(me.token));
      expect(read.status).toBe(200);
      expect(read.body.username).toBe(me.user.username);
    });

    it('answers another user with 403', async () => {
      const me = await createUser(app);
      const other = await createUser(app, { name: 'Untouched' });
      const res = await api().put(`/v1/users/${other.user.id}`).set('Authorization', bearer(me.token)).send({ name: 'Hijacked' });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(errorBody('forbidden'));
      const read = await api().get(`/v1/users/${other.user.id}`).set('Authorization', bearer(admin.token));
      expect(read.status).toBe(200);
      expect(read.body.name).toBe('Untouched');
    });
  });

  describe('PATCH /v1/users/{id}', () => {
    it('changes only the fields sent; {email: null} clears the email', async () => {
      const me = await createUser(app, { name: 'Patched', age: 50, email: 'patch@example.com' });
      const res = await api().patch(`/v1/users/${me.user.id}`).set('Authorization', bearer(me.token)).send({ email: null });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: me.user.id, name: 'Patched', age: 50, email: null, role: 'user' });
    });

    it('accepts application/merge-patch+json and lower-cases a new email', async () => {
      const me = await createUser(app, { age: 50 });
      const res = await api()
        .patch(`/v1/users/${me.user.id}`)
        .set('Authorization', bearer(me.token))
        .set('Content-Type', 'application/merge-patch+json')
        .send(JSON.stringify({ email: 'New.Mail@Example.com', age: null }));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: me.user.id, email: 'new.mail@example.com', age: null });
    });

    it('answers {name: null} with 400', async () => {
      const me = await createUser(app);
      const res = await api().patch(`/v1/users/${me.user.id}`).set('Authorization', bearer(me.token)).send({ name: null });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(errorBody('bad_request', [{ field: 'name', message: 'name is required' }]));
    });

    it.each([
      ['password', { password: null }],
      ['role', { role: null }],
      ['username', { username: null }],
    ])('answers null for the non-nullable %s with 400', async (field, body) => {
      const res = await api().patch(`/v1/users/${admin.user.id}`).set('Authorization', bearer(admin.token)).send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(errorBody('bad_request', [{ field, message: expect.stringContaining(field) }]));
    });

    it('answers an out-of-range age with 422', async () => {
      const me = await createUser(app);
      const res = await api().patch(`/v1/users/${me.user.id}`).set('Authorization', bearer(me.token)).send({ age: 151 });
      expect(res.status).toBe(422);
      expect(res.body).toEqual(errorBody('validation_failed', [{ field: 'age', message: expect.stringContaining('age') }]));
    });

    it('answers an email taken by another user (any case) with 409', async () => {
      await createUser(app, { email: 'owned@example.com' });
      const me = await createUser(app);
      const res = await api().patch(`/v1/users/${me.user.id}`).set('Authorization', bearer(me.token)).send({ email: 'OWNED@example.com' });
      expect(res.status).toBe(409);
      expect(res.body).toEqual(errorBody('conflict'));
    });

    it('answers a non-admin setting its role to admin with 403 and leaves the role', async () => {
      const me = await createUser(app);
      const res = await api().patch(`/v1/users/${me.user.id}`).set('Authorization', bearer(me.token)).send({ role: 'admin' });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(errorBody('forbidden'));
      const read = await api().get(`/v1/users/${me.user.id}`).set('Authorization', bearer(me.token));
      expect(read.status).toBe(200);
      expect(read.body.role).toBe('user');
    });

    it('lets an admin set a role', async () => {
      const other = await createUser(app);
      const res = await api().patch(`/v1/users/${other.user.id}`).set('Authorization', bearer(admin.token)).send({ role: 'admin' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: other.user.id, role: 'admin' });
      const login = await api().post('/v1/login').send({ username: other.user.username, password: DEFAULT_PASSWORD });
      expect(login.status).toBe(200);
      const list = await api().get('/v1/users').set('Authorization', bearer(login.body.token));
      expect(list.status).toBe(200);
      expect(list.body.total).toEqual(expect.any(Number));
    });

    it('changes the password: the new one logs in, the old one no longer does', async () => {
      const me = await createUser(app);
      const res = await api().patch(`/v1/users/${me.user.id}`).set('Authorization', bearer(me.token)).send({ password: 'a brand new secret' });
      expect(res.status).toBe(200);
      expect(res.body).not.toHaveProperty('password');
      const fresh = await api().post('/v1/login').send({ username: me.user.username, password: 'a brand new secret' });
      expect(fresh.status).toBe(200);
      expect(fresh.body.token).toEqual(expect.any(String));
      const old = await api().post('/v1/login').send({ username: me.user.username, password: DEFAULT_PASSWORD });
      expect(old.status).toBe(401);
      expect(old.body.code).toBe('unauthorized');
    });

    it('answers a too-short password with 422', async () => {
      const me = await createUser(app);
      const res = await api().patch(`/v1/users/${me.user.id}`).set('Authorization', bearer(me.token)).send({ password: 'short' });
      expect(res.status).toBe(422);
      expect(res.body).toEqual(errorBody('validation_failed', [{ field: 'password', message: expect.any(String) }]));
    });

    it('answers another user with 403', async () => {
      const me = await createUser(app);
      const other = await createUser(app);
      const res = await api().patch(`/v1/users/${other.user.id}`).set('Authorization', bearer(me.token)).send({ name: 'Nope' });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(errorBody('forbidden'));
    });

    it.each(['abc', '0', '-1'])('answers the path id %p with 400', async (id) => {
      const res = await api().patch(`/v1/users/${id}`).set('Authorization', bearer(admin.token)).send({ name: 'x' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(errorBody('bad_request', [{ field: 'id', message: expect.any(String) }]));
    });
  });

  describe('DELETE /v1/users/{id}', () => {
    it('lets a user delete itself: 204, no body, its todos and tokens are gone', async () => {
      const me = await createUser(app);
      for (const title of ['first', 'second']) {
        const todo = await api().post('/v1/todos').set('Authorization', bearer(me.token)).send({ title });
        expect(todo.status).toBe(201);
      }
      const before = await api().get(`/v1/todos?owner=${me.user.id}`).set('Authorization', bearer(admin.token));
      expect(before.status).toBe(200);
      expect(before.body.total).toBe(2);

      const res = await api().delete(`/v1/users/${me.user.id}`).set('Authorization', bearer(me.token));
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(res.headers['content-length'] ?? '0').toBe('0');

      const after = await api().get(`/v1/todos?owner=${me.user.id}`).set('Authorization', bearer(admin.token));
      expect(after.status).toBe(200);
      expect(after.body).toMatchObject({ data: [], total: 0 });
      const read = await api().get(`/v1/users/${me.user.id}`).set('Authorization', bearer(admin.token));
      expect(read.status).toBe(404);
      expect(read.body).toEqual(errorBody('not_found'));
      const refresh = await api().post('/v1/refresh').send({ refresh_token: me.refreshToken });
      expect(refresh.status).toBe(401);
      expect(refresh.body).toEqual(errorBody('unauthorized'));
      const login = await api().post('/v1/login').send({ username: me.user.username, password: DEFAULT_PASSWORD });
      expect(login.status).toBe(401);
      expect(login.body).toEqual(errorBody('unauthorized'));
    });

    it('answers another user with 403 and deletes nothing', async () => {
      const me = await createUser(app);
      const other = await createUser(app);
      const res = await api().delete(`/v1/users/${other.user.id}`).set('Authorization', bearer(me.token));
      expect(res.status).toBe(403);
      expect(res.body).toEqual(errorBody('forbidden'));
      const read = await api().get(`/v1/users/${other.user.id}`).set('Authorization', bearer(admin.token));
      expect(read.status).toBe(200);
      expect(read.body.id).toBe(other.user.id);
    });

    it('lets an admin delete anyone, and answers a missing user with 404', async () => {
      const other = await createUser(app);
      const res = await api().delete(`/v1/users/${other.user.id}`).set('Authorization', bearer(admin.token));
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      const again = await api().delete(`/v1/users/${other.user.id}`).set('Authorization', bearer(admin.token));
      expect(again.status).toBe(404);
      expect(again.body).toEqual(errorBody('not_found'));
    });

    it.each(['abc', '0', '-1'])('answers the path id %p with 400', async (id) => {
      const res = await api().delete(`/v1/users/${id}`).set('Authorization', bearer(admin.token));
      expect(res.status).toBe(400);
      expect(res.body).toEqual(errorBody('bad_request', [{ field: 'id', message: expect.any(String) }]));
    });
  });

  describe('GET /v1/users (admin list)', () => {
    let listAdmin: CreatedUser;
    let plain: CreatedUser;
    const ids: Record<string, number> = {};

    beforeAll(async () => {
      await truncateAll(app);
      listAdmin = await createUser(app, { role: 'admin', name: 'Zed Admin', age: null });
      plain = await createUser(app, { name: 'Alice', age: 30 });
      const bob = await createUser(app, { name: 'Bob', age: 25 });
      const carol = await createUser(app, { name: 'Carol', age: 30 });
      const dave = await createUser(app, { name: 'Alice', age: 40 });
      Object.assign(ids, { admin: listAdmin.user.id, alice: plain.user.id, bob: bob.user.id, carol: carol.user.id, dave: dave.user.id });
    });

    const list = (query: string) => api().get(`/v1/users${query}`).set('Authorization', bearer(listAdmin.token));
    const idsOf = (body: { data: Array<{ id: number }> }) => body.data.map((u) => u.id);

    it('answers a non-admin with 403', async () => {
      const res = await api().get('/v1/users').set('Authorization', bearer(plain.token));
      expect(res.status).toBe(403);
      expect(res.body).toEqual(errorBody('forbidden'));
    });

    it('returns the envelope with total to an admin, each element shaped like the single read', async () => {
      const res = await list('');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(JSON_UTF8);
      expect(res.body).toEqual({
        data: expect.any(Array),
        page: 1,
        size: 20,
        total: 5,
        links: [
          { rel: 'self', href: '/v1/users?page=1&size=20' },
          { rel: 'first', href: '/v1/users?page=1&size=20' },
          { rel: 'last', href: '/v1/users?page=1&size=20' },
        ],
      });
      expect(idsOf(res.body)).toEqual([ids.admin, ids.alice, ids.bob, ids.carol, ids.dave]);
      const single = await api().get(`/v1/users/${ids.bob}`).set('Authorization', bearer(listAdmin.token));
      expect(single.status).toBe(200);
      expect(res.body.data[2]).toEqual(single.body);
      expect(res.body.data[2]).not.toHaveProperty('password_hash');
    });

    it('filters by role', async () => {
      const admins = await list('?role=admin');
      expect(admins.status).toBe(200);
      expect(admins.body.total).toBe(1);
      expect(idsOf(admins.body)).toEqual([ids.admin]);
      const both = await list('?role=admin&role=user');
      expect(both.status).toBe(200);
      expect(both.body.total).toBe(5);
    });

    it('filters by name, a repeated parameter meaning "any of"', async () => {
      const alices = await list('?name=Alice');
      expect(alices.status).toBe(200);
      expect(alices.body.total).toBe(2);
      expect(idsOf(alices.body)).toEqual([ids.alice, ids.dave]);
      const some = await list('?name=Alice&name=Bob');
      expect(some.status).toBe(200);
      expect(idsOf(some.body)).toEqual([ids.alice, ids.bob, ids.dave]);
    });

    it('filters by age, repeated values meaning "any of"', async () => {
      const res = await list('?age=30&age=25');
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(3);
      expect(idsOf(res.body)).toEqual([ids.alice, ids.bob, ids.carol]);
      expect(res.body.links[0]).toEqual({ rel: 'self', href: '/v1/users?age=30&age=25&page=1&size=20' });
    });

    it.each([
      ['?age=abc', 'age'],
      ['?age=-1', 'age'],
      ['?role=root', 'role'],
      ['?name=', 'name'],
      ['?email=a@b.c', 'email'],
      ['?sort=password_hash', 'sort'],
      ['?size=101', 'size'],
      ['?page=0', 'page'],
      ['?page=1&offset=0', 'offset'],
    ])('answers %s with 400 naming %s', async (query, field) => {
      const res = await list(query);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(errorBody('bad_request', [{ field, message: expect.any(String) }]));
    });

    it('sorts by -age,name (nulls as the largest value) with id as the tie-breaker', async () => {
      const res = await list('?sort=-age,name');
      expect(res.status).toBe(200);
      expect(idsOf(res.body)).toEqual([ids.admin, ids.dave, ids.alice, ids.carol, ids.bob]);
      expect(res.body.links[0]).toEqual({ rel: 'self', href: '/v1/users?sort=-age,name&page=1&size=20' });
    });

    it('sorts by name ascending, id breaking the tie', async () => {
      const res = await list('?sort=name');
      expect(res.status).toBe(200);
      expect(idsOf(res.body)).toEqual([ids.alice, ids.dave, ids.bob, ids.carol, ids.admin]);
    });

    it('pages with page/size and links', async () => {
      const res = await list('?page=2&size=2');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ page: 2, size: 2, total: 5 });
      expect(idsOf(res.body)).toEqual([ids.bob, ids.carol]);
      expect(res.body.links).toEqual([
        { rel: 'self', href: '/v1/users?page=2&size=2' },
        { rel: 'first', href: '/v1/users?page=1&size=2' },
        { rel: 'prev', href: '/v1/users?page=1&size=2' },
        { rel: 'next', href: '/v1/users?page=3&size=2' },
        { rel: 'last', href: '/v1/users?page=3&size=2' },
      ]);
      const last = await list('?page=3&size=2');
      expect(last.status).toBe(200);
      expect(idsOf(last.body)).toEqual([ids.dave]);
    });

    it('answers a page past the end with empty data and the true total', async () => {
      const res = await list('?page=9&size=2');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ data: [], page: 9, size: 2, total: 5 });
    });

    it('pages with offset/limit', async () => {
      const res = await list('?offset=1&limit=2');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ page: 1, size: 2, offset: 1, limit: 2, total: 5 });
      expect(idsOf(res.body)).toEqual([ids.alice, ids.bob]);
    });

    it('applies fields to every element', async () => {
      const res = await list('?fields=name&size=1');
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([{ id: ids.admin, name: 'Zed Admin', links: userLinks(ids.admin) }]);
    });
  });
});
