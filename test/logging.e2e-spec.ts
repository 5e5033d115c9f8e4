import { createHash, randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { PARAMS_PROVIDER_TOKEN } from 'nestjs-pino';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { loggerParams } from '../src/logging/logging.js';
import { createTestApp } from './setup/test-app.js';

/** Collects every log line the application writes. */
class Capture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  }
}

describe('request logs (docs/operations.md#logs: credentials never reach logs)', () => {
  let app: NestExpressApplication;
  const capture = new Capture();
  const api = () => request(app.getHttpServer());
  const secrets: string[] = [];

  beforeAll(async () => {
    const { pinoHttp } = loggerParams('info') as { pinoHttp: object };
    app = await createTestApp({ override: (builder) => builder.overrideProvider(PARAMS_PROVIDER_TOKEN).useValue({ pinoHttp: [pinoHttp, capture] }) });
  });
  afterAll(async () => {
    await app.close();
  });

  it('logs a login, a refresh, an API-key call, a session call and a credential-in-query refusal without any secret', async () => {
    const password = 'Very-Secret-Passw0rd';
    secrets.push(password);
    expect((await api().post('/v1/users').send({ username: 'logged_user', password, name: 'Logged' })).status).toBe(201);

    const login = await api().post('/v1/login').send({ username: 'logged_user', password });
    expect(login.status).toBe(200);
    secrets.push(login.body.token, login.body.refresh_token);

    const refreshed = await api().post('/v1/refresh').send({ refresh_token: login.body.refresh_token });
    expect(refreshed.status).toBe(200);
    secrets.push(refreshed.body.token, refreshed.body.refresh_token);

    const key = await api()
      .post('/v1/api-keys')
      .set('Authorization', `Bearer ${refreshed.body.token}`)
      .send({ name: 'logs', scopes: ['todos:read'] });
    expect(key.status).toBe(201);
    secrets.push(key.body.key);
    const viaKey = await api().get('/v1/todos').set('X-API-Key', key.body.key).set('User-Agent', 'logs-test/1.0');
    expect(viaKey.status).toBe(200);

    const session = await api().post('/v1/sessions').send({ username: 'logged_user', password });
    expect(session.status).toBe(201);
    const cookie = (session.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
    secrets.push(cookie.split('=')[1], session.body.csrf_token);
    const viaCookie = await api().post('/v1/todos').set('Cookie', cookie).set('X-CSRF-Token', session.body.csrf_token).send({ title: 'logged' });
    expect(viaCookie.status).toBe(201);

    // OAuth: a client secret, the code in the consent redirect, the PKCE verifier, the tokens
    const admin = await api().post('/v1/users').send({ username: 'logged_admin', password, name: 'Admin' });
    await app.get(DataSource).query(`UPDATE users SET role = 'admin' WHERE id = ${Number(admin.body.id)}`);
    const adminToken = (await api().post('/v1/login').send({ username: 'logged_admin', password })).body.token as string;
    secrets.push(adminToken);
    const client = await api()
      .post('/v1/oauth-clients')
      .set('Authorization', `Bearer ${adminToken}`)
      .send({ name: 'Logged App', redirect_uris: ['https://app.example/cb'], scopes: ['todos:read'], confidential: true });
    expect(client.status).toBe(201);
    secrets.push(client.body.client_secret);
    const verifier = randomBytes(32).toString('base64url');
    secrets.push(verifier);
    const authorize = {
      response_type: 'code',
      client_id: client.body.client_id,
      redirect_uri: 'https://app.example/cb',
      scope: 'todos:read',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    };
    const consent = await api()
      .post('/v1/oauth/authorize')
      .set('Cookie', cookie)
      .type('form')
      .send({ ...authorize, csrf_token: session.body.csrf_token, decision: 'approve', grant_scope: 'todos:read' });
    expect(consent.status).toBe(302);
    const code = new URL(consent.headers.location as string).searchParams.get('code') as string;
    secrets.push(code);
    const exchanged = await api().post('/v1/oauth/token').type('form').send({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: 'https://app.example/cb',
      client_id: client.body.client_id,
      client_secret: client.body.client_secret,
    });
    expect(exchanged.status).toBe(200);
    secrets.push(exchanged.body.access_token, exchanged.body.refresh_token);
    expect((await api().get('/v1/todos').set('Authorization', `Bearer ${exchanged.body.access_token}`)).status).toBe(200);
    const revoked = await api()
      .post('/v1/oauth/revoke')
      .type('form')
      .send({ token: exchanged.body.refresh_token, client_id: client.body.client_id, client_secret: client.body.client_secret });
    expect(revoked.status).toBe(200);

    const inQuery = await api().get('/v1/todos?status=done&access_token=query-secret-value');
    expect(inQuery.status).toBe(400);
    secrets.push('query-secret-value');

    await new Promise((resolve) => setImmediate(resolve));
    const text = capture.lines.join('\n');
    expect(capture.lines.length).toBeGreaterThanOrEqual(8);
    for (const secret of secrets) expect(text).not.toContain(secret);
  });

  it('logs failure paths, password changes, database errors and secret-named query parameters without any secret or hash', async () => {
    const dataSource = app.get(DataSource);
    const postgres = dataSource.options.type === 'postgres';
    const password = 'Another-Secret-Passw0rd';
    const newPassword = 'Changed-Secret-Passw0rd';
    secrets.push(password, newPassword, 'Wrong-Secret-Passw0rd', 'not-a-real-refresh-token-value-1234567890');
    const created = await api().post('/v1/users').send({ username: 'logged_fail', password, name: 'Fail' });
    expect(created.status).toBe(201);
    const id = Number(created.body.id);
    expect((await api().post('/v1/login').send({ username: 'logged_fail', password: 'Wrong-Secret-Passw0rd' })).status).toBe(401);
    expect((await api().post('/v1/refresh').send({ refresh_token: 'not-a-real-refresh-token-value-1234567890' })).status).toBe(401);
    const login = await api().post('/v1/login').send({ username: 'logged_fail', password });
    secrets.push(login.body.token, login.body.refresh_token);
    // a password change: the old hash and the new one must never show up either
    const [{ password_hash: oldHash }] = (await dataSource.query(`SELECT password_hash FROM users WHERE id = ${id}`)) as { password_hash: string }[];
    expect((await api().patch(`/v1/users/${id}`).set('Authorization', `Bearer ${login.body.token}`).send({ password: newPassword })).status).toBe(200);
    const [{ password_hash: newHash }] = (await dataSource.query(`SELECT password_hash FROM users WHERE id = ${id}`)) as { password_hash: string }[];
    secrets.push(oldHash, newHash);
    // the revoked token is refused; its value is not logged with the refusal
    expect((await api().get(`/v1/users/${id}`).set('Authorization', `Bearer ${login.body.token}`)).status).toBe(401);
    // a login that fails on an API key of the wrong shape, a bad cookie, a wrong CSRF token
    expect((await api().get('/v1/todos').set('X-Api-KEY', 'rk_not-a-key-but-secret-looking-value-00000000')).status).toBe(401);
    secrets.push('rk_not-a-key-but-secret-looking-value-00000000');

    // secret-named query parameters, in any case, on a refused request
    const query = {
      code: 'query-code-value',
      client_secret: 'query-client-secret',
      csrf_token: 'query-csrf-value',
      ACCESS_TOKEN: 'query-upper-token',
      code_verifier: 'query-verifier-value',
      Session_Id: 'query-session-value',
      x_signature: 'query-signature',
    };
    secrets.push(...Object.values(query));
    const withSecrets = await api().get(`/v1/todos?status=done&${new URLSearchParams(query).toString()}`);
    expect(withSecrets.status).toBeGreaterThanOrEqual(400);

    // a database error (500): an INSERT refused by a trigger, whose parameters hold the new user's argon2id hash
    if (postgres) {
      await dataSource.query(
        `CREATE OR REPLACE FUNCTION logging_test_refuse() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'refused by test trigger'; END $$ LANGUAGE plpgsql`,
      );
      await dataSource.query(
        `CREATE TRIGGER logging_test_refuse BEFORE INSERT ON users FOR EACH ROW WHEN (NEW.name = 'Explode') EXECUTE FUNCTION logging_test_refuse()`,
      );
    } else {
      await dataSource.query(
        `CREATE TRIGGER logging_test_refuse BEFORE INSERT ON users WHEN NEW.name = 'Explode' BEGIN SELECT RAISE(ABORT, 'refused by test trigger'); END`,
      );
    }
    try {
      const exploded = await api().post('/v1/users').send({ username: 'logged_explode', password: 'Exploding-Secret-Passw0rd', name: 'Explode' });
      expect(exploded.status).toBe(500);
      expect(exploded.body).toEqual({ error: 'internal server error', code: 'internal', request_id: expect.any(String) });
    } finally {
      await dataSource.query(postgres ? 'DROP TRIGGER logging_test_refuse ON users' : 'DROP TRIGGER logging_test_refuse');
      if (postgres) await dataSource.query('DROP FUNCTION logging_test_refuse()');
    }
    secrets.push('Exploding-Secret-Passw0rd');
    // a NUL in a name: PostgreSQL refuses it in the INSERT (or the request is refused before); either way no hash is logged
    const nul = await api().post('/v1/users').send({ username: 'logged_nul', password: 'Nul-Secret-Passw0rd', name: 'a\u0000b' });
    expect([201, 400, 422, 500]).toContain(nul.status);
    secrets.push('Nul-Secret-Passw0rd');
    // a unique violation that reaches the database: two registrations of one username at once
    const race = await Promise.all(
      [1, 2].map(() => api().post('/v1/users').send({ username: 'logged_race', password: 'Racing-Secret-Passw0rd', name: 'Race' })),
    );
    expect(race.map((r) => r.status).sort()).toEqual([201, 409]);
    secrets.push('Racing-Secret-Passw0rd');

    await new Promise((resolve) => setImmediate(resolve));
    const text = capture.lines.join('\n');
    const entries = capture.lines.map((line) => JSON.parse(line) as Record<string, any>);
    // the database error was logged: class, code, message; never the query or its parameters
    const failure = entries.find((e) => e.msg === 'request failed' && e.err?.message?.includes('refused by test trigger'));
    expect(failure).toBeDefined();
    expect(failure!.err.type).toBe('QueryFailedError');
    expect(Object.keys(failure!.err).sort()).toEqual(expect.arrayContaining(['message', 'type']));
    for (const field of ['query', 'parameters', 'driverError', 'detail']) expect(failure!.err).not.toHaveProperty(field);
    const redacted = entries.find((e) => e.req?.url?.startsWith('/v1/todos?status=done&code='));
    expect(redacted!.req.url).toBe(
      '/v1/todos?status=done&code=[REDACTED]&client_secret=[REDACTED]&csrf_token=[REDACTED]&ACCESS_TOKEN=[REDACTED]&code_verifier=[REDACTED]&Session_Id=[REDACTED]&x_signature=[REDACTED]',
    );
    for (const secret of secrets) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(createHash('sha256').update(secret).digest('hex'));
    }
    expect(text).not.toMatch(/\$argon2/);
    expect(text).not.toMatch(/\$2[aby]\$/);
    expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.eyJ/);
  });

  it('writes one short structured line per request: request id, method, path without credential parameters, client address, user agent, status, duration, user and scheme; no header maps', async () => {
    const entries = capture.lines.map((line) => JSON.parse(line) as Record<string, any>).filter((entry) => entry.req && entry.res);
    const keyCall = entries.find((e) => e.req.method === 'GET' && e.req.url === '/v1/todos' && e.auth_scheme === 'api_key');
    expect(keyCall).toEqual({
      level: 30,
      time: expect.any(Number),
      pid: process.pid,
      hostname: expect.any(String),
      req: { id: expect.any(String), method: 'GET', url: '/v1/todos', client_address: expect.stringMatching(/127\.0\.0\.1|::1/), user_agent: 'logs-test/1.0' },
      user_id: expect.any(Number),
      auth_scheme: 'api_key',
      res: { statusCode: 200 },
      responseTime: expect.any(Number),
      msg: 'request completed',
    });
    // no header map on any request line: no credential header can reach the log
    for (const entry of entries) {
      expect(Object.keys(entry.req).sort()).toEqual(expect.arrayContaining(['id', 'method', 'url']));
      expect(entry.req).not.toHaveProperty('headers');
      expect(Object.keys(entry.res)).toEqual(['statusCode']);
    }

    const cookieCall = entries.find((e) => e.req.method === 'POST' && e.req.url === '/v1/todos');
    expect(cookieCall).toMatchObject({ auth_scheme: 'session', res: { statusCode: 201 } });

    const refused = entries.find((e) => e.res.statusCode === 400 && e.req.url.startsWith('/v1/todos'));
    expect(refused!.req.url).toBe('/v1/todos?status=done&access_token=[REDACTED]');

    const consent = entries.find((e) => e.req.method === 'POST' && e.req.url === '/v1/oauth/authorize');
    expect(consent!.res).toEqual({ statusCode: 302 });

    const bearerCall = entries.find((e) => e.req.url === '/v1/api-keys');
    expect(bearerCall).toMatchObject({ auth_scheme: 'bearer', res: { statusCode: 201 } });
    // a typical line is a few hundred bytes, not the kilobyte and more of the header maps
    expect(Buffer.byteLength(JSON.stringify(keyCall))).toBeLessThan(400);
  });
});
