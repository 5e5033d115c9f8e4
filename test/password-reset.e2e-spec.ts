import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { type ParsedMail, simpleParser } from 'mailparser';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import type { CreatedUser } from './factories/user.factory.js';
import { bearer, DEFAULT_PASSWORD } from './factories/user.factory.js';
import { errorBody } from './setup/error-body.js';
import type { FreshApp } from './setup/fresh-app.js';
import { addressesOf, boot, Capture, clearStore, freePort, Mailbox, sleep, waitFor } from './setup/mail.js';

/**
 * Password reset and the mail outbox end to end (docs/authentication.md#password-reset,
 * docs/operations.md#mail), with a real SMTP server on loopback (`smtp-server`) whose every mail is
 * parsed with `mailparser`, as a mailbox would. The retry schedule is `1,1,1,1,1,1` and the poll
 * 100 ms, so an outage of a few seconds is ridden out within the test. Logs are captured at `info`
 * and searched for every token and address the test used. A second application without SMTP_URL
 * writes `.eml` files.
 */

const NEW_PASSWORD = 'a-brand-new-passw0rd';
const LINK = /https:\/\/app\.example\.test\/account\/reset-password#token=([A-Za-z0-9_-]{43})/;

/** The token of the reset link in a mail's text part. */
function tokenOf(mail: ParsedMail): string {
  const match = LINK.exec(mail.text ?? '');
  if (!match) throw new Error('no reset link in the mail');
  return match[1];
}

