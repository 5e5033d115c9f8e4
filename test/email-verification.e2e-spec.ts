import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { ParsedMail } from 'mailparser';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { bearer } from './factories/user.factory.js';
import { errorBody } from './setup/error-body.js';
import type { FreshApp } from './setup/fresh-app.js';
import { boot, Capture, clearStore, freePort, Mailbox, sleep, waitFor } from './setup/mail.js';

/**
 * E-mail verification end to end (docs/authentication.md#e-mail-verification), with a real SMTP
 * server on loopback whose mails are parsed as a mailbox would: the mail of a registration and of a
 * change of address, the verification (once, until it expires, only for the current address), a
 * new link on request (throttled per account), password reset withheld from a changed address until
 * it is verified, and REQUIRE_VERIFIED_EMAIL on every password sign-in. Logs are captured and
 * searched for every token and address used.
 */

const PASSWORD = 'correct horse battery';
const VERIFY_LINK = /https:\/\/app\.example\.test\/account\/verify-email#token=([A-Za-z0-9_-]{43})/;
const RESET_LINK = /https:\/\/app\.example\.test\/account\/reset-password#token=([A-Za-z0-9_-]{43})/;
const INVALID = {
  ...errorBody('validation_failed', 'token is invalid, already used or expired'),
  details: [{ field: 'token', message: 'token is invalid, already used or expired' }],
};
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The token of the link `pattern` finds in a mail's text part. */
function linkToken(mail: ParsedMail, pattern: RegExp): string {
  const match = pattern.exec(mail.text ?? '');
  if (!match) throw new Error(`no ${pattern.source} in the mail`);
  return match[1];
}

/** What both applications of this file share: the app, its mailbox, and what was used (for the log check). */
function harness() {
  const state = {
    capture: new Capture(),
    used: [] as string[],
    mailbox: undefined as unknown as Mailbox,
    fresh: undefined as unknown as FreshApp & { restoreEnv: () => void },
    app: undefined as unknown as NestExpressApplication,
    counter: 0,
  };
  const api = () => request(state.app.getHttpServer());

  /** Registers a user through the API (with `email` unless null); returns its id, username, address and a fresh token getter. */
  async function register(email: string | null = `verify.user${++state.counter}.${process.pid}@example.test`) {
    const username = `verify_${process.pid}_${++state.counter}`;
    if (email !== null) state.used.push(email);
    const res = await api()
      .post('/v1/users')
      .send({ username, password: PASSWORD, name: 'Verify Me', ...(email !== null && { email }) });
    expect(res.status).toBe(201);
    expect(res.body.email_verified_at).toBeNull();
    return { id: res.body.id as number, username, email: email as string };
  }

  /** Waits for the mail number `index` (from 0) to `email`; remembers its link's token. */
  async function mailTo(email: string, index = 0): Promise<ParsedMail> {
    await waitFor(`mail ${index} to ${email}`, () => state.mailbox.to(email).length > index);
    const mail = state.mailbox.to(email)[index];
    for (const pattern of [VERIFY_LINK, RESET_LINK]) {
      const match = pattern.exec(mail.text ?? '');
      if (match) state.used.push(match[1]);
    }
    return mail;
  }

  /** Logs `username` in; returns the response. */
  const login = (username: string) => api().post('/v1/login').send({ username, password: PASSWORD });

  /** Starts the SMTP server and boots an application with `env` mailing through it. */
  async function start(env: Record<string, string | undefined>): Promise<void> {
    state.mailbox = new Mailbox(await freePort());
    await state.mailbox.start();
    ({ fresh: state.fresh, app: state.app } = await boot({ SMTP_URL: `smtp://127.0.0.1:${state.mailbox.port}`, ...env }, state.capture));
  }

  async function stop(): Promise<void> {
    await state.app?.close();
    state.fresh?.restoreEnv();
    await state.mailbox?.stop();
  }

  return { state, api, register, mailTo, login, start, stop, db: () => state.app.get(state.fresh.DataSource) as DataSource };
}

