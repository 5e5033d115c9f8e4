import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import * as oauth from 'openid-client';
import { hiddenFields, registerClient, type RegisteredClient } from './factories/oauth.factory.js';
import { createUser, DEFAULT_PASSWORD, type CreatedUser } from './factories/user.factory.js';
import { createTestApp } from './setup/test-app.js';

/** The loopback redirect URI of the application (RFC 8252 §7.3): nothing listens there, the test reads the redirect. */
const REDIRECT_URI = 'http://127.0.0.1/callback';

/**
 * A real client: openid-client v6 plays the third-party application against
 * the running server in OAuth 2.0 mode (RFC 8414 discovery, no OpenID Connect), with plain fetch
 * playing the user's browser on the sign-in and consent steps.
 */
describe('a third-party application using openid-client v6 (OAuth 2.0 mode)', () => {
  let app: NestExpressApplication;
  let base: string;
  let admin: CreatedUser;
  let alice: CreatedUser;

  /** The user's browser: signs in with a cookie session, opens the authorization URL, approves, returns the redirect. */
  async function approveAsAlice(authorizationUrl: URL): Promise<URL> {
    const signIn = await fetch(`${base}/v1/sessions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ username: alice.user.username, password: DEFAULT_PASSWORD }),
    });
    expect(signIn.status).toBe(201);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0];
    const consent = await fetch(authorizationUrl, { headers: { Cookie: cookie }, redirect: 'manual' });
    expect(consent.status).toBe(200);
    const page = await consent.text();
    expect(page).toContain('Todo Sync');
    const decision = new URLSearchParams({ ...hiddenFields(page), decision: 'approve' });
    for (const match of page.matchAll(/name="grant_scope" value="([^"]+)"/g)) decision.append('grant_scope', match[1]);
    const approved = await fetch(`${base}/v1/oauth/authorize`, {
      method: 'POST',
      headers: { Cookie: cookie, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: decision,
      redirect: 'manual',
    });
    expect(approved.status).toBe(302);
    return new URL(approved.headers.get('location') as string);
  }

  /** Calls the API as the application; returns the status (openid-client rejects a 401 with its challenge). */
  async function call(config: oauth.Configuration, accessToken: string, method: string, path: string, body?: object): Promise<{ status: number; body: any }> {
    try {
      const res = await oauth.fetchProtectedResource(
        config,
        accessToken,
        new URL(`${base}${path}`),
        method,
        body ? JSON.stringify(body) : undefined,
        body ? new Headers({ 'Content-Type': 'application/json' }) : undefined,
      );
      return { status: res.status, body: await res.json() };
    } catch (error) {
      if (error instanceof oauth.WWWAuthenticateChallengeError) return { status: error.status, body: { challenge: error.cause[0] } };
      throw error;
    }
  }

  beforeAll(async () => {
    app = await createTestApp();
    await app.listen(0, '127.0.0.1');
    base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    admin = await createUser(app, { role: 'admin' });
    alice = await createUser(app, { name: 'Alice' });
  });
  afterAll(async () => {
    await app?.close();
  });

  it.each([
    ['a confidential client (client_secret_basic)', true],
    ['a public client (PKCE only, token_endpoint_auth_method none)', false],
  ])(
    '%s: discovery, PKCE, consent, code exchange, a call inside the scope (200) and outside it (403), refresh, revocation, then 401',
    async (_what, confidential) => {
      const registered: RegisteredClient = await registerClient(app, admin, {
        name: 'Todo Sync',
        redirect_uris: [REDIRECT_URI],
        scopes: ['todos:read', 'todos:write', 'articles:read'],
        confidential,
      });
      const config = await oauth.discovery(
        new URL(base),
        registered.client_id,
        confidential ? registered.client_secret : undefined,
        confidential ? oauth.ClientSecretBasic(registered.client_secret) : oauth.None(),
        { algorithm: 'oauth2', execute: [oauth.allowInsecureRequests] },
      );
      const metadata = config.serverMetadata();
      expect(metadata.issuer).toBe(base);
      expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
      expect(metadata.authorization_response_iss_parameter_supported).toBe(true);

      const verifier = oauth.randomPKCECodeVerifier();
      const state = oauth.randomState();
      const authorizationUrl = oauth.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT_URI,
        scope: 'todos:read articles:read',
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
      });
      expect(authorizationUrl.href.startsWith(`${base}/v1/oauth/authorize?`)).toBe(true);

      const callback = await approveAsAlice(authorizationUrl);
      expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI);
      expect(callback.searchParams.get('iss')).toBe(base);
      // checks state, iss (RFC 9207) and the PKCE verifier, then exchanges the code
      const tokens = await oauth.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
      expect(tokens.token_type.toLowerCase()).toBe('bearer');
      expect(tokens.scope).toBe('articles:read todos:read');
      expect(tokens.expiresIn()).toBeGreaterThan(0);
      expect(tokens.refresh_token).toEqual(expect.any(String));

      const inside = await call(config, tokens.access_token, 'GET', '/v1/todos');
      expect(inside.status).toBe(200);
      expect(inside.body).toMatchObject({ data: [], total: 0 });
      const outside = await call(config, tokens.access_token, 'POST', '/v1/todos', { title: 'not allowed' });
      expect(outside).toEqual({ status: 403, body: { error: 'missing scope todos:write', code: 'forbidden', request_id: expect.any(String) } });

      const refreshed = await oauth.refreshTokenGrant(config, tokens.refresh_token as string);
      expect(refreshed.access_token).not.toBe(tokens.access_token);
      expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
      expect((await call(config, refreshed.access_token, 'GET', '/v1/articles')).status).toBe(200);
      // the rotated refresh token is spent
      await expect(oauth.refreshTokenGrant(config, tokens.refresh_token as string)).rejects.toMatchObject({ error: 'invalid_grant', status: 400 });

      // reuse detection revoked the grant above; start a fresh one to test revocation on its own
      const verifier2 = oauth.randomPKCECodeVerifier();
      const state2 = oauth.randomState();
      const again = await approveAsAlice(
        oauth.buildAuthorizationUrl(config, {
          redirect_uri: REDIRECT_URI,
          scope: 'todos:read',
          code_challenge: await oauth.calculatePKCECodeChallenge(verifier2),
          code_challenge_method: 'S256',
          state: state2,
        }),
      );
      const second = await oauth.authorizationCodeGrant(config, again, { pkceCodeVerifier: verifier2, expectedState: state2 });
      const third = await oauth.refreshTokenGrant(config, second.refresh_token as string);
      expect((await call(config, third.access_token, 'GET', '/v1/todos')).status).toBe(200);

      await oauth.tokenRevocation(config, third.refresh_token as string, { token_type_hint: 'refresh_token' });
      const after = await call(config, third.access_token, 'GET', '/v1/todos');
      expect(after.status).toBe(401);
      expect(after.body.challenge).toMatchObject({ scheme: 'bearer', parameters: { error: 'invalid_token' } });
      await expect(oauth.refreshTokenGrant(config, third.refresh_token as string)).rejects.toMatchObject({ error: 'invalid_grant' });
    },
  );

  it('openid-client refuses a redirect whose iss is not the issuer (RFC 9207 mix-up defence works end to end)', async () => {
    const registered = await registerClient(app, admin, { redirect_uris: [REDIRECT_URI], scopes: ['todos:read'] });
    const config = await oauth.discovery(new URL(base), registered.client_id, undefined, oauth.None(), {
      algorithm: 'oauth2',
      execute: [oauth.allowInsecureRequests],
    });
    const verifier = oauth.randomPKCECodeVerifier();
    const state = oauth.randomState();
    const callback = await approveAsAlice(
      oauth.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT_URI,
        scope: 'todos:read',
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
      }),
    );
    callback.searchParams.set('iss', 'https://evil.example');
    const error = (await oauth
      .authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state })
      .catch((e: unknown) => e)) as Error & { cause?: Error };
    expect(error).toBeInstanceOf(Error);
    expect(`${error.message} ${error.cause?.message ?? ''}`).toMatch(/"iss"/);
  });
});