describe('through SMTP (SMTP_URL on loopback)', () => {
  const capture = new Capture();
  const used: string[] = [];
  let mailbox: Mailbox;
  let fresh: FreshApp & { restoreEnv: () => void };
  let app: NestExpressApplication;
  let dataSource: DataSource;
  let counter = 0;
  const api = () => request(app.getHttpServer());

  /** A user with a fresh address (its token pair from the factory); the address is remembered for the log check. */
  async function userWithEmail(): Promise<CreatedUser & { email: string }> {
    counter += 1;
    const email = `reset.user${counter}@example.test`;
    used.push(email);
    return { ...(await fresh.createUser(app, { email })), email };
  }

  /** Asks for a reset of `email`; expects the 202. Returns the body. */
  async function ask(email: string) {
    const res = await api().post('/v1/password-reset-requests').send({ email });
    expect(res.status).toBe(202);
    expect(res.headers['cache-control']).toBe('no-store');
    return res.body as Record<string, unknown>;
  }

  /** Waits for the one mail to `email` beyond `before` mails to it; returns it. */
  async function mailTo(email: string, before = 0): Promise<ParsedMail> {
    await waitFor(`a mail to ${email}`, () => mailbox.to(email).length > before);
    const mail = mailbox.to(email)[before];
    used.push(tokenOf(mail));
    return mail;
  }

  beforeAll(async () => {
    mailbox = new Mailbox(await freePort());
    await mailbox.start();
    ({ fresh, app } = await boot({ SMTP_URL: `smtp://127.0.0.1:${mailbox.port}`, PASSWORD_RESET_TTL: '600' }, capture));
    dataSource = app.get(fresh.DataSource);
  });

  afterAll(async () => {
    await app?.close();
    fresh?.restoreEnv();
    await mailbox?.stop();
  });

  beforeEach(async () => {
    await clearStore(app);
  });

  it('from the request to a new password: the mail carries the link in its fragment; the reset ends every old password, token and session', async () => {
    const alice = await userWithEmail();
    const signIn = await api().post('/v1/sessions').send({ username: alice.user.username, password: DEFAULT_PASSWORD });
    expect(signIn.status).toBe(201);
    const cookie = String(signIn.headers['set-cookie']).split(';')[0];
    expect((await api().get('/v1/sessions/current').set('Cookie', cookie)).status).toBe(200);

    // the address as typed (any case) finds the account
    const body = await ask(alice.email.toUpperCase());
    expect(body).toEqual({ message: 'If an account has this e-mail address, a link to reset its password is on its way.', expires_in: 600 });
    const mail = await mailTo(alice.email);
    expect(mail.subject).toBe('Reset your password');
    expect(mail.from?.value[0].address).toBe('no-reply@example.test');
    expect(mail.messageId).toMatch(/^<[0-9a-f-]{36}@example\.test>$/);
    const token = tokenOf(mail);
    expect(mail.text).not.toMatch(/reset-password\?/);
    // stored only as its hash
    const stored: Array<{ token_hash: string }> = await dataSource.query('SELECT token_hash FROM password_reset_tokens');
    expect(stored).toHaveLength(1);
    expect(stored[0].token_hash).not.toBe(token);
    expect(stored[0].token_hash).toMatch(/^[0-9a-f]{64}$/);
    // the sent mail's body is not kept
    const rows: Array<{ status: string; text_body: string | null }> = await dataSource.query('SELECT status, text_body FROM mail_outbox');
    expect(rows).toEqual([{ status: 'sent', text_body: null }]);

    // a weak new password: 422 as at registration, and the token still works
    const weak = await api().post('/v1/password-resets').send({ token, password: 'short' });
    expect(weak.status).toBe(422);
    expect(weak.body).toEqual({
      ...errorBody('validation_failed'),
      details: [{ field: 'password', message: expect.stringContaining('password must be longer') }],
    });

    const reset = await api().post('/v1/password-resets').send({ token, password: NEW_PASSWORD });
    expect(reset.status).toBe(204);
    expect(reset.text).toBe('');

    expect((await api().post('/v1/login').send({ username: alice.user.username, password: DEFAULT_PASSWORD })).status).toBe(401);
    const login = await api().post('/v1/login').send({ username: alice.user.username, password: NEW_PASSWORD });
    expect(login.status).toBe(200);
    const old = await api().get(`/v1/users/${alice.user.id}`).set('Authorization', bearer(alice.token));
    expect(old.status).toBe(401);
    expect(old.body).toEqual(errorBody('unauthorized'));
    expect((await api().post('/v1/refresh').send({ refresh_token: alice.refreshToken })).status).toBe(401);
    expect((await api().get('/v1/sessions/current').set('Cookie', cookie)).status).toBe(401);
    expect((await api().get(`/v1/users/${alice.user.id}`).set('Authorization', bearer(login.body.token))).status).toBe(200);

    // the link used twice
    const again = await api().post('/v1/password-resets').send({ token, password: 'yet-another-passw0rd' });
    expect(again.status).toBe(422);
    expect(again.body).toEqual({ ...errorBody('validation_failed'), details: [{ field: 'token', message: 'token is invalid, already used or expired' }] });
    expect((await api().post('/v1/login').send({ username: alice.user.username, password: NEW_PASSWORD })).status).toBe(200);
  });

  it('an unknown address gets the same 202 and body as a known one, and no mail', async () => {
    const bob = await userWithEmail();
    const unknown = 'nobody.here@example.test';
    used.push(unknown);
    const known = await api().post('/v1/password-reset-requests').send({ email: bob.email });
    const other = await api().post('/v1/password-reset-requests').send({ email: unknown });
    expect(other.status).toBe(known.status);
    expect(other.body).toEqual(known.body);
    expect(Object.keys(other.headers).sort()).toEqual(Object.keys(known.headers).sort());
    await mailTo(bob.email);
    await sleep(500);
    expect(mailbox.to(unknown)).toHaveLength(0);
    const tokens: Array<{ n: number | string }> = await dataSource.query(
      `SELECT COUNT(*) AS n FROM password_reset_tokens WHERE user_id = ${Number(bob.user.id)}`,
    );
    expect(Number(tokens[0].n)).toBe(1);
  });

  it('an expired token is refused; so is one whose account changed its password another way', async () => {
    const carol = await userWithEmail();
    await ask(carol.email);
    const first = tokenOf(await mailTo(carol.email));
    await dataSource.query(
      `UPDATE password_reset_tokens SET expires_at = ${dataSource.options.type === 'postgres' ? "now() - interval '1 second'" : "'2000-01-01 00:00:00.000'"}`,
    );
    const expired = await api().post('/v1/password-resets').send({ token: first, password: NEW_PASSWORD });
    expect(expired.status).toBe(422);
    expect(expired.body.details).toEqual([{ field: 'token', message: 'token is invalid, already used or expired' }]);

    await ask(carol.email);
    const second = tokenOf(await mailTo(carol.email, 1));
    const patch = await api().patch(`/v1/users/${carol.user.id}`).set('Authorization', bearer(carol.token)).send({ password: 'changed-by-patch-1' });
    expect(patch.status).toBe(200);
    const dead = await api().post('/v1/password-resets').send({ token: second, password: NEW_PASSWORD });
    expect(dead.status).toBe(422);
    expect((await api().post('/v1/login').send({ username: carol.user.username, password: 'changed-by-patch-1' })).status).toBe(200);
  });

  it('a token that never existed and a malformed body: 422 and 400 with ErrorResp', async () => {
    const unknown = await api()
      .post('/v1/password-resets')
      .send({ token: 'x'.repeat(43), password: NEW_PASSWORD });
    expect(unknown.status).toBe(422);
    expect(unknown.body).toEqual({ ...errorBody('validation_failed'), details: [{ field: 'token', message: 'token is invalid, already used or expired' }] });
    const missing = await api().post('/v1/password-resets').send({ password: NEW_PASSWORD });
    expect(missing.status).toBe(400);
    expect(missing.body.details).toEqual([{ field: 'token', message: 'token is required' }]);
    const badEmail = await api().post('/v1/password-reset-requests').send({ email: 'not-an-address' });
    expect(badEmail.status).toBe(422);
    expect(badEmail.body.details).toEqual([{ field: 'email', message: 'email must be an email' }]);
    const extra = await api().post('/v1/password-reset-requests').send({ email: 'a@example.test', admin: true });
    expect(extra.status).toBe(400);
  });

  it('requests are throttled per address asked for, the same for an unknown address as for a known one (429 with Retry-After)', async () => {
    const dave = await userWithEmail();
    const unknown = 'nobody.else@example.test';
    used.push(unknown);
    for (const email of [dave.email, unknown]) {
      for (let i = 0; i < 5; i += 1) expect((await api().post('/v1/password-reset-requests').send({ email })).status).toBe(202);
      const refused = await api().post('/v1/password-reset-requests').send({ email });
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual(errorBody('rate_limited'));
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    }
    await waitFor('dave’s five mails', () => mailbox.to(dave.email).length === 5);
    for (const mail of mailbox.to(dave.email)) used.push(tokenOf(mail));
  });

  it('failed resets are throttled per client address', async () => {
    for (let i = 0; i < 10; i += 1)
      expect(
        (
          await api()
            .post('/v1/password-resets')
            .send({ token: `guess-${i}`, password: NEW_PASSWORD })
        ).status,
      ).toBe(422);
    const refused = await api().post('/v1/password-resets').send({ token: 'guess-11', password: NEW_PASSWORD });
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
  });

  it('mail survives an SMTP server that is down, then answers 451: each mail is delivered exactly once', async () => {
    const users = [await userWithEmail(), await userWithEmail(), await userWithEmail()];
    await mailbox.stop();
    for (const user of users) await ask(user.email);
    // the worker tries while nothing listens (connection refused) and schedules retries
    await waitFor('a failed attempt', async () => {
      const rows: Array<{ attempts: number | string }> = await dataSource.query("SELECT attempts FROM mail_outbox WHERE status = 'pending'");
      return rows.length === 3 && rows.every((row) => Number(row.attempts) >= 1);
    });
    await sleep(1500);
    mailbox.refuseNext = 2;
    await mailbox.start();
    for (const user of users) await mailTo(user.email);
    expect(mailbox.refused).toBe(2);
    // time for any duplicate to arrive: none does
    await sleep(2500);
    const ids = users.map((user) => mailbox.to(user.email).map((mail) => mail.messageId));
    for (const list of ids) expect(list).toHaveLength(1);
    expect(new Set(ids.flat()).size).toBe(3);
    const rows: Array<{ status: string; attempts: number | string; message_id: string; text_body: string | null }> = await dataSource.query(
      'SELECT status, attempts, message_id, text_body FROM mail_outbox ORDER BY id DESC LIMIT 3',
    );
    for (const row of rows) {
      expect(row.status).toBe('sent');
      expect(Number(row.attempts)).toBeGreaterThanOrEqual(2);
      expect(row.text_body).toBeNull();
    }
    expect(new Set(rows.map((row) => row.message_id))).toEqual(new Set(ids.flat()));
  });

  it('no token, link or e-mail address in any log line; the mail lines name the mail by id', async () => {
    const text = capture.lines.join('\n');
    expect(capture.lines.length).toBeGreaterThan(10);
    expect(text).toContain('"msg":"mail sent"');
    expect(text).toMatch(/mail attempt \d failed: (ECONNECTION|SMTP 451)/);
    expect(used.length).toBeGreaterThan(10);
    for (const secret of used) expect(text).not.toContain(secret);
    expect(text).not.toContain('@example.test');
    expect(text).not.toContain('reset-password');
  });
});

