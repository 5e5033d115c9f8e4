import { createHmac, createSign, generateKeyPairSync, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';

// RS256 mode for this file: the key pair must be in the environment before AppModule is loaded,
// so the app is imported dynamically in beforeAll (each test file has its own module registry).
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PRIVATE_PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const PUBLIC_PEM = publicKey.export({ type: 'spki', format: 'pem' }).toString();
const other = generateKeyPairSync('rsa', { modulusLength: 2048 });

type Json = Record<string, unknown>;
const b64url = (value: Json) => Buffer.from(JSON.stringify(value)).toString('base64url');
const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Json;

function signRs256(payload: Json, key = privateKey, header: Json = { alg: 'RS256', typ: 'JWT' }): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  return `${input}.${createSign('RSA-SHA256').update(input).sign(key).toString('base64url')}`;
}

function signHs256(payload: Json, secret: string | Buffer, header: Json = { alg: 'HS256', typ: 'JWT' }): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

describe('access tokens: RS256, JWKS, logout and the deny list (docs/authentication.md#the-access-token, docs/authentication.md#logging-out-and-the-deny-list)', () => {
  let app: NestExpressApplication;
  let user: { id: number; role: string };
  let token: string;
  let refreshToken: string;
  const api = () => request(app.getHttpServer());
  const claims = (overrides: Json = {}): Json => {
    const now = Math.floor(Date.now() / 1000);
    return { user_id: user.id, role: user.role, typ: 'access', fid: randomUUID(), iat: now, exp: now + 300, jti: randomUUID(), ...overrides };
  };
  const expect401 = async (bearerToken: string) => {
    const res = await api().get(`/v1/users/${user.id}`).set('Authorization', `Bearer ${bearerToken}`);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="api", error="invalid_token"');
    expect(res.body).toEqual({ error: 'invalid or expired token', code: 'unauthorized', request_id: expect.any(String) });
  };

  beforeAll(async () => {
    process.env.JWT_PRIVATE_KEY = PRIVATE_PEM;
    process.env.JWT_PUBLIC_KEY = PUBLIC_PEM;
    const { createTestApp } = await import('./setup/test-app.js');
    const { createUser } = await import('./factories/user.factory.js');
    app = await createTestApp();
    const created = await createUser(app);
    user = { id: created.user.id, role: created.user.role };
    token = created.token;
    refreshToken = created.refreshToken;
  });
  afterAll(async () => {
    delete process.env.JWT_PRIVATE_KEY;
    delete process.env.JWT_PUBLIC_KEY;
    await app.close();
  });

  it('issues RS256 tokens whose kid names the key published at /.well-known/jwks.json', async () => {
    const header = decode(token.split('.')[0]);
    expect(header).toEqual({ alg: 'RS256', typ: 'JWT', kid: expect.any(String) });
    const jwks = await api().get('/.well-known/jwks.json');
    expect(jwks.status).toBe(200);
    expect(jwks.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(jwks.body.keys).toHaveLength(1);
    const jwk = jwks.body.keys[0];
    expect(jwk).toEqual({ kty: 'RSA', n: expect.any(String), e: 'AQAB', alg: 'RS256', use: 'sig', kid: header.kid });
    expect(jwk).not.toHaveProperty('d');
    expect(jwk.n).toBe((publicKey.export({ format: 'jwk' }) as { n: string }).n);
    const me = await api().get(`/v1/users/${user.id}`).set('Authorization', `Bearer ${token}`);
    expect(me.status).toBe(200);
  });

  it('accepts a correctly signed RS256 token (control for the hostile ones)', async () => {
    const res = await api()
      .get(`/v1/users/${user.id}`)
      .set('Authorization', `Bearer ${signRs256(claims())}`);
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(user.id);
  });

  describe('hostile tokens → 401', () => {
    it('refuses alg none', async () => {
      await expect401(`${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims())}.`);
    });
    it('refuses HS256 signed with the RS256 public key (key confusion)', async () => {
      await expect401(signHs256(claims(), PUBLIC_PEM));
      await expect401(signHs256(claims(), publicKey.export({ type: 'spki', format: 'der' })));
    });
    it('refuses a tampered payload', async () => {
      const [h, , s] = signRs256(claims()).split('.');
      await expect401(`${h}.${b64url(claims({ role: 'admin' }))}.${s}`);
    });
    it('refuses a token signed by another key, even with exp far in the future', async () => {
      await expect401(signRs256(claims({ exp: Math.floor(Date.now() / 1000) + 10 * 365 * 86400 }), other.privateKey));
    });
    it('refuses an expired token', async () => {
      const now = Math.floor(Date.now() / 1000);
      await expect401(signRs256(claims({ iat: now - 600, exp: now - 300 })));
    });
    it('refuses a token without exp', async () => {
      const { exp: _exp, ...noExp } = claims();
      await expect401(signRs256(noExp));
    });
    it('ignores jku, x5u and jwk headers that point at an attacker key', async () => {
      const attackerJwk = { ...(other.publicKey.export({ format: 'jwk' }) as Json), kid: 'evil' };
      await expect401(signRs256(claims(), other.privateKey, { alg: 'RS256', typ: 'JWT', kid: 'evil', jwk: attackerJwk }));
      await expect401(signRs256(claims(), other.privateKey, { alg: 'RS256', typ: 'JWT', jku: 'https://attacker.example/jwks.json' }));
      await expect401(signRs256(claims(), other.privateKey, { alg: 'RS256', typ: 'JWT', x5u: 'https://attacker.example/cert.pem' }));
    });
    it('refuses a refresh token used as an access token', async () => {
      await expect401(refreshToken);
    });
    it('refuses a token of another type', async () => {
      await expect401(signRs256(claims({ typ: 'refresh' })));
    });
  });

  describe('POST /v1/logout', () => {
    it('needs a bearer token', async () => {
      const res = await api().post('/v1/logout');
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="api"');
    });

    it('revokes the login: the access token (denied jti) and its refresh tokens stop working, other logins do not', async () => {
      const { DEFAULT_PASSWORD } = await import('./factories/user.factory.js');
      const username = (await api().get(`/v1/users/${user.id}`).set('Authorization', `Bearer ${token}`)).body.username as string;
      const first = await api().post('/v1/login').send({ username, password: DEFAULT_PASSWORD });
      const second = await api().post('/v1/login').send({ username, password: DEFAULT_PASSWORD });
      expect(first.status).toBe(200);
      expect(second.status).toBe(200);

      const out = await api().post('/v1/logout').set('Authorization', `Bearer ${first.body.token}`);
      expect(out.status).toBe(204);
      expect(out.text).toBe('');

      await expect401(first.body.token);
      const refresh = await api().post('/v1/refresh').send({ refresh_token: first.body.refresh_token });
      expect(refresh.status).toBe(401);
      expect(refresh.body.code).toBe('unauthorized');

      const stillIn = await api().get(`/v1/users/${user.id}`).set('Authorization', `Bearer ${second.body.token}`);
      expect(stillIn.status).toBe(200);
      const stillRefreshes = await api().post('/v1/refresh').send({ refresh_token: second.body.refresh_token });
      expect(stillRefreshes.status).toBe(200);

      const again = await api().post('/v1/logout').set('Authorization', `Bearer ${first.body.token}`);
      expect(again.status).toBe(401);
    });
  });
});
