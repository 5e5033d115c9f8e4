import { createHash, randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { PARAMS_PROVIDER_TOKEN } from 'nestjs-pino';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { loggerParams } from '../src/common/logging.js';
import { createTestApp } from './setup/test-app.js';

/** Collects every log line the application writes. */
class Capture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  }
}

describe('request logs (SPEC §3: credentials never reach logs)', () => {
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

    const key = await api().post('/v1/api-keys').set('Authorization', `Bearer ${refreshed.body.token}`).send({ name: 'logs', scopes: ['todos:read'] });
    expect(key.status).toBe(201);
    secrets.push(key.body.key);
    const viaKey = await api().get('/v1/todos').set('X-API-Key', key.body.key);
    expect(viaKey.status).toBe(200);

    const session = await api().post('/v1/sessions').send({ username: 'logged_user', password });
    expect(session.status).toBe(201);
    const cookie = (session.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
    secrets.push(cookie.split('=')[1], session.body.csrf_token);
    const viaCookie = await api().post('/v1/todos').set('Cookie', cookie).set('X-CSRF-Token', session.body.csrf_token).send({ title: 'logged' });
    expect(viaCookie.status).toBe(201);

    // OAuth (issue 7): a client secret, the code in the consent redirect, the PKCE verifier, the tokens
    const admin = await api().post('/v1/users').send({ username: 'logged_admin', password, name: 'Admin' });
    await app.get(DataSource).query(`UPDATE users SET role = 'admin' WHERE id = ${Number(admin.body.id)}`);
    const adminToken = (await api().post('/v1/login').send({ username: 'logged_admin', password })).body.token as string;
    secrets.push(adminToken);
    const client = await api().post('/v1/oauth-clients').set('Authorization', `Bearer ${adminToken}`).send({ name: 'Logged App', redirect_uris: ['https://app.example/cb'], scopes: ['todos:read'], confidential: true });
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
    const exchanged = await api()
      .post('/v1/oauth/token')
      .type('form')
      .send({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: 'https://app.example/cb', client_id: client.body.client_id, client_secret: client.body.client_secret });
    expect(exchanged.status).toBe(200);
    secrets.push(exchanged.body.access_token, exchanged.body.refresh_token);
    expect((await api().get('/v1/todos').set('Authorization', `Bearer ${exchanged.body.access_token}`)).status).toBe(200);
    const revoked = await api().post('/v1/oauth/revoke').type('form').send({ token: exchanged.body.refresh_token, client_id: client.body.client_id, client_secret: client.body.client_secret });
    expect(revoked.status).toBe(200);

    const inQuery = await api().get('/v1/todos?status=done&access_token=query-secret-value');
    expect(inQuery.status).toBe(400);
    secrets.push('query-secret-value');

    await new Promise((resolve) => setImmediate(resolve));
    const text = capture.lines.join('\n');
    expect(capture.lines.length).toBeGreaterThanOrEqual(8);
    for (const secret of secrets) expect(text).not.toContain(secret);
  });

  it('writes one structured line per request: method, path without credential parameters, status, duration, request id, user and scheme', async () => {
    const entries = capture.lines.map((line) => JSON.parse(line) as Record<string, any>).filter((entry) => entry.req && entry.res);
    const keyCall = entries.find((e) => e.req.method === 'GET' && e.req.url === '/v1/todos' && e.auth_scheme === 'api_key');
    expect(keyCall).toMatchObject({ res: { statusCode: 200 }, user_id: expect.any(Number), responseTime: expect.any(Number), req: { id: expect.any(String) } });
    expect(keyCall!.req.headers['x-api-key']).toBe('[REDACTED]');

    const cookieCall = entries.find((e) => e.req.method === 'POST' && e.req.url === '/v1/todos');
    expect(cookieCall).toMatchObject({ auth_scheme: 'session', res: { statusCode: 201 } });
    expect(cookieCall!.req.headers.cookie).toBe('[REDACTED]');
    expect(cookieCall!.req.headers['x-csrf-token']).toBe('[REDACTED]');

    const sessionStart = entries.find((e) => e.req.method === 'POST' && e.req.url === '/v1/sessions');
    expect(sessionStart!.res.headers['set-cookie']).toBe('[REDACTED]');

    const refused = entries.find((e) => e.res.statusCode === 400 && e.req.url.startsWith('/v1/todos'));
    expect(refused!.req.url).toBe('/v1/todos?status=done');

    const consent = entries.find((e) => e.req.method === 'POST' && e.req.url === '/v1/oauth/authorize');
    expect(consent!.res).toMatchObject({ statusCode: 302, headers: { location: expect.stringMatching(/^https:\/\/app\.example\/cb\?code=%5BREDACTED%5D&iss=/) } });

    const bearerCall = entries.find((e) => e.req.url === '/v1/api-keys');
    expect(bearerCall).toMatchObject({ auth_scheme: 'bearer', res: { statusCode: 201 } });
    expect(bearerCall!.req.headers.authorization).toBe('[REDACTED]');
  });
});