describe('without SMTP_URL outside production: .eml files under data/mail/', () => {
  const capture = new Capture();
  let fresh: FreshApp & { restoreEnv: () => void };
  let app: NestExpressApplication;

  beforeAll(async () => {
    ({ fresh, app } = await boot({ SMTP_URL: undefined }, capture));
  });

  afterAll(async () => {
    await app?.close();
    fresh?.restoreEnv();
  });

  it('writes the mail as one .eml file named by its Message-ID, with the reset link', async () => {
    const email = 'eml.user@example.test';
    await fresh.createUser(app, { email });
    const res = await request(app.getHttpServer()).post('/v1/password-reset-requests').send({ email });
    expect(res.status).toBe(202);
    const dataSource = app.get(fresh.DataSource);
    let row: { message_id: string } | undefined;
    await waitFor('the mail to be sent', async () => {
      [row] = await dataSource.query("SELECT message_id FROM mail_outbox WHERE status = 'sent'");
      return row !== undefined;
    });
    const { fileName, MAIL_DIRECTORY } = await import('../src/mail/mail-transport.js');
    const file = path.join(MAIL_DIRECTORY, `${fileName(row!.message_id)}.eml`);
    try {
      const mail = await simpleParser(await readFile(file));
      expect(mail.messageId).toBe(row!.message_id);
      expect(addressesOf(mail)).toEqual([email]);
      const token = tokenOf(mail);
      const reset = await request(app.getHttpServer()).post('/v1/password-resets').send({ token, password: NEW_PASSWORD });
      expect(reset.status).toBe(204);
      expect(capture.lines.join('\n')).not.toContain(token);
    } finally {
      await rm(file, { force: true });
    }
  });
});
