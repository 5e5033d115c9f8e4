import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { generate } from 'otplib';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { bearer } from './factories/user.factory.js';
import { errorBody } from './setup/error-body.js';
import type { FreshApp } from './setup/fresh-app.js';
import { boot, Capture, clearStore } from './setup/mail.js';

/**
 * Two-factor authentication end to end (docs/authentication.md#two-factor-authentication-totp):
 * enrolment and confirmation, sign-in with a code through `/login` and `/sessions`, recovery codes
 * (once each), replayed and wrong codes, the per-account throttle under 30 parallel guesses,
 * turning it off with a code or the password, and REQUIRE_ADMIN_TOTP. Codes are computed with the
 * same library as the service; logs are captured and searched for every secret and code used.
 */

const PASSWORD = 'correct horse battery';
const STEP_S = 30;

/** The code of `secret` `steps` time steps from now. */
const codeAt = (secret: string, steps = 0) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + steps * STEP_S });

/** A six-digit code valid at none of the steps around now for `secret`. */
async function wrongCode(secret: string): Promise<string> {
  const valid = new Set(await Promise.all([-2, -1, 0, 1, 2].map((steps) => codeAt(secret, steps))));
  for (const candidate of ['000000', '111111', '222222', '333333', '444444', '555555']) if (!valid.has(candidate)) return candidate;
  throw new Error('unreachable');
}

/** What the describes of this file share: the app, its log capture, and every secret used (for the log check). */
function harness(env: Record<string, string | undefined>) {
  const state = {
    capture: new Capture(),
    used: [] as string[],
    fresh: undefined as unknown as FreshApp & { restoreEnv: () => void },
    app: undefined as unknown as NestExpressApplication,
    counter: 0,
  };
  const api = () => request(state.app.getHttpServer());

  /** Registers a user through the API; returns its id and username. */
  async function register(): Promise<{ id: number; username: string }> {
    const username = `totp_${process.pid}_${++state.counter}`;
    const res = await api().post('/v1/users').send({ username, password: PASSWORD, name: 'Two Factor' });
    expect(res.status).toBe(201);
    return { id: res.body.id as number, username };
  }

  /** Logs `username` in with the password; returns the response. */
  const login = (username: string) => api().post('/v1/login').send({ username, password: PASSWORD });

  /** Enrols and confirms with the current code; returns the secret and the recovery codes. */
  async function enrol(token: string): Promise<{ secret: string; recoveryCodes: string[] }> {
    const started = await api().post('/v1/totp-enrolments').set('Authorization', bearer(token));
    expect(started.status).toBe(200);
    const secret = started.body.secret as string;
    state.used.push(secret);
    const code = await codeAt(secret);
    state.used.push(code);
    const confirmed = await api().post('/v1/totp-confirmations').set('Authorization', bearer(token)).send({ code });
    expect(confirmed.status).toBe(200);
    state.used.push(...confirmed.body.recovery_codes);
    return { secret, recoveryCodes: confirmed.body.recovery_codes };
  }

  /** A registered user with two-factor authentication on, and the token of its enrolment. */
  async function enrolled() {
    const user = await register();
    const { body: pair } = await login(user.username);
    return { ...user, token: pair.token as string, ...(await enrol(pair.token)) };
  }

  /** The password step of `/login` for an enrolled user (`password` unless the registration's): its challenge. */
  async function challengeOf(username: string, password = PASSWORD): Promise<string> {
    const res = await api().post('/v1/login').send({ username, password });
    expect(res.status).toBe(202);
    state.used.push(res.body.challenge);
    return res.body.challenge as string;
  }

  return {
    state,
    api,
    register,
    login,
    enrol,
    enrolled,
    challengeOf,
    start: async () => {
      ({ fresh: state.fresh, app: state.app } = await boot(env, state.capture));
    },
    stop: async () => {
      await state.app?.close();
      state.fresh?.restoreEnv();
    },
    db: () => state.app.get(state.fresh.DataSource) as DataSource,
  };
}

