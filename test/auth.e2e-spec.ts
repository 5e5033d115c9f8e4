import { createHash, createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { User } from '../src/users/user.entity.js';
import { UsersService } from '../src/users/users.service.js';
import { bearer, createUser, DEFAULT_PASSWORD, type CreatedUser } from './factories/user.factory.js';
import { createTestApp } from './setup/test-app.js';

const SECRET = process.env.JWT_SECRET!;
const NO_TOKEN_CHALLENGE = 'Bearer realm="api"';
const INVALID_TOKEN_CHALLENGE = /^Bearer realm="api", error="invalid_token"$/;

type Json = Record<string, unknown>;

const b64url = (value: Json) => Buffer.from(JSON.stringify(value)).toString('base64url');
const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Json;

/** Signs `payload` as a compact JWT with HMAC-SHA256 under `secret` (the header is taken as given). */
function forge(payload: Json, { secret = SECRET, header = { alg: 'HS256', typ: 'JWT' } as Json } = {}): string {
  const signingInput = `${b64url(header)}.${b64url(payload)}`;
  return `${signingInput}.${createHmac('sha256', secret).update(signingInput).digest('base64url')}`;
}

/** The claims of a valid access token of `user` (docs/authentication.md#the-access-token), with `overrides` applied (undefined removes a claim). */
function claims(user: { id: number; role: string }, overrides: Json = {}): Json {
  const now = Math.floor(Date.now() / 1000);
  const out: Json = { user_id: user.id, role: user.role, typ: 'access', fid: randomUUID(), iat: now, exp: now + 300, jti: randomUUID(), ...overrides };
  for (const key of Object.keys(out)) if (out[key] === undefined) delete out[key];
  return out;
}

const errorBody = (code: string) => expect.objectContaining({ error: expect.any(String), code, request_id: expect.any(String) });

describe('authentication (docs/authentication.md#overview)', () => {
  let app: NestExpressApplication;
  let alice: CreatedUser;
  const api = () => request(app.getHttpServer());
  /** A protected route alice may read. */
  const protectedPath = () => `/v1/users/${alice.user.id}`;

  beforeAll(async () => {
    app = await createTestApp();
    alice = await createUser(app, { name: 'Alice' });
  });
  afterAll(async () => {
    await app.close();
  });

  it('publishes an empty key set under HS256 (the shared secret is never published)', async () => {
    const res = await api().get('/.well-known/jwks.json');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ keys: [] });
  });

  describe('POST /v1/login', () => {
    it('returns a token pair with Cache-Control: no-store', async () => {
      const res = await api().post('/v1/login').send({ username: alice.user.username, password: DEFAULT_PASSWORD });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toEqual({ token: expect.any(String), token_type: 'Bearer', expires_in: 300, refresh_token: expect.any(String) });
      expect(res.body.refresh_token.length).toBeGreaterThanOrEqual(32);

      const me = await api().get(protectedPath()).set('Authorization', bearer(res.body.token));
      expect(me.status).toBe(200);
      expect(me.body.id).toBe(alice.user.id);
    });

    it('issues an HS256 JWT with user_id, role, iat, iat_ms, exp = iat + 300, jti and typ access', async () => {
      const res = await api().post('/v1/login').send({ username: alice.user.username, password: DEFAULT_PASSWORD });
      expect(res.status).toBe(200);
      const parts = (res.body.token as string).split('.');
      expect(parts).toHaveLength(3);
      expect(decode(parts[0])).toEqual({ alg: 'HS256', typ: 'JWT' });
      const payload = decode(parts[1]);
      expect(payload).toEqual({
        user_id: alice.user.id,
        role: 'user',
        typ: 'access',
        fid: expect.stringMatching(/^[0-9a-f-]{36}$/),
        iat: expect.any(Number),
        iat_ms: expect.any(Number),
        exp: expect.any(Number),
        jti: expect.any(String),
      });
      expect(payload.exp).toBe((payload.iat as number) + 300);
      // the millisecond issue time (what not-before stamps compare with) lies within the iat second
      expect(Math.floor((payload.iat_ms as number) / 1000)).toBe(payload.iat);
      expect(Math.abs((payload.iat as number) - Date.now() / 1000)).toBeLessThan(60);
      const other = await api().post('/v1/login').send({ username: alice.user.username, password: DEFAULT_PASSWORD });
      expect(other.status).toBe(200);
      expect(decode(other.body.token.split('.')[1]).jti).not.toBe(payload.jti);
    });

    it('stores only hashes: argon2id for the password, SHA-256 for the refresh token', async () => {
      const res = await api().post('/v1/login').send({ username: alice.user.username, password: DEFAULT_PASSWORD });
      expect(res.status).toBe(200);
      const dataSource = app.get(DataSource);
      const row = await dataSource.getRepository(User).findOne({ where: { id: alice.user.id }, select: { id: true, password_hash: true } });
      expect(row?.password_hash).toMatch(/^\$argon2id\$/);
      const sha = createHash('sha256').update(res.body.refresh_token).digest('hex');
      const tokens: Array<{ token_hash: string }> = await dataSource.query('SELECT token_hash FROM refresh_tokens');
      expect(tokens.map((t) => t.token_hash)).toContain(sha);
      expect(tokens.map((t) => t.token_hash)).not.toContain(res.body.refresh_token);
    });

    it('answers a wrong password and an unknown username with the same 401', async () => {
      const wrongPassword = await api().post('/v1/login').send({ username: alice.user.username, password: 'not-the-password' });
      const unknownUser = await api().post('/v1/login').send({ username: 'nobody_here', password: DEFAULT_PASSWORD });
      expect(wrongPassword.status).toBe(401);
      expect(unknownUser.status).toBe(401);
      expect(wrongPassword.body).toEqual({ error: expect.any(String), code: 'unauthorized', request_id: expect.any(String) });
      expect(unknownUser.body).toEqual({ error: wrongPassword.body.error, code: 'unauthorized', request_id: expect.any(String) });
    });

    it('answers missing fields with 400 naming each', async () => {
      const res = await api().post('/v1/login').send({});
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: expect.any(String),
        code: 'bad_request',
        details: expect.arrayContaining([
          { field: 'username', message: 'username is required' },
          { field: 'password', message: 'password is required' },
        ]),
        request_id: expect.any(String),
      });
      const noPassword = await api().post('/v1/login').send({ username: alice.user.username });
      expect(noPassword.status).toBe(400);
      expect(noPassword.body.details).toEqual([{ field: 'password', message: 'password is required' }]);
    });

    it('answers a request without a body with 400', async () => {
      const res = await api().post('/v1/login');
      expect(res.status).toBe(400);
      expect(res.body).toEqual(errorBody('bad_request'));
    });
  });

  describe('bearer tokens on protected routes', () => {
    it('answers a request without a credential with 401 and a bare Bearer challenge', async () => {
      const res = await api().get(protectedPath());
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe(NO_TOKEN_CHALLENGE);
      expect(res.body).toEqual({ error: expect.any(String), code: 'unauthorized', request_id: expect.any(String) });
    });

    it('accepts a token forged correctly with the test secret (control for the cases below)', async () => {
      const res = await api()
        .get(protectedPath())
        .set('Authorization', bearer(forge(claims(alice.user))));
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(alice.user.id);
    });

    const rejected: Array<[string, () => string]> = [
      ['a malformed token', () => 'not.a-jwt'],
      ['a token that is not a JWT at all', () => 'garbage'],
      [
        'a tampered payload (role raised, signature kept)',
        () => {
          const [header, , signature] = alice.token.split('.');
          return `${header}.${b64url({ ...decode(alice.token.split('.')[1]), role: 'admin' })}.${signature}`;
        },
      ],
      ['a token signed with another secret', () => forge(claims(alice.user), { secret: 'another-secret-that-is-at-least-32-bytes!' })],
      ['an expired token', () => forge(claims(alice.user, { iat: Math.floor(Date.now() / 1000) - 600, exp: Math.floor(Date.now() / 1000) - 1 }))],
      ['an alg: none token', () => `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims(alice.user))}.`],
      ['an HS512 token', () => forge(claims(alice.user), { header: { alg: 'HS512', typ: 'JWT' } })],
      ['a token without exp', () => forge(claims(alice.user, { exp: undefined }))],
      ['a token of typ refresh', () => forge(claims(alice.user, { typ: 'refresh' }))],
      ['a token without typ', () => forge(claims(alice.user, { typ: undefined }))],
      ['a token without jti', () => forge(claims(alice.user, { jti: undefined }))],
      ['a token with a string user_id', () => forge(claims(alice.user, { user_id: String(alice.user.id) }))],
      ['a token with an unknown role', () => forge(claims(alice.user, { role: 'root' }))],
    ];

    it.each(rejected)('answers %s with 401 and error="invalid_token"', async (_label, token) => {
      const res = await api().get(protectedPath()).set('Authorization', bearer(token()));
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(INVALID_TOKEN_CHALLENGE);
      expect(res.body).toEqual({ error: expect.any(String), code: 'unauthorized', request_id: expect.any(String) });
    });

    it('answers another scheme (Authorization: Basic) with 401 and a bare Bearer challenge', async () => {
      const res = await api().get(protectedPath()).set('Authorization', 'Basic x');
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe(NO_TOKEN_CHALLENGE);
      expect(res.body).toEqual({ error: expect.any(String), code: 'unauthorized', request_id: expect.any(String) });
    });

    it('checks the role from the token: a user token on an admin route is 403', async () => {
      const res = await api().get('/v1/users').set('Authorization', bearer(alice.token));
      expect(res.status).toBe(403);
      expect(res.body).toEqual(errorBody('forbidden'));
    });
  });

  describe('POST /v1/refresh', () => {
    it('exchanges a refresh token for a new pair; the old one then fails and reuse revokes the family', async () => {
      const login = await api().post('/v1/login').send({ username: alice.user.username, password: DEFAULT_PASSWORD });
      expect(login.status).toBe(200);

      const first = await api().post('/v1/refresh').send({ refresh_token: login.body.refresh_token });
      expect(first.status).toBe(200);
      expect(first.headers['cache-control']).toBe('no-store');
      expect(first.body).toEqual({ token: expect.any(String), token_type: 'Bearer', expires_in: 300, refresh_token: expect.any(String) });
      expect(first.body.refresh_token).not.toBe(login.body.refresh_token);
      expect(first.body.token).not.toBe(login.body.token);
      const me = await api().get(protectedPath()).set('Authorization', bearer(first.body.token));
      expect(me.status).toBe(200);
      expect(me.body.id).toBe(alice.user.id);

      const reused = await api().post('/v1/refresh').send({ refresh_token: login.body.refresh_token });
      expect(reused.status).toBe(401);
      expect(reused.body).toEqual(errorBody('unauthorized'));

      const descendant = await api().post('/v1/refresh').send({ refresh_token: first.body.refresh_token });
      expect(descendant.status).toBe(401);
      expect(descendant.body).toEqual(errorBody('unauthorized'));
    });

    it('leaves other logins of the same user working when one family is revoked', async () => {
      const a = await api().post('/v1/login').send({ username: alice.user.username, password: DEFAULT_PASSWORD });
      const b = await api().post('/v1/login').send({ username: alice.user.username, password: DEFAULT_PASSWORD });
      expect(a.status).toBe(200);
      expect(b.status).toBe(200);
      const rotated = await api().post('/v1/refresh').send({ refresh_token: a.body.refresh_token });
      expect(rotated.status).toBe(200);
      const reuse = await api().post('/v1/refresh').send({ refresh_token: a.body.refresh_token });
      expect(reuse.status).toBe(401);
      const other = await api().post('/v1/refresh').send({ refresh_token: b.body.refresh_token });
      expect(other.status).toBe(200);
      expect(other.body.token_type).toBe('Bearer');
    });

    it('answers an unknown refresh token with 401', async () => {
      const res = await api().post('/v1/refresh').send({ refresh_token: 'definitely-not-a-refresh-token' });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: expect.any(String), code: 'unauthorized', request_id: expect.any(String) });
    });

    it('does not accept an access token as a refresh token', async () => {
      const res = await api().post('/v1/refresh').send({ refresh_token: alice.token });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(errorBody('unauthorized'));
    });

    it('answers a missing refresh_token with 400', async () => {
      const res = await api().post('/v1/refresh').send({});
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'refresh_token is required',
        code: 'bad_request',
        details: [{ field: 'refresh_token', message: 'refresh_token is required' }],
        request_id: expect.any(String),
      });
    });
  });

  describe('credentials in the query string', () => {
    it.each(['access_token', 'token', 'api_key', 'apikey', 'key'])('answers ?%s=… on a public route with 400', async (name) => {
      const res = await api().post(`/v1/login?${name}=secret-value`).send({ username: alice.user.username, password: DEFAULT_PASSWORD });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: expect.any(String),
        code: 'bad_request',
        details: [{ field: name, message: expect.stringContaining(name) }],
        request_id: expect.any(String),
      });
      expect(JSON.stringify(res.body)).not.toContain('secret-value');
    });

    it('answers ?access_token=… with 400 even beside a valid bearer header, and on registration', async () => {
      const read = await api().get(`${protectedPath()}?access_token=${alice.token}`).set('Authorization', bearer(alice.token));
      expect(read.status).toBe(400);
      expect(read.body).toEqual(errorBody('bad_request'));
      const register = await api().post('/v1/users?api_key=abc').send({ username: 'query_key', password: 'long enough pw', name: 'Q' });
      expect(register.status).toBe(400);
      expect(register.body).toEqual(errorBody('bad_request'));
    });
  });
});