describe('e-mail verification through SMTP (REQUIRE_VERIFIED_EMAIL off)', () => {
  const h = harness();
  const { api, register, mailTo, login } = h;

  beforeAll(async () => {
    await h.start({ EMAIL_VERIFICATION_TTL: '3600' });
  });
  afterAll(async () => {
    await h.stop();
  });
  beforeEach(async () => {
    await clearStore(h.state.app);
  });

  it('registration mails a link with the token in its fragment; verifying sets email_verified_at in both versions; the link works once', async () => {
    const ada = await register();
    const mail = await mailTo(ada.email);
    expect(mail.subject).toBe('Verify your e-mail address');
    expect(mail.from?.value[0].address).toBe('no-reply@example.test');
    expect(mail.text).toContain('within 1 hour');
    expect(mail.text).not.toMatch(/verify-email\?/);
    const token = linkToken(mail, VERIFY_LINK);
    // stored only as its hash, with the address it verifies
    const stored: Array<{ token_hash: string; email: string }> = await h
      .db()
      .query(`SELECT token_hash, email FROM email_verification_tokens WHERE user_id = ${Number(ada.id)}`);
    expect(stored).toHaveLength(1);
    expect(stored[0].token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored[0].token_hash).not.toBe(token);
    expect(stored[0].email).toBe(ada.email);

    const { body: pair } = await login(ada.username);
    const before = await api().get(`/v1/users/${ada.id}`).set('Authorization', bearer(pair.token));
    expect(before.status).toBe(200);
    expect(before.body.email_verified_at).toBeNull();

    const verified = await api().post('/v1/email-verifications').send({ token });
    expect(verified.status).toBe(204);
    expect(verified.text).toBe('');
    expect(verified.headers['cache-control']).toBe('no-store');

    for (const version of ['v1', 'v2']) {
      const after = await api().get(`/${version}/users/${ada.id}`).set('Authorization', bearer(pair.token));
      expect(after.status).toBe(200);
      expect(after.body.email_verified_at).toMatch(ISO);
      expect(after.body.email).toBe(ada.email);
    }
    // a new representation: a new ETag; the field can be picked with `fields`
    const after = await api().get(`/v1/users/${ada.id}`).set('Authorization', bearer(pair.token));
    expect(after.headers.etag).not.toBe(before.headers.etag);
    const sparse = await api().get(`/v1/users/${ada.id}?fields=email_verified_at`).set('Authorization', bearer(pair.token));
    expect(sparse.status).toBe(200);
    expect(sparse.body).toEqual({ id: ada.id, email_verified_at: after.body.email_verified_at, links: expect.any(Array) });
    // read-only: sent back as read, it is ignored
    const put = await api()
      .put(`/v1/users/${ada.id}`)
      .set('Authorization', bearer(pair.token))
      .send({ name: 'Ada V', email: ada.email, email_verified_at: null });
    expect(put.status).toBe(200);
    expect(put.body.email_verified_at).toBe(after.body.email_verified_at);

    const again = await api().post('/v1/email-verifications').send({ token });
    expect(again.status).toBe(422);
    expect(again.body).toEqual(INVALID);
  });

  it('an expired link, an unknown one and a malformed body are refused as a password reset refuses them', async () => {
    const bob = await register();
    const token = linkToken(await mailTo(bob.email), VERIFY_LINK);
    const past = h.db().options.type === 'postgres' ? "now() - interval '1 second'" : "'2000-01-01 00:00:00.000'";
    await h.db().query(`UPDATE email_verification_tokens SET expires_at = ${past} WHERE user_id = ${Number(bob.id)}`);
    const expired = await api().post('/v1/email-verifications').send({ token });
    expect(expired.status).toBe(422);
    expect(expired.body).toEqual(INVALID);
    const reset = await api()
      .post('/v1/password-resets')
      .send({ token: 'y'.repeat(43), password: 'a-new-passw0rd' });
    expect([reset.status, reset.body.code, reset.body.details]).toEqual([expired.status, expired.body.code, expired.body.details]);

    const unknown = await api()
      .post('/v1/email-verifications')
      .send({ token: 'x'.repeat(43) });
    expect(unknown.status).toBe(422);
    expect(unknown.body).toEqual(INVALID);
    const missing = await api().post('/v1/email-verifications').send({});
    expect(missing.status).toBe(400);
    expect(missing.body.details).toEqual([{ field: 'token', message: 'token is required' }]);
    const extra = await api().post('/v1/email-verifications').send({ token, admin: true });
    expect(extra.status).toBe(400);

    const { body: pair } = await login(bob.username);
    const read = await api().get(`/v1/users/${bob.id}`).set('Authorization', bearer(pair.token));
    expect(read.body.email_verified_at).toBeNull();
  });

  it('a change of address (PATCH, then PUT) mails the new one, resets email_verified_at to null and ends the old links', async () => {
    const carol = await register();
    const first = linkToken(await mailTo(carol.email), VERIFY_LINK);
    const { body: pair } = await login(carol.username);
    const auth = bearer(pair.token);

    const second = `carol.second.${process.pid}@example.test`;
    h.state.used.push(second);
    const patched = await api().patch(`/v1/users/${carol.id}`).set('Authorization', auth).send({ email: second.toUpperCase() });
    expect(patched.status).toBe(200);
    expect(patched.body.email).toBe(second);
    expect(patched.body.email_verified_at).toBeNull();
    const secondToken = linkToken(await mailTo(second), VERIFY_LINK);
    // the link to the old address no longer works
    expect((await api().post('/v1/email-verifications').send({ token: first })).body).toEqual(INVALID);
    expect((await api().post('/v1/email-verifications').send({ token: secondToken })).status).toBe(204);
    const verified = await api().get(`/v1/users/${carol.id}`).set('Authorization', auth);
    expect(verified.body.email_verified_at).toMatch(ISO);

    // the same address again (another case) is no change: still verified, no mail
    const same = await api().patch(`/v1/users/${carol.id}`).set('Authorization', auth).send({ email: second.toUpperCase(), name: 'Carol' });
    expect(same.status).toBe(200);
    expect(same.body.email_verified_at).toBe(verified.body.email_verified_at);

    const third = `carol.third.${process.pid}@example.test`;
    h.state.used.push(third);
    const put = await api().put(`/v1/users/${carol.id}`).set('Authorization', auth).send({ name: 'Carol', email: third });
    expect(put.status).toBe(200);
    expect(put.body.email_verified_at).toBeNull();
    const read = await api().get(`/v2/users/${carol.id}`).set('Authorization', auth);
    expect(read.body.email_verified_at).toBeNull();
    await mailTo(third);
    await sleep(300);
    expect(h.state.mailbox.to(second)).toHaveLength(1);

    // clearing the address: no mail, nothing to verify
    const cleared = await api().patch(`/v1/users/${carol.id}`).set('Authorization', auth).send({ email: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.email_verified_at).toBeNull();
    const tokens: Array<{ n: number | string }> = await h.db().query(`SELECT COUNT(*) AS n FROM email_verification_tokens WHERE user_id = ${Number(carol.id)}`);
    expect(Number(tokens[0].n)).toBe(0);
  });

  it('a signed-in user asks for a new link (202, no body or {}), which ends the earlier one; throttled per account; 409 when verified or without an address', async () => {
    const dave = await register();
    const first = linkToken(await mailTo(dave.email), VERIFY_LINK);
    const { body: pair } = await login(dave.username);
    const auth = bearer(pair.token);

    const anonymous = await api().post('/v1/email-verification-requests').send({});
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual(errorBody('unauthorized'));

    const asked = await api().post('/v1/email-verification-requests').set('Authorization', auth).send({});
    expect(asked.status).toBe(202);
    expect(asked.headers['cache-control']).toBe('no-store');
    expect(asked.body).toEqual({ message: 'A link to verify your e-mail address is on its way.', expires_in: 3600 });
    const second = linkToken(await mailTo(dave.email, 1), VERIFY_LINK);
    expect(second).not.toBe(first);
    expect((await api().post('/v1/email-verifications').send({ token: first })).body).toEqual(INVALID);

    // four more within the hour (no body at all works too), then 429 with Retry-After
    for (let i = 0; i < 4; i += 1) expect((await api().post('/v1/email-verification-requests').set('Authorization', auth)).status).toBe(202);
    const refused = await api().post('/v1/email-verification-requests').set('Authorization', auth).send({});
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual(errorBody('rate_limited'));
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    await waitFor('dave’s six mails', () => h.state.mailbox.to(dave.email).length === 6);
    const last = await mailTo(dave.email, 5);

    expect(
      (
        await api()
          .post('/v1/email-verifications')
          .send({ token: linkToken(last, VERIFY_LINK) })
      ).status,
    ).toBe(204);
    await clearStore(h.state.app);
    const done = await api().post('/v1/email-verification-requests').set('Authorization', auth).send({});
    expect(done.status).toBe(409);
    expect(done.body).toEqual(errorBody('conflict', 'the e-mail address of the account is verified already'));

    const erin = await register(null);
    const { body: erinPair } = await login(erin.username);
    const none = await api().post('/v1/email-verification-requests').set('Authorization', bearer(erinPair.token)).send({});
    expect(none.status).toBe(409);
    expect(none.body.code).toBe('conflict');
  });

  it('password reset: a changed address gets nothing until verified (answered as an unknown one); the change ends the reset links', async () => {
    const fay = await register();
    const registered = fay.email;
    const verifyFirst = await mailTo(registered);
    expect(verifyFirst.subject).toBe('Verify your e-mail address');
    // the address given at registration works before it is verified
    expect((await api().post('/v1/password-reset-requests').send({ email: registered })).status).toBe(202);
    const resetMail = await mailTo(registered, 1);
    expect(resetMail.subject).toBe('Reset your password');
    const resetToken = linkToken(resetMail, RESET_LINK);

    const { body: pair } = await login(fay.username);
    const changed = `fay.changed.${process.pid}@example.test`;
    h.state.used.push(changed);
    expect((await api().patch(`/v1/users/${fay.id}`).set('Authorization', bearer(pair.token)).send({ email: changed })).status).toBe(200);
    const verifyMail = await mailTo(changed);
    // the reset link mailed to the old address died with the change
    const dead = await api().post('/v1/password-resets').send({ token: resetToken, password: 'a-new-passw0rd' });
    expect(dead.status).toBe(422);

    const unknown = `nobody.${process.pid}@example.test`;
    h.state.used.push(unknown);
    const toChanged = await api().post('/v1/password-reset-requests').send({ email: changed });
    const toUnknown = await api().post('/v1/password-reset-requests').send({ email: unknown });
    expect(toChanged.status).toBe(202);
    expect(toChanged.body).toEqual(toUnknown.body);
    expect(Object.keys(toChanged.headers).sort()).toEqual(Object.keys(toUnknown.headers).sort());
    // the old address is no longer the account's
    expect((await api().post('/v1/password-reset-requests').send({ email: registered })).status).toBe(202);
    await sleep(800);
    expect(h.state.mailbox.to(changed).map((mail) => mail.subject)).toEqual(['Verify your e-mail address']);
    expect(h.state.mailbox.to(registered)).toHaveLength(2);
    const resets: Array<{ n: number | string }> = await h.db().query(`SELECT COUNT(*) AS n FROM password_reset_tokens WHERE user_id = ${Number(fay.id)}`);
    expect(Number(resets[0].n)).toBe(0);

    // verified, the new address gets reset mail
    expect(
      (
        await api()
          .post('/v1/email-verifications')
          .send({ token: linkToken(verifyMail, VERIFY_LINK) })
      ).status,
    ).toBe(204);
    expect((await api().post('/v1/password-reset-requests').send({ email: changed })).status).toBe(202);
    expect((await mailTo(changed, 1)).subject).toBe('Reset your password');
  });

  it('no token, link or e-mail address in any log line', async () => {
    const text = h.state.capture.lines.join('\n');
    expect(h.state.capture.lines.length).toBeGreaterThan(10);
    expect(text).toContain('"msg":"mail sent"');
    expect(h.state.used.length).toBeGreaterThan(10);
    for (const secret of h.state.used) expect(text).not.toContain(secret);
    expect(text).not.toContain('@example.test');
    expect(text).not.toContain('verify-email');
  });
});

describe('REQUIRE_VERIFIED_EMAIL=true', () => {
  const h = harness();
  const { api, register, mailTo, login } = h;
  const FORM = 'application/x-www-form-urlencoded';
  const returnTo = '/v1/oauth/authorize?response_type=code&client_id=oc_test';
  const signInForm = (username: string, password = PASSWORD) =>
    api()
      .post('/v1/oauth/sign-in')
      .set('Content-Type', FORM)
      .send(new URLSearchParams({ username, password, return_to: returnTo }).toString());

  beforeAll(async () => {
    await h.start({ REQUIRE_VERIFIED_EMAIL: 'true' });
  });
  afterAll(async () => {
    await h.stop();
  });
  beforeEach(async () => {
    await clearStore(h.state.app);
  });

  it('refuses every password sign-in of an unverified account with 403 (a wrong password stays 401), mails a new link, and signs in once verified', async () => {
    const gus = await register();
    const first = await mailTo(gus.email);

    const refused = await login(gus.username);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual(errorBody('forbidden', 'e-mail address not verified: open the link mailed to the address of the account, then sign in again'));
    const session = await api().post('/v1/sessions').send({ username: gus.username, password: PASSWORD });
    expect(session.status).toBe(403);
    expect(session.body.code).toBe('forbidden');
    expect(session.headers['set-cookie']).toBeUndefined();
    const form = await signInForm(gus.username);
    expect(form.status).toBe(403);
    expect(form.headers['content-type']).toMatch(/^text\/html/);
    expect(form.text).toContain('Verify your e-mail address');
    expect(form.headers['set-cookie']).toBeUndefined();
    const wrong = await api().post('/v1/login').send({ username: gus.username, password: 'not the password' });
    expect(wrong.status).toBe(401);

    // each refused sign-in mailed a new link (three here), which ended the earlier ones
    await waitFor('the links of the refused sign-ins', () => h.state.mailbox.to(gus.email).length === 4);
    const latest = await mailTo(gus.email, 3);
    expect(
      (
        await api()
          .post('/v1/email-verifications')
          .send({ token: linkToken(first, VERIFY_LINK) })
      ).status,
    ).toBe(422);
    expect(
      (
        await api()
          .post('/v1/email-verifications')
          .send({ token: linkToken(latest, VERIFY_LINK) })
      ).status,
    ).toBe(204);

    const allowed = await login(gus.username);
    expect(allowed.status).toBe(200);
    expect(allowed.body.token).toEqual(expect.any(String));
    expect((await api().post('/v1/sessions').send({ username: gus.username, password: PASSWORD })).status).toBe(201);
    const formAllowed = await signInForm(gus.username);
    expect(formAllowed.status).toBe(303);
    expect(formAllowed.headers.location).toBe(returnTo);
  });

  it('refuses an account without an address, and stops mailing links at the account’s limit', async () => {
    const hal = await register(null);
    const none = await login(hal.username);
    expect(none.status).toBe(403);
    expect(none.body).toEqual(errorBody('forbidden', expect.stringContaining('the account has none')));

    const ivy = await register();
    await mailTo(ivy.email);
    for (let i = 0; i < 7; i += 1) expect((await login(ivy.username)).status).toBe(403);
    // the registration's mail, then five links: the account's hourly limit
    await waitFor('ivy’s six mails', () => h.state.mailbox.to(ivy.email).length === 6);
    await sleep(800);
    expect(h.state.mailbox.to(ivy.email)).toHaveLength(6);
    for (let i = 0; i < 6; i += 1) await mailTo(ivy.email, i);
  });

  it('no token or address in any log line', async () => {
    const text = h.state.capture.lines.join('\n');
    for (const secret of h.state.used) expect(text).not.toContain(secret);
    expect(text).not.toContain('@example.test');
  });
});