describe('two-factor authentication (TOTP)', () => {
  const h = harness({ TOTP_ISSUER: 'Resource Test', TOTP_ENCRYPTION_KEY: 'ab'.repeat(32) });
  const { api, register, login, enrolled, challengeOf } = h;

  beforeAll(async () => {
    await h.start();
  });
  afterAll(async () => {
    await h.stop();
  });
  beforeEach(async () => {
    await clearStore(h.state.app);
  });

  it('enrolment shows the secret once as base32 and an otpauth URI; confirming with a code turns it on with ten recovery codes, stored hashed', async () => {
    const ada = await register();
    const { body: pair } = await login(ada.username);
    const auth = bearer(pair.token);
    const started = await api().post('/v1/totp-enrolments').set('Authorization', auth);
    expect(started.status).toBe(200);
    expect(started.headers['cache-control']).toBe('no-store');
    const secret = started.body.secret as string;
    h.state.used.push(secret);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const uri = new URL(started.body.otpauth_uri);
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(decodeURIComponent(uri.pathname)).toBe(`/Resource Test:${ada.username}`);
    expect(uri.searchParams.get('secret')).toBe(secret);
    expect(uri.searchParams.get('issuer')).toBe('Resource Test');

    // encrypted at rest, pending
    const [row] = await h.db().query(`SELECT secret_encrypted, enabled_at FROM totp_secrets WHERE user_id = ${Number(ada.id)}`);
    expect(row.secret_encrypted).toMatch(/^v1\./);
    expect(row.secret_encrypted).not.toContain(secret);
    expect(row.enabled_at).toBeNull();
    // pending: the password alone still signs in
    expect((await login(ada.username)).status).toBe(200);

    const wrong = await api()
      .post('/v1/totp-confirmations')
      .set('Authorization', auth)
      .send({ code: await wrongCode(secret) });
    expect(wrong.status).toBe(422);
    expect(wrong.body.details).toEqual([{ field: 'code', message: 'code is wrong or expired' }]);
    const malformed = await api().post('/v1/totp-confirmations').set('Authorization', auth).send({ code: '12ab56' });
    expect(malformed.status).toBe(422);
    expect(malformed.body.details).toEqual([{ field: 'code', message: 'code must be six digits' }]);

    const code = await codeAt(secret);
    h.state.used.push(code);
    const confirmed = await api().post('/v1/totp-confirmations').set('Authorization', auth).send({ code });
    expect(confirmed.status).toBe(200);
    expect(confirmed.headers['cache-control']).toBe('no-store');
    expect(confirmed.body.totp_enabled).toBe(true);
    const codes = confirmed.body.recovery_codes as string[];
    h.state.used.push(...codes);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const recovery of codes) expect(recovery).toMatch(/^[a-z2-7]{5}-[a-z2-7]{5}$/);
    const hashes: Array<{ code_hash: string }> = await h.db().query(`SELECT code_hash FROM totp_recovery_codes WHERE user_id = ${Number(ada.id)}`);
    expect(hashes).toHaveLength(10);
    for (const { code_hash: hash } of hashes) {
      expect(hash).toMatch(/^[0-9a-f]{64}$/);
      expect(codes.join(' ')).not.toContain(hash);
    }

    // on: no second enrolment or confirmation; the password alone no longer signs in
    expect((await api().post('/v1/totp-enrolments').set('Authorization', auth)).status).toBe(409);
    expect((await api().post('/v1/totp-confirmations').set('Authorization', auth).send({ code })).status).toBe(409);
    const password = await login(ada.username);
    expect(password.status).toBe(202);
    expect(password.body).toEqual({ mfa_required: true, challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), expires_in: 300 });
    expect(password.body.token).toBeUndefined();
    h.state.used.push(password.body.challenge);
  });

  it('login: the challenge with a current code gives a token pair; the challenge works once; a replayed code and a wrong one are refused', async () => {
    const bob = await enrolled();
    const challenge = await challengeOf(bob.username);
    const wrong = await api()
      .post('/v1/login-challenges')
      .send({ challenge, code: await wrongCode(bob.secret) });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual(errorBody('unauthorized', 'invalid or already used code'));
    // the enrolment used the current step: the next one is accepted (one step of tolerance)
    const next = await codeAt(bob.secret, 1);
    h.state.used.push(next);
    const done = await api().post('/v1/login-challenges').send({ challenge, code: next });
    expect(done.status).toBe(200);
    expect(done.headers['cache-control']).toBe('no-store');
    expect(done.body).toEqual({ token: expect.any(String), token_type: 'Bearer', expires_in: expect.any(Number), refresh_token: expect.any(String) });
    expect((await api().get(`/v1/users/${bob.id}`).set('Authorization', bearer(done.body.token))).status).toBe(200);

    const again = await api().post('/v1/login-challenges').send({ challenge, code: next });
    expect(again.status).toBe(401);
    // a new challenge with the code already used (and one of an earlier step): refused
    const second = await challengeOf(bob.username);
    const replayed = await api().post('/v1/login-challenges').send({ challenge: second, code: next });
    expect(replayed.status).toBe(401);
    expect(replayed.body).toEqual(errorBody('unauthorized', 'invalid or already used code'));
    expect(
      (
        await api()
          .post('/v1/login-challenges')
          .send({ challenge: second, code: await codeAt(bob.secret) })
      ).status,
    ).toBe(401);
    // an unknown challenge; neither or both factors
    expect(
      (
        await api()
          .post('/v1/login-challenges')
          .send({ challenge: 'x'.repeat(43), code: next })
      ).status,
    ).toBe(401);
    expect((await api().post('/v1/login-challenges').send({ challenge: second })).status).toBe(422);
    expect((await api().post('/v1/login-challenges').send({ challenge: second, code: next, recovery_code: bob.recoveryCodes[0] })).status).toBe(422);
  });

  it('sessions: the password step sets no cookie; the challenge with a code starts the session (201, Set-Cookie)', async () => {
    const carol = await enrolled();
    const first = await api().post('/v1/sessions').send({ username: carol.username, password: PASSWORD });
    expect(first.status).toBe(202);
    expect(first.headers['set-cookie']).toBeUndefined();
    h.state.used.push(first.body.challenge);
    const code = await codeAt(carol.secret, 1);
    h.state.used.push(code);
    const done = await api().post('/v1/login-challenges').send({ challenge: first.body.challenge, code });
    expect(done.status).toBe(201);
    const cookie = (done.headers['set-cookie'] as unknown as string[]).find((value) => value.startsWith('sid='));
    expect(cookie).toMatch(/HttpOnly/);
    expect(done.body.user.id).toBe(carol.id);
    const current = await api()
      .get('/v1/sessions/current')
      .set('Cookie', (cookie as string).split(';')[0]);
    expect(current.status).toBe(200);
    expect(current.body.user.username).toBe(carol.username);
  });

  it('a recovery code completes a sign-in once, in any case and without its hyphen', async () => {
    const dave = await enrolled();
    const [firstCode, secondCode] = dave.recoveryCodes;
    const used = await api()
      .post('/v1/login-challenges')
      .send({ challenge: await challengeOf(dave.username), recovery_code: firstCode });
    expect(used.status).toBe(200);
    expect(used.body.token).toEqual(expect.any(String));
    const again = await api()
      .post('/v1/login-challenges')
      .send({ challenge: await challengeOf(dave.username), recovery_code: firstCode });
    expect(again.status).toBe(401);
    expect(again.body).toEqual(errorBody('unauthorized', 'invalid or already used recovery code'));
    const loose = await api()
      .post('/v1/login-challenges')
      .send({ challenge: await challengeOf(dave.username), recovery_code: secondCode.replace('-', '').toUpperCase() });
    expect(loose.status).toBe(200);
    const [{ count }] = await h.db().query(`SELECT COUNT(*) AS count FROM totp_recovery_codes WHERE user_id = ${Number(dave.id)}`);
    expect(Number(count)).toBe(8);
  });

  it('30 parallel wrong codes: at most 5 are checked (401), the rest and then the right code are refused with 429', async () => {
    const erin = await enrolled();
    const challenge = await challengeOf(erin.username);
    const wrong = await wrongCode(erin.secret);
    const answers = await Promise.all(Array.from({ length: 30 }, () => api().post('/v1/login-challenges').send({ challenge, code: wrong })));
    const statuses = answers.map((res) => res.status);
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(5);
    expect(statuses.filter((status) => status === 401).length + statuses.filter((status) => status === 429).length).toBe(30);
    const refused = answers.find((res) => res.status === 429);
    expect(refused?.body.code).toBe('rate_limited');
    expect(Number(refused?.headers['retry-after'])).toBeGreaterThan(0);
    const right = await codeAt(erin.secret, 1);
    const after = await api().post('/v1/login-challenges').send({ challenge, code: right });
    expect(after.status).toBe(429);
    // the counter is per account: another account still signs in
    const frank = await enrolled();
    const code = await codeAt(frank.secret, 1);
    expect(
      (
        await api()
          .post('/v1/login-challenges')
          .send({ challenge: await challengeOf(frank.username), code })
      ).status,
    ).toBe(200);
  });

  it('turning it off needs a current code or the password (204); then the password alone signs in', async () => {
    const gina = await enrolled();
    const auth = bearer(gina.token);
    const neither = await api().post('/v1/totp-deactivations').set('Authorization', auth).send({});
    expect(neither.status).toBe(422);
    const wrongPassword = await api().post('/v1/totp-deactivations').set('Authorization', auth).send({ password: 'not the password' });
    expect(wrongPassword.status).toBe(422);
    expect(wrongPassword.body.details).toEqual([{ field: 'password', message: 'password is wrong' }]);
    const code = await codeAt(gina.secret, 1);
    const off = await api().post('/v1/totp-deactivations').set('Authorization', auth).send({ code });
    expect(off.status).toBe(204);
    expect(off.text).toBe('');
    expect((await login(gina.username)).status).toBe(200);
    const [{ count }] = await h.db().query(`SELECT COUNT(*) AS count FROM totp_recovery_codes WHERE user_id = ${Number(gina.id)}`);
    expect(Number(count)).toBe(0);
    expect((await api().post('/v1/totp-deactivations').set('Authorization', auth).send({ code })).status).toBe(409);

    const hank = await enrolled();
    const byPassword = await api().post('/v1/totp-deactivations').set('Authorization', bearer(hank.token)).send({ password: PASSWORD });
    expect(byPassword.status).toBe(204);
    expect((await login(hank.username)).status).toBe(200);
  });

  it('the OAuth sign-in form asks for a code on a second page, which starts the session once the code is right', async () => {
    const ivy = await enrolled();
    const back = '/v1/oauth/authorize?response_type=code&client_id=oc_5bG2f0hQ9yJ3kT8mW1xZ7a';
    const post = (fields: Record<string, string>) =>
      api().post('/v1/oauth/sign-in').set('Content-Type', 'application/x-www-form-urlencoded').send(new URLSearchParams(fields).toString());
    const first = await post({ username: ivy.username, password: PASSWORD, return_to: back });
    expect(first.status).toBe(200);
    expect(first.headers['set-cookie']).toBeUndefined();
    expect(first.text).toContain('name="code"');
    const challenge = /name="challenge" value="([^"]+)"/.exec(first.text)?.[1] as string;
    expect(challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    h.state.used.push(challenge);
    const wrong = await post({ challenge, code: await wrongCode(ivy.secret), return_to: back });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('Invalid or already used code.');
    expect(wrong.headers['set-cookie']).toBeUndefined();
    const code = await codeAt(ivy.secret, 1);
    h.state.used.push(code);
    const done = await post({ challenge, code, return_to: back });
    expect(done.status).toBe(303);
    expect(done.headers.location).toBe(back);
    const cookie = (done.headers['set-cookie'] as unknown as string[]).find((value) => value.startsWith('sid='));
    expect(
      (
        await api()
          .get('/v1/sessions/current')
          .set('Cookie', (cookie as string).split(';')[0])
      ).status,
    ).toBe(200);
    // the challenge is spent: the sign-in form again
    const again = await post({ challenge, code, return_to: back });
    expect(again.status).toBe(401);
    expect(again.text).toContain('sign in again');
  });

  it('no secret, code, recovery code or challenge in the logs', () => {
    expect(h.state.used.length).toBeGreaterThan(20);
    const logs = h.state.capture.lines.join('\n');
    expect(logs).toContain('/v1/login-challenges');
    for (const value of h.state.used) expect(logs).not.toContain(value);
  });
});

