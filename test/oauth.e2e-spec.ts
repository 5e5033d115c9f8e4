import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request, { type Response } from 'supertest';
import { DataSource } from 'typeorm';
import { OAuthAuthorizationCode } from '../src/oauth/oauth-authorization-code.entity.js';
import { OAuthClient } from '../src/oauth/oauth-client.entity.js';
import { OAuthGrant } from '../src/oauth/oauth-grant.entity.js';
import { OAuthRefreshToken } from '../src/oauth/oauth-refresh-token.entity.js';
import { form, hiddenFields, locationParams, pkce, registerClient, type RegisteredClient, sidCookie, signIn } from './factories/oauth.factory.js';
import { bearer, createUser, type CreatedUser } from './factories/user.factory.js';
import { errorBody } from './setup/error-body.js';
import { ISO_MS } from './setup/formats.js';

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
const oauthError = (error: string) => ({ error, error_description: expect.any(String) });
const REDIRECT = 'https://todo-sync.example/callback';
const FORM = 'application/x-www-form-urlencoded';

/** The claims of a JWT (not verified: the API verifies it when it is used). */
function claims(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8'));
}

describe('OAuth 2.0 authorization code with PKCE', () => {
  let app: NestExpressApplication;
  let admin: CreatedUser;
  let alice: CreatedUser;
  let bob: CreatedUser;
  /** A public client (PKCE only) allowed todos:read todos:write. */
  let client: RegisteredClient;
  /** A confidential client with a secret. */
  let confidential: RegisteredClient;
  let session: { cookie: string; csrf: string };
  let issuer: string;
  const api = () => request(app.getHttpServer());

  /** The authorization request parameters, with overrides (undefined removes one). */
  function authorizeParams(
    overrides: Record<string, string | undefined> = {},
    of: RegisteredClient = client,
    challenge = pkce().challenge,
  ): Record<string, string> {
    const params: Record<string, string | undefined> = {
      response_type: 'code',
      client_id: of.client_id,
      redirect_uri: of.redirect_uris[0],
      scope: 'todos:read todos:write',
      state: 'st-4b7&x=1 +/%=',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...overrides,
    };
    return Object.fromEntries(Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined));
  }

  const authorize = (params: Record<string, string>, cookie?: string) => {
    const req = api().get('/v1/oauth/authorize').query(params);
    return cookie ? req.set('Cookie', cookie) : req;
  };

  /** GET the consent page as the signed-in user and submit it; returns the redirect response. */
  async function consent(
    params: Record<string, string>,
    decision: 'approve' | 'deny' = 'approve',
    options: { grantScope?: string[]; who?: { cookie: string; csrf: string } } = {},
  ): Promise<Response> {
    const who = options.who ?? session;
    const page = await authorize(params, who.cookie);
    expect(page.status).toBe(200);
    const fields = hiddenFields(page.text);
    const grantScope = options.grantScope ?? [...page.text.matchAll(/name="grant_scope" value="([^"]+)"/g)].map((m) => m[1]);
    return api()
      .post('/v1/oauth/authorize')
      .set('Cookie', who.cookie)
      .set('Content-Type', FORM)
      .send(form({ ...fields, decision, grant_scope: grantScope }));
  }

  /** Runs authorize + approve and returns the code with its verifier. */
  async function code(
    of: RegisteredClient = client,
    scope = 'todos:read todos:write',
    who?: { cookie: string; csrf: string },
  ): Promise<{ code: string; verifier: string }> {
    const { verifier, challenge } = pkce();
    const res = await consent(authorizeParams({ scope }, of, challenge), 'approve', { who });
    expect(res.status).toBe(302);
    return { code: locationParams(res).code, verifier };
  }

  const token = (fields: Record<string, string | undefined>, basic?: [string, string]) => {
    const req = api().post('/v1/oauth/token').set('Content-Type', FORM);
    // RFC 6749 §2.3.1: both form-urlencoded before Base64; encode `_` too, as openid-client does
    const formEncode = (value: string) => encodeURIComponent(value).replace(/_/g, '%5F');
    if (basic) req.set('Authorization', `Basic ${Buffer.from(`${formEncode(basic[0])}:${formEncode(basic[1])}`).toString('base64')}`);
    return req.send(form(fields));
  };
  const exchange = (c: { code: string; verifier: string }, of: RegisteredClient = client) =>
    token({ grant_type: 'authorization_code', code: c.code, code_verifier: c.verifier, redirect_uri: of.redirect_uris[0], client_id: of.client_id });
  const refresh = (refreshToken: string, of: RegisteredClient = client, extra: Record<string, string> = {}) =>
    token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: of.client_id, ...extra });
  const revoke = (fields: Record<string, string>) => api().post('/v1/oauth/revoke').set('Content-Type', FORM).send(form(fields));

  /** A full flow for the public client: tokens of alice with `scope`. */
  async function tokens(scope = 'todos:read todos:write'): Promise<{ access_token: string; refresh_token: string; scope: string }> {
    const res = await exchange(await code(client, scope));
    expect(res.status).toBe(200);
    return res.body;
  }

  const savedIssuer = process.env.OAUTH_ISSUER;
  beforeAll(async () => {
    // a fixed issuer (supertest listens on a new port per request); the configuration is read when
    // AppModule is first imported, hence the dynamic import (openid-client's test covers the derived one)
    process.env.OAUTH_ISSUER = 'https://api.example.test';
    const { createTestApp } = await import('./setup/test-app.js');
    app = await createTestApp();
    admin = await createUser(app, { role: 'admin', name: 'Admin' });
    alice = await createUser(app, { name: 'Alice' });
    bob = await createUser(app, { name: 'Bob' });
    client = await registerClient(app, admin);
    confidential = await registerClient(app, admin, {
      name: 'Server App',
      confidential: true,
      redirect_uris: ['https://server-app.example/cb', 'http://127.0.0.1:8080/cb'],
      scopes: ['todos:read'],
    });
    session = await signIn(app, alice);
    issuer = (await api().get('/.well-known/oauth-authorization-server')).body.issuer;
  });
  afterAll(async () => {
    await app?.close();
    if (savedIssuer === undefined) delete process.env.OAUTH_ISSUER;
    else process.env.OAUTH_ISSUER = savedIssuer;
  });

  describe('client registry (admins)', () => {
    it('POST /v1/oauth-clients: 201 with Location, client_id, and for a confidential client the secret shown once and stored hashed', async () => {
      const res = await api()
        .post('/v1/oauth-clients')
        .set('Authorization', bearer(admin.token))
        .send({
          name: 'Reporting',
          redirect_uris: ['https://reports.example/oauth/cb', 'http://localhost:3000/cb'],
          scopes: ['todos:read', 'articles:read'],
          confidential: true,
        });
      expect(res.status).toBe(201);
      expect(res.headers.location).toBe(`/v1/oauth-clients/${res.body.id}`);
      expect(res.body).toEqual({
        id: expect.any(Number),
        client_id: expect.stringMatching(/^oc_[A-Za-z0-9_-]{22}$/),
        client_secret: expect.stringMatching(/^cs_[A-Za-z0-9_-]{43}$/),
        name: 'Reporting',
        redirect_uris: ['https://reports.example/oauth/cb', 'http://localhost:3000/cb'],
        scopes: ['articles:read', 'todos:read'],
        confidential: true,
        created_at: expect.stringMatching(ISO_MS),
        updated_at: expect.stringMatching(ISO_MS),
        links: [{ rel: 'self', href: `/v1/oauth-clients/${res.body.id}` }],
      });
      const row = await app.get(DataSource).getRepository(OAuthClient).findOneByOrFail({ id: res.body.id });
      expect(row.secret_hash).toBe(sha256(res.body.client_secret));
      const read = await api().get(`/v1/oauth-clients/${res.body.id}`).set('Authorization', bearer(admin.token));
      expect(read.status).toBe(200);
      expect(read.body).not.toHaveProperty('client_secret');
      const { client_secret: _secret, ...rest } = res.body;
      expect(read.body).toEqual(rest);
    });

    it('a public client gets no secret', () => {
      expect(client).not.toHaveProperty('client_secret');
      expect(client.client_id).toMatch(/^oc_/);
    });

    it.each([
      ['http for a non-loopback host', 'http://todo-sync.example/callback'],
      ['a fragment', 'https://todo-sync.example/callback#x'],
      ['a relative URI', '/callback'],
      ['a dot segment', 'https://todo-sync.example/a/../callback'],
      ['a wildcard', 'https://*.example/callback'],
      ['user information', 'https://user:pw@todo-sync.example/callback'],
      ['another scheme', 'javascript:alert(1)'],
    ])('refuses a redirect URI with %s: 422', async (_what, uri) => {
      const res = await api()
        .post('/v1/oauth-clients')
        .set('Authorization', bearer(admin.token))
        .send({ name: 'x', redirect_uris: [uri], scopes: ['todos:read'], confidential: false });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ ...errorBody('validation_failed'), details: [{ field: 'redirect_uris', message: expect.stringContaining('redirect URI') }] });
    });

    it('400 for a missing field, 422 for an unknown scope', async () => {
      const missing = await api()
        .post('/v1/oauth-clients')
        .set('Authorization', bearer(admin.token))
        .send({ name: 'x', redirect_uris: [REDIRECT], scopes: ['todos:read'] });
      expect(missing.status).toBe(400);
      expect(missing.body.details).toEqual([{ field: 'confidential', message: expect.any(String) }]);
      const scope = await api()
        .post('/v1/oauth-clients')
        .set('Authorization', bearer(admin.token))
        .send({ name: 'x', redirect_uris: [REDIRECT], scopes: ['todos:admin'], confidential: false });
      expect(scope.status).toBe(422);
    });

    it('non-admins get 403; API keys and OAuth access tokens cannot manage clients (403) even as admin', async () => {
      const res = await api().get('/v1/oauth-clients').set('Authorization', bearer(alice.token));
      expect(res.status).toBe(403);
      expect(res.body).toEqual(errorBody('forbidden'));
      const key = await api()
        .post('/v1/api-keys')
        .set('Authorization', bearer(admin.token))
        .send({ name: 'k', scopes: ['todos:read'] });
      const withKey = await api().get('/v1/oauth-clients').set('X-API-Key', key.body.key);
      expect(withKey.status).toBe(403);
      const adminSession = await signIn(app, admin);
      const c = await code(client, 'todos:read', adminSession);
      const adminToken = (await exchange(c)).body.access_token as string;
      const withToken = await api().get('/v1/oauth-clients').set('Authorization', bearer(adminToken));
      expect(withToken.status).toBe(403);
      expect(withToken.body.error).toBe('OAuth access tokens cannot use this operation');
    });

    it('GET /v1/oauth-clients lists them (paged), GET one 404 when missing, DELETE 204 then 404', async () => {
      const list = await api().get('/v1/oauth-clients?sort=-id&size=2').set('Authorization', bearer(admin.token));
      expect(list.status).toBe(200);
      expect(list.body).toMatchObject({ page: 1, size: 2, total: expect.any(Number) });
      expect(list.body.data[0]).not.toHaveProperty('client_secret');
      const gone = await registerClient(app, admin, { name: 'Short-lived' });
      expect((await api().delete(`/v1/oauth-clients/${gone.id}`).set('Authorization', bearer(admin.token))).status).toBe(204);
      const read = await api().get(`/v1/oauth-clients/${gone.id}`).set('Authorization', bearer(admin.token));
      expect(read.status).toBe(404);
      expect(read.body).toEqual(errorBody('not_found'));
    });
  });

  describe('GET /v1/oauth/authorize: checks before anything is shown', () => {
    it('an unknown client: 400 HTML error page, no redirect', async () => {
      const res = await authorize(authorizeParams({ client_id: 'oc_unknown' }), session.cookie);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers.location).toBeUndefined();
      expect(res.text).toContain('unknown client_id');
    });

    it.each([
      ['a trailing slash', `${REDIRECT}/`],
      ['an extra query', `${REDIRECT}?next=/admin`],
      ['another port', 'https://todo-sync.example:8443/callback'],
      ['a dot segment', 'https://todo-sync.example/x/../callback'],
      ['http instead of https', 'http://todo-sync.example/callback'],
      ['another host', 'https://evil.example/callback'],
      ['other case', 'https://Todo-Sync.EXAMPLE/callback'],
    ])('a redirect URI with %s: 400 HTML error page, never a redirect (exact match)', async (_what, uri) => {
      const res = await authorize(authorizeParams({ redirect_uri: uri }), session.cookie);
      expect(res.status).toBe(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.text).toContain('redirect_uri is not registered');
    });

    it('a missing redirect URI: 400, no redirect', async () => {
      const res = await authorize(authorizeParams({ redirect_uri: undefined }), session.cookie);
      expect(res.status).toBe(400);
      expect(res.headers.location).toBeUndefined();
    });

    it.each([
      ['no code_challenge', { code_challenge: undefined }, 'invalid_request'],
      ['code_challenge_method=plain', { code_challenge_method: 'plain' }, 'invalid_request'],
      ['no code_challenge_method', { code_challenge_method: undefined }, 'invalid_request'],
      ['a malformed challenge', { code_challenge: 'short' }, 'invalid_request'],
      ['response_type=token (implicit grant)', { response_type: 'token' }, 'unsupported_response_type'],
      ['no scope', { scope: undefined }, 'invalid_scope'],
      ["a scope outside the client's", { scope: 'todos:read orders:read' }, 'invalid_scope'],
      ['an unknown scope', { scope: 'todos:admin' }, 'invalid_scope'],
    ])('%s: 302 back to the client with error=%s, state unchanged and iss', async (_what, overrides, error) => {
      const params = authorizeParams(overrides as Record<string, string | undefined>);
      const res = await authorize(params, session.cookie);
      expect(res.status).toBe(302);
      expect(res.headers.location.startsWith(`${REDIRECT}?`)).toBe(true);
      expect(locationParams(res)).toEqual({ error, error_description: expect.any(String), state: params.state, iss: issuer });
    });

    it('no session cookie: a sign-in form that returns to the request', async () => {
      const params = authorizeParams();
      const res = await authorize(params);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.text).toContain('<form method="post" action="/v1/oauth/sign-in">');
      const returnTo = new URL(hiddenFields(res.text).return_to, 'http://x');
      expect(returnTo.pathname).toBe('/v1/oauth/authorize');
      expect(Object.fromEntries(returnTo.searchParams)).toEqual(params);
    });

    it('signed in: the consent page names the client (HTML-escaped), the user and each scope, with Approve, Deny and the CSRF token', async () => {
      const sneaky = await registerClient(app, admin, { name: '<script>alert("x")</script> & Co' });
      const res = await authorize(authorizeParams({}, sneaky), session.cookie);
      expect(res.status).toBe(200);
      expect(res.text).toContain('&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62; &#38; Co');
      expect(res.text).not.toContain('<script>');
      expect(res.text).toContain(alice.user.username);
      expect(res.text).toContain('name="grant_scope" value="todos:read"');
      expect(res.text).toContain('name="grant_scope" value="todos:write"');
      expect(res.text).toContain('name="decision" value="approve"');
      expect(res.text).toContain('name="decision" value="deny"');
      expect(hiddenFields(res.text).csrf_token).toBe(session.csrf);
    });

    it('sends no CORS headers, even to a cross-origin request', async () => {
      const res = await authorize(authorizeParams(), session.cookie).set('Origin', 'https://evil.example');
      expect(res.status).toBe(200);
      expect(Object.keys(res.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
    });
  });

  describe('POST /v1/oauth/authorize: the consent decision', () => {
    it('without the CSRF token or with a wrong one: 403, no code', async () => {
      const page = await authorize(authorizeParams(), session.cookie);
      const { csrf_token: _csrf, ...fields } = hiddenFields(page.text);
      for (const csrf of [undefined, 'x'.repeat(32)]) {
        const res = await api()
          .post('/v1/oauth/authorize')
          .set('Cookie', session.cookie)
          .set('Content-Type', FORM)
          .send(form({ ...fields, csrf_token: csrf, decision: 'approve', grant_scope: 'todos:read' }));
        expect(res.status).toBe(403);
        expect(res.headers.location).toBeUndefined();
      }
    });

    it('without a session: 401, no code', async () => {
      const page = await authorize(authorizeParams(), session.cookie);
      const res = await api()
        .post('/v1/oauth/authorize')
        .set('Content-Type', FORM)
        .send(form({ ...hiddenFields(page.text), decision: 'approve', grant_scope: 'todos:read' }));
      expect(res.status).toBe(401);
      expect(res.headers.location).toBeUndefined();
    });

    it('a JSON body: 415 (the form endpoints take only application/x-www-form-urlencoded)', async () => {
      const res = await api().post('/v1/oauth/authorize').set('Cookie', session.cookie).send({ decision: 'approve' });
      expect(res.status).toBe(415);
      expect(res.body).toEqual(errorBody('unsupported_media_type'));
    });

    it('Deny: 302 with error=access_denied, state and iss', async () => {
      const params = authorizeParams();
      const res = await consent(params, 'deny');
      expect(res.status).toBe(302);
      expect(locationParams(res)).toEqual({ error: 'access_denied', error_description: expect.any(String), state: params.state, iss: issuer });
    });

    it('Approve: 302 with code, state unchanged and iss; the code is stored hashed, expires within 60 s', async () => {
      const params = authorizeParams();
      const res = await consent(params);
      expect(res.status).toBe(302);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.text).toBe('');
      const query = locationParams(res);
      expect(query).toEqual({ code: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), state: 'st-4b7&x=1 +/%=', iss: issuer });
      const row = await app
        .get(DataSource)
        .getRepository(OAuthAuthorizationCode)
        .findOneByOrFail({ code_hash: sha256(query.code) });
      expect(row.expires_at.getTime() - row.created_at.getTime()).toBeLessThanOrEqual(60_000);
      expect(row.code_challenge).toBe(params.code_challenge);
    });

    it('a tampered scope field is checked again: wider than the client → error=invalid_scope', async () => {
      const page = await authorize(authorizeParams(), session.cookie);
      const res = await api()
        .post('/v1/oauth/authorize')
        .set('Cookie', session.cookie)
        .set('Content-Type', FORM)
        .send(form({ ...hiddenFields(page.text), scope: 'todos:read orders:write', decision: 'approve', grant_scope: ['todos:read', 'orders:write'] }));
      expect(res.status).toBe(302);
      expect(locationParams(res).error).toBe('invalid_scope');
    });

    it('the user unchecks a scope: the token has only the approved ones; checking one not requested adds nothing', async () => {
      const { verifier, challenge } = pkce();
      const res = await consent(authorizeParams({ scope: 'todos:read todos:write' }, client, challenge), 'approve', {
        grantScope: ['todos:read', 'orders:write'],
      });
      const exchanged = await exchange({ code: locationParams(res).code, verifier });
      expect(exchanged.status).toBe(200);
      expect(exchanged.body.scope).toBe('todos:read');
      expect(claims(exchanged.body.access_token).scope).toBe('todos:read');
    });
  });

  describe('POST /v1/oauth/sign-in', () => {
    const returnTo = () => `/v1/oauth/authorize?${new URLSearchParams(authorizeParams()).toString()}`;
    const post = (fields: Record<string, string | undefined>) => api().post('/v1/oauth/sign-in').set('Content-Type', FORM).send(form(fields));

    it('right password: a new session cookie and 303 back to the authorization request, which then shows the consent page', async () => {
      const back = returnTo();
      const res = await post({ username: bob.user.username, password: 'password-123', return_to: back });
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe(back);
      const cookie = sidCookie(res);
      expect(cookie).toMatch(/^sid=/);
      const page = await api()
        .get(back)
        .set('Cookie', cookie as string);
      expect(page.status).toBe(200);
      expect(page.text).toContain(bob.user.username);
      expect(page.text).toContain('name="decision" value="approve"');
    });

    it('under /v2 too: the v2 authorize request shows a form posting back to the canonical /v1 sign-in, and a /v2 return_to is accepted', async () => {
      const params = authorizeParams();
      const form2 = await api().get(`/v2/oauth/authorize?${new URLSearchParams(params).toString()}`);
      expect(form2.status).toBe(200);
      expect(form2.text).toContain('<form method="post" action="/v1/oauth/sign-in">');
      expect(new URL(hiddenFields(form2.text).return_to, 'http://x').pathname).toBe('/v1/oauth/authorize');
      const back = `/v2/oauth/authorize?${new URLSearchParams(params).toString()}`;
      const res = await api()
        .post('/v2/oauth/sign-in')
        .set('Content-Type', FORM)
        .send(form({ username: bob.user.username, password: 'password-123', return_to: back }));
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe(back);
      // a version that does not exist is no authorization request of this server
      const v9 = await post({ username: bob.user.username, password: 'password-123', return_to: back.replace('/v2/', '/v9/') });
      expect(v9.status).toBe(400);
    });

    it('wrong password: 401 with the form again; a return_to elsewhere: 400; posted from another origin: 403', async () => {
      const wrong = await post({ username: bob.user.username, password: 'nope-nope-nope', return_to: returnTo() });
      expect(wrong.status).toBe(401);
      expect(wrong.text).toContain('Invalid username or password.');
      expect(sidCookie(wrong)).toBeUndefined();
      const elsewhere = await post({ username: bob.user.username, password: 'password-123', return_to: 'https://evil.example/' });
      expect(elsewhere.status).toBe(400);
      expect(elsewhere.headers.location).toBeUndefined();
      const crossSite = await api()
        .post('/v1/oauth/sign-in')
        .set('Origin', 'https://evil.example')
        .set('Content-Type', FORM)
        .send(form({ username: bob.user.username, password: 'password-123', return_to: returnTo() }));
      expect(crossSite.status).toBe(403);
      expect(sidCookie(crossSite)).toBeUndefined();
    });
  });

  describe('POST /v1/oauth/token', () => {
    it('exchanges a code with its PKCE verifier: 200 {access_token, token_type, expires_in, refresh_token, scope}, no-store; the JWT carries client_id and scope', async () => {
      const res = await exchange(await code());
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toEqual({
        access_token: expect.any(String),
        token_type: 'Bearer',
        expires_in: expect.any(Number),
        refresh_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        scope: 'todos:read todos:write',
      });
      expect(res.body.expires_in).toBeGreaterThan(290);
      expect(res.body.expires_in).toBeLessThanOrEqual(300);
      expect(claims(res.body.access_token)).toEqual({
        user_id: alice.user.id,
        role: 'user',
        typ: 'access',
        fid: expect.any(String),
        client_id: client.client_id,
        scope: 'todos:read todos:write',
        iat: expect.any(Number),
        iat_ms: expect.any(Number),
        exp: expect.any(Number),
        jti: expect.any(String),
      });
      const stored = await app
        .get(DataSource)
        .getRepository(OAuthRefreshToken)
        .findOneByOrFail({ token_hash: sha256(res.body.refresh_token) });
      expect(stored.access_jti).toBe(claims(res.body.access_token).jti);
    });

    it('the access token works inside its scope and gets 403 naming the missing scope outside it', async () => {
      const { access_token: accessToken } = await tokens('todos:read');
      const mine = await api().get('/v1/todos').set('Authorization', bearer(accessToken));
      expect(mine.status).toBe(200);
      const write = await api().post('/v1/todos').set('Authorization', bearer(accessToken)).send({ title: 'x' });
      expect(write.status).toBe(403);
      expect(write.body).toEqual({ ...errorBody('forbidden'), error: 'missing scope todos:write' });
      const other = await api().get('/v1/articles').set('Authorization', bearer(accessToken));
      expect(other.status).toBe(403);
      expect(other.body.error).toBe('missing scope articles:read');
    });

    it('third-party applications never manage API keys, sessions, OAuth grants, or log out: 403', async () => {
      const { access_token: accessToken } = await tokens();
      for (const [method, path] of [
        ['get', '/v1/api-keys'],
        ['get', '/v1/oauth-grants'],
        ['get', '/v1/sessions/current'],
        ['post', '/v1/logout'],
      ] as const) {
        const res = await api()[method](path).set('Authorization', bearer(accessToken));
        expect({ path, status: res.status }).toEqual({ path, status: 403 });
      }
    });

    it('a wrong code_verifier: 400 invalid_grant, and the code is spent', async () => {
      const c = await code();
      const wrong = await exchange({ code: c.code, verifier: pkce().verifier });
      expect(wrong.status).toBe(400);
      expect(wrong.body).toEqual(oauthError('invalid_grant'));
      const right = await exchange(c);
      expect(right.status).toBe(400);
      expect(right.body).toEqual(oauthError('invalid_grant'));
    });

    it('no code_verifier: 400 invalid_request', async () => {
      const c = await code();
      const res = await token({ grant_type: 'authorization_code', code: c.code, redirect_uri: REDIRECT, client_id: client.client_id });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(oauthError('invalid_request'));
    });

    it('a code used twice: the second use gets invalid_grant and revokes the tokens issued from the first', async () => {
      const c = await code();
      const first = await exchange(c);
      expect(first.status).toBe(200);
      expect((await api().get('/v1/todos').set('Authorization', bearer(first.body.access_token))).status).toBe(200);
      const second = await exchange(c);
      expect(second.status).toBe(400);
      expect(second.body).toEqual(oauthError('invalid_grant'));
      const after = await api().get('/v1/todos').set('Authorization', bearer(first.body.access_token));
      expect(after.status).toBe(401);
      expect((await refresh(first.body.refresh_token)).body).toEqual(oauthError('invalid_grant'));
    });

    it('a code exchanged twice at the same moment: one gets tokens, the other invalid_grant, and those tokens are revoked', async () => {
      for (let round = 0; round < 3; round += 1) {
        const c = await code();
        const [a, b] = await Promise.all([exchange(c), exchange(c)]);
        const won = [a, b].filter((res) => res.status === 200);
        const lost = [a, b].filter((res) => res.status !== 200);
        expect({ round, won: won.length, lost: lost.map((res) => [res.status, res.body.error]) }).toEqual({ round, won: 1, lost: [[400, 'invalid_grant']] });
        // the winner's tokens were issued from a code used twice: revoked like after a sequential reuse
        const after = await api().get('/v1/todos').set('Authorization', bearer(won[0].body.access_token));
        expect({ round, status: after.status }).toEqual({ round, status: 401 });
        expect((await refresh(won[0].body.refresh_token)).body).toEqual(oauthError('invalid_grant'));
      }
    });

    it('an expired code (older than its 60 s): invalid_grant', async () => {
      const c = await code();
      await app
        .get(DataSource)
        .getRepository(OAuthAuthorizationCode)
        .update({ code_hash: sha256(c.code) }, { expires_at: new Date(Date.now() - 1000) });
      const res = await exchange(c);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(oauthError('invalid_grant'));
    });

    it("another client's code: invalid_grant; a different redirect_uri: 400", async () => {
      const other = await registerClient(app, admin, { name: 'Other' });
      const stolen = await exchange(await code(), other);
      expect(stolen.status).toBe(400);
      expect(stolen.body).toEqual(oauthError('invalid_grant'));
      const c = await code();
      const res = await token({
        grant_type: 'authorization_code',
        code: c.code,
        code_verifier: c.verifier,
        redirect_uri: `${REDIRECT}/`,
        client_id: client.client_id,
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^invalid_(request|grant)$/);
    });

    it('confidential clients authenticate (client_secret_basic or client_secret_post); a missing or wrong secret is 401 invalid_client', async () => {
      const base = async () => {
        const c = await code(confidential, 'todos:read');
        return { grant_type: 'authorization_code', code: c.code, code_verifier: c.verifier, redirect_uri: confidential.redirect_uris[0] };
      };
      const none = await token({ ...(await base()), client_id: confidential.client_id });
      expect(none.status).toBe(401);
      expect(none.body).toEqual(oauthError('invalid_client'));
      const wrong = await token(await base(), [confidential.client_id, 'cs_wrong']);
      expect(wrong.status).toBe(401);
      expect(wrong.headers['www-authenticate']).toBe('Basic realm="oauth"');
      const basic = await token(await base(), [confidential.client_id, confidential.client_secret as string]);
      expect(basic.status).toBe(200);
      const post = await token({ ...(await base()), client_id: confidential.client_id, client_secret: confidential.client_secret });
      expect(post.status).toBe(200);
      expect(post.body.scope).toBe('todos:read');
    });

    it('a public client sending a secret: 401 invalid_client', async () => {
      const c = await code();
      const res = await token({
        grant_type: 'authorization_code',
        code: c.code,
        code_verifier: c.verifier,
        redirect_uri: REDIRECT,
        client_id: client.client_id,
        client_secret: 'cs_anything',
      });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(oauthError('invalid_client'));
    });

    it.each(['password', 'client_credentials', 'implicit', 'urn:ietf:params:oauth:grant-type:device_code'])(
      'grant_type=%s: 400 unsupported_grant_type',
      async (grantType) => {
        const res = await token({ grant_type: grantType, username: alice.user.username, password: 'password-123', client_id: client.client_id });
        expect(res.status).toBe(400);
        expect(res.body).toEqual(oauthError('unsupported_grant_type'));
      },
    );

    it('no grant_type, a repeated parameter: 400 invalid_request; a JSON body: 415', async () => {
      expect((await token({ client_id: client.client_id })).body).toEqual(oauthError('invalid_request'));
      const repeated = await api().post('/v1/oauth/token').set('Content-Type', FORM).send('grant_type=refresh_token&refresh_token=a&refresh_token=b');
      expect(repeated.status).toBe(400);
      expect(repeated.body).toEqual(oauthError('invalid_request'));
      const json = await api().post('/v1/oauth/token').send({ grant_type: 'refresh_token' });
      expect(json.status).toBe(415);
    });

    // docs/wire.md#paths: the router matches paths case-insensitively, with or without one trailing
    // slash, after the version chosen by Accept is put in the path; the form rule of the endpoint follows it
    it.each<{ how: string; path: string; accept?: string }>([
      { how: 'another case', path: '/v1/OAuth/Token' },
      { how: 'a trailing slash', path: '/v1/oauth/token/' },
      { how: 'upper case and a trailing slash', path: '/v1/OAUTH/TOKEN/' },
      { how: 'the version from Accept, another case', path: '/OAuth/Token', accept: 'application/vnd.resource-api.v1+json' },
    ])('$how (POST $path) is the token endpoint: a JSON body 415 asking for a form, a form answered by the endpoint', async ({ path, accept }) => {
      const json = api().post(path).set('Content-Type', 'application/json');
      if (accept) json.set('Accept', accept);
      const refused = await json.send(JSON.stringify({ grant_type: 'refresh_token', refresh_token: 'rt_unknown', client_id: client.client_id }));
      expect(refused.status).toBe(415);
      expect(refused.headers['content-type']).toMatch(/^application\/json/);
      expect(refused.body).toEqual(
        errorBody('unsupported_media_type', 'content type application/json is not supported; send application/x-www-form-urlencoded'),
      );
      const posted = api().post(path).set('Content-Type', FORM);
      if (accept) posted.set('Accept', accept);
      const answered = await posted.send(form({ grant_type: 'refresh_token', refresh_token: 'rt_unknown', client_id: client.client_id }));
      expect(answered.status).toBe(400);
      expect(answered.body).toEqual(oauthError('invalid_grant'));
    });

    it('a JSON operation in another case stays JSON: a form body on POST /v1/TODOS is 415 asking for application/json', async () => {
      const res = await api().post('/v1/TODOS').set('Authorization', bearer(alice.token)).set('Content-Type', FORM).send('title=x');
      expect(res.status).toBe(415);
      expect(res.body).toEqual(errorBody('unsupported_media_type', 'content type application/x-www-form-urlencoded is not supported; send application/json'));
    });
  });

  describe('refresh tokens: rotation with reuse detection', () => {
    it('a refresh returns a new pair; the old refresh token then fails and revokes the whole grant', async () => {
      const first = await tokens();
      const rotated = await refresh(first.refresh_token);
      expect(rotated.status).toBe(200);
      expect(rotated.headers['cache-control']).toBe('no-store');
      expect(rotated.body.refresh_token).not.toBe(first.refresh_token);
      expect(rotated.body.scope).toBe('todos:read todos:write');
      expect(claims(rotated.body.access_token).fid).toBe(claims(first.access_token).fid);
      expect((await api().get('/v1/todos').set('Authorization', bearer(rotated.body.access_token))).status).toBe(200);

      const reused = await refresh(first.refresh_token);
      expect(reused.status).toBe(400);
      expect(reused.body).toEqual(oauthError('invalid_grant'));
      expect((await api().get('/v1/todos').set('Authorization', bearer(rotated.body.access_token))).status).toBe(401);
      expect((await refresh(rotated.body.refresh_token)).body).toEqual(oauthError('invalid_grant'));
    });

    it('may narrow the scope, never widen it (invalid_scope); another client cannot use it (invalid_grant)', async () => {
      const first = await tokens('todos:read');
      const wider = await refresh(first.refresh_token, client, { scope: 'todos:read todos:write' });
      expect(wider.status).toBe(400);
      expect(wider.body).toEqual(oauthError('invalid_scope'));
      const second = await tokens();
      const narrowed = await refresh(second.refresh_token, client, { scope: 'todos:read' });
      expect(narrowed.status).toBe(200);
      expect(narrowed.body.scope).toBe('todos:read');
      const other = await registerClient(app, admin, { name: 'Thief' });
      const stolen = await refresh(narrowed.body.refresh_token, other);
      expect(stolen.body).toEqual(oauthError('invalid_grant'));
    });
  });

  describe('POST /v1/oauth/revoke (RFC 7009)', () => {
    it('revoking the refresh token revokes the grant: the access token gets 401, the refresh token invalid_grant', async () => {
      const t = await tokens();
      const res = await revoke({ token: t.refresh_token, token_type_hint: 'refresh_token', client_id: client.client_id });
      expect(res.status).toBe(200);
      expect(res.text).toBe('');
      const call = await api().get('/v1/todos').set('Authorization', bearer(t.access_token));
      expect(call.status).toBe(401);
      expect(call.headers['www-authenticate']).toBe('Bearer realm="api", error="invalid_token"');
      expect((await refresh(t.refresh_token)).body).toEqual(oauthError('invalid_grant'));
    });

    it('revoking an access token: it gets 401 from now on', async () => {
      const t = await tokens();
      expect((await revoke({ token: t.access_token, client_id: client.client_id })).status).toBe(200);
      expect((await api().get('/v1/todos').set('Authorization', bearer(t.access_token))).status).toBe(401);
    });

    it("unknown tokens and another client's tokens: 200, nothing happens; no client authentication: 401; no token: 400", async () => {
      const t = await tokens();
      expect((await revoke({ token: 'not-a-token', client_id: client.client_id })).status).toBe(200);
      expect((await revoke({ token: t.refresh_token, client_id: confidential.client_id, client_secret: confidential.client_secret as string })).status).toBe(
        200,
      );
      expect((await api().get('/v1/todos').set('Authorization', bearer(t.access_token))).status).toBe(200);
      expect((await refresh(t.refresh_token)).status).toBe(200);
      const anonymous = await revoke({ token: t.access_token });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual(oauthError('invalid_client'));
      const wrongSecret = await revoke({ token: t.access_token, client_id: confidential.client_id, client_secret: 'cs_wrong' });
      expect(wrongSecret.status).toBe(401);
      const noToken = await revoke({ client_id: client.client_id });
      expect(noToken.status).toBe(400);
      expect(noToken.body).toEqual(oauthError('invalid_request'));
    });
  });

  describe('/v1/oauth-grants: the grants a user gave', () => {
    it('lists the caller’s own grants with the client, the scopes; another user sees none of them', async () => {
      const bobSession = await signIn(app, bob);
      const c = await code(client, 'todos:read', bobSession);
      expect((await exchange(c)).status).toBe(200);
      const list = await api().get('/v1/oauth-grants?sort=-id').set('Authorization', bearer(bob.token));
      expect(list.status).toBe(200);
      expect(list.body.total).toBe(1);
      expect(list.body.data[0]).toEqual({
        id: expect.any(Number),
        client_id: client.client_id,
        client_name: 'Todo Sync',
        scopes: ['todos:read'],
        created_at: expect.stringMatching(ISO_MS),
        last_used_at: expect.stringMatching(ISO_MS),
        links: [{ rel: 'self', href: `/v1/oauth-grants/${list.body.data[0].id}` }],
      });
      const read = await api().get(`/v1/oauth-grants/${list.body.data[0].id}`).set('Authorization', bearer(bob.token));
      expect(read.body).toEqual(list.body.data[0]);
      const foreign = await api().get(`/v1/oauth-grants/${list.body.data[0].id}`).set('Authorization', bearer(alice.token));
      expect(foreign.status).toBe(404);
      expect((await api().delete(`/v1/oauth-grants/${list.body.data[0].id}`).set('Authorization', bearer(alice.token))).status).toBe(404);
    });

    it('DELETE revokes a grant: 204, its access token 401, its refresh token invalid_grant', async () => {
      const t = await tokens();
      const fid = claims(t.access_token).fid;
      const list = await api().get('/v1/oauth-grants?size=100').set('Authorization', bearer(alice.token));
      const { id } = await app
        .get(DataSource)
        .getRepository(OAuthGrant)
        .findOneByOrFail({ family_id: fid as string });
      expect(list.body.data.map((g: { id: number }) => g.id)).toContain(id);
      const res = await api().delete(`/v1/oauth-grants/${id}`).set('Authorization', bearer(alice.token));
      expect(res.status).toBe(204);
      expect((await api().get('/v1/todos').set('Authorization', bearer(t.access_token))).status).toBe(401);
      expect((await refresh(t.refresh_token)).body).toEqual(oauthError('invalid_grant'));
    });

    it('deleting a client revokes its grants: their access tokens get 401', async () => {
      const doomed = await registerClient(app, admin, { name: 'Doomed' });
      const t = await exchange(await code(doomed, 'todos:read'), doomed);
      expect(t.status).toBe(200);
      expect((await api().delete(`/v1/oauth-clients/${doomed.id}`).set('Authorization', bearer(admin.token))).status).toBe(204);
      expect((await api().get('/v1/todos').set('Authorization', bearer(t.body.access_token))).status).toBe(401);
    });
  });

  describe('the OpenAPI document and the docs page', () => {
    it('declares the oauth2 scheme (authorization code flow) and each operation’s scope; none on operations closed to third parties', async () => {
      const doc = (await api().get('/docs/v1/openapi.json')).body;
      expect(doc.components.securitySchemes.oauth2).toMatchObject({
        type: 'oauth2',
        flows: {
          authorizationCode: {
            authorizationUrl: '/v1/oauth/authorize',
            tokenUrl: '/v1/oauth/token',
            scopes: expect.objectContaining({ 'todos:read': 'read todos' }),
          },
        },
      });
      expect(doc.paths['/v1/todos'].get.security).toContainEqual({ oauth2: ['todos:read'] });
      expect(doc.paths['/v1/todos'].post.security).toContainEqual({ oauth2: ['todos:write'] });
      for (const [path, method] of [
        ['/v1/api-keys', 'get'],
        ['/v1/oauth-grants', 'get'],
        ['/v1/oauth-clients', 'post'],
        ['/v1/logout', 'post'],
      ]) {
        expect(doc.paths[path][method].security.some((requirement: object) => 'oauth2' in requirement)).toBe(false);
      }
      expect(doc.paths['/v1/oauth/token'].post.requestBody.content).toHaveProperty(['application/x-www-form-urlencoded']);
      expect(doc.paths['/v1/oauth/token'].post.security).toBeUndefined();
    });

    it('serves Swagger UI’s OAuth redirect page, where a client registered for the docs page comes back', async () => {
      const res = await api().get('/docs/oauth2-redirect.html');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
    });
  });

  describe('GET /.well-known/oauth-authorization-server (RFC 8414)', () => {
    it('describes the endpoints, S256 only, the two grant types, the scopes; no jwks_uri under HS256; cacheable with OAUTH_ISSUER', async () => {
      const res = await api().get('/.well-known/oauth-authorization-server');
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('public, max-age=300');
      expect(res.body).toEqual({
        issuer: 'https://api.example.test',
        authorization_endpoint: `${res.body.issuer}/v1/oauth/authorize`,
        token_endpoint: `${res.body.issuer}/v1/oauth/token`,
        revocation_endpoint: `${res.body.issuer}/v1/oauth/revoke`,
        scopes_supported: expect.arrayContaining(['todos:read', 'todos:write', 'users:read']),
        response_types_supported: ['code'],
        response_modes_supported: ['query'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        code_challenge_methods_supported: ['S256'],
        authorization_response_iss_parameter_supported: true,
        service_documentation: `${res.body.issuer}/docs`,
      });
    });
  });
});