describe('admin bootstrap from ADMIN_USERNAME / ADMIN_PASSWORD (docs/authentication.md#roles-and-scopes, docs/operations.md#configuration)', () => {
  const saved = { username: process.env.ADMIN_USERNAME, password: process.env.ADMIN_PASSWORD };
  let app: NestExpressApplication;
  const api = () => request(app.getHttpServer());

  beforeAll(async () => {
    process.env.ADMIN_USERNAME = 'root_admin';
    process.env.ADMIN_PASSWORD = 'bootstrap-password-1';
    // empty the tables before start-up: the admin is created while the application boots
    app = await createTestApp({ truncate: 'before-init' });
  });
  afterAll(async () => {
    await app?.close();
    for (const [key, value] of [
      ['ADMIN_USERNAME', saved.username],
      ['ADMIN_PASSWORD', saved.password],
    ] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  it('creates the first admin at start-up, who can log in and list users', async () => {
    const login = await api().post('/v1/login').send({ username: 'root_admin', password: 'bootstrap-password-1' });
    expect(login.status).toBe(200);
    expect(decode(login.body.token.split('.')[1])).toMatchObject({ role: 'admin', typ: 'access' });

    const list = await api().get('/v1/users').set('Authorization', bearer(login.body.token));
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(1);
    expect(list.body.data).toEqual([expect.objectContaining({ username: 'root_admin', role: 'admin' })]);
  });

  it('creates no second admin when one exists', async () => {
    // the start-up hook again, as a restart would run it, now with other credentials configured
    process.env.ADMIN_USERNAME = 'second_admin';
    process.env.ADMIN_PASSWORD = 'another-password-2';
    await app.get(UsersService).onApplicationBootstrap();

    const login = await api().post('/v1/login').send({ username: 'second_admin', password: 'another-password-2' });
    expect(login.status).toBe(401);
    expect(login.body.code).toBe('unauthorized');
    const admin = await api().post('/v1/login').send({ username: 'root_admin', password: 'bootstrap-password-1' });
    expect(admin.status).toBe(200);
    const list = await api().get('/v1/users').set('Authorization', bearer(admin.body.token));
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(1);
  });
});