describe('REQUIRE_ADMIN_TOTP=true', () => {
  const h = harness({ REQUIRE_ADMIN_TOTP: 'true' });
  const { api, enrol } = h;

  beforeAll(async () => {
    await h.start();
  });
  afterAll(async () => {
    await h.stop();
  });

  it('an admin without two-factor authentication signs in only to enrol; once on, a sign-in with a code has the full rights', async () => {
    const admin = await h.state.fresh.createUser(h.state.app, { role: 'admin' });
    const limited = await api().post('/v1/login').send({ username: admin.user.username, password: 'password-123' });
    expect(limited.status).toBe(200);
    const auth = bearer(limited.body.token);
    const refused = await api().get('/v1/users').set('Authorization', auth);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toContain('POST /v1/totp-enrolments');
    // a refreshed pair stays limited
    const refreshed = await api().post('/v1/refresh').send({ refresh_token: limited.body.refresh_token });
    expect((await api().get('/v1/users').set('Authorization', bearer(refreshed.body.token))).status).toBe(403);
    // a session too
    const session = await api().post('/v1/sessions').send({ username: admin.user.username, password: 'password-123' });
    expect(session.status).toBe(201);
    const cookie = (session.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
    expect((await api().get('/v1/users').set('Cookie', cookie)).status).toBe(403);
    expect((await api().get('/v1/sessions/current').set('Cookie', cookie)).status).toBe(200);

    const { secret } = await enrol(limited.body.token);
    const challenge = await h.challengeOf(admin.user.username, 'password-123');
    const done = await api()
      .post('/v1/login-challenges')
      .send({ challenge, code: await codeAt(secret, 1) });
    expect(done.status).toBe(200);
    expect((await api().get('/v1/users').set('Authorization', bearer(done.body.token))).status).toBe(200);

    // users are not concerned
    const user = await h.state.fresh.createUser(h.state.app);
    expect((await api().get(`/v1/users/${user.user.id}`).set('Authorization', bearer(user.token))).status).toBe(200);
  });
});
