import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Article } from '../src/articles/article.entity.js';
import { RefreshToken } from '../src/auth/refresh-token.entity.js';
import { Comment } from '../src/comments/comment.entity.js';
import { EmailVerificationToken } from '../src/auth/email-verification-token.entity.js';
import { EventRecord } from '../src/events/event.entity.js';
import { MailMessage } from '../src/mail/mail-message.entity.js';
import { User } from '../src/users/user.entity.js';
import { USER_LIFECYCLE_EVENTS, UserLifecycle, type UserLifecycleEvent } from '../src/users/user-lifecycle.js';
import { bearer, createUser, DEFAULT_PASSWORD, type CreatedUser } from './factories/user.factory.js';
import { errorBody } from './setup/error-body.js';
import { createTestApp } from './setup/test-app.js';

/**
 * The user lifecycle (docs/extending.md#user-lifecycle-events): who reacts to each event and in
 * which order, and that the reactions run in the user's transaction — a handler that fails rolls
 * back the user's change and every earlier reaction with it, on the real database.
 */
describe('user lifecycle events (docs/extending.md#user-lifecycle-events)', () => {
  let app: NestExpressApplication;
  let admin: CreatedUser;
  /** The event whose last handler (this test's) throws; none by default. */
  let failing: UserLifecycleEvent | undefined;
  const api = () => request(app.getHttpServer());
  const rows = () => app.get(DataSource);

  beforeAll(async () => {
    app = await createTestApp();
    admin = await createUser(app, { role: 'admin', name: 'Admin' });
    // registered after the modules' handlers (they register in onModuleInit): runs last, once they have written
    for (const event of USER_LIFECYCLE_EVENTS) {
      app.get(UserLifecycle).on(event, 'failing (test)', async ({ manager, userId }) => {
        if (failing !== event) return;
        // a database call in the transaction first: the failure comes from inside it, not before it
        await manager.query('SELECT 1');
        throw new Error(`the test's handler fails ${event} of user ${userId}`);
      });
    }
  });
  afterEach(() => {
    failing = undefined;
  });
  afterAll(async () => {
    await app.close();
  });

  it('registers the articles, comments and auth reactions, in the order the users service ran them', () => {
    const lifecycle = app.get(UserLifecycle);
    expect(Object.fromEntries(USER_LIFECYCLE_EVENTS.map((event) => [event, lifecycle.registered(event)]))).toEqual({
      'user.renamed': { fences: [], handlers: ['articles', 'comments', 'failing (test)'] },
      'user.password_changed': { fences: ['access tokens'], handlers: ['refresh tokens', 'logins', 'password-reset tokens', 'failing (test)'] },
      'user.role_changed': { fences: ['access tokens'], handlers: ['failing (test)'] },
      'user.email_changed': { fences: ['verification mail'], handlers: ['password-reset tokens', 'e-mail verification', 'failing (test)'] },
      'user.deleted': { fences: ['access tokens'], handlers: ['failing (test)'] },
    });
  });

  describe('a rename', () => {
    let author: CreatedUser;
    let articleId: number;
    let commentId: number;

    beforeAll(async () => {
      author = await createUser(app, { name: 'Ada Before' });
      const article = await api()
        .post('/v1/articles')
        .set('Authorization', bearer(author.token))
        .send({ title: 'Embedded author', body: 'v2 embeds my name.', status: 'published' });
      expect(article.status).toBe(201);
      articleId = article.body.id;
      const comment = await api().post(`/v1/articles/${articleId}/comments`).set('Authorization', bearer(author.token)).send({ body: 'Mine too.' });
      expect(comment.status).toBe(201);
      commentId = comment.body.id;
    });

    /** The user's, the article's and the comment's rows and v2 representations (author and ETag). */
    const snapshot = async () => {
      const user = await api().get(`/v2/users/${author.user.id}`).set('Authorization', bearer(admin.token));
      const article = await api().get(`/v2/articles/${articleId}`).set('Authorization', bearer(admin.token));
      const comment = await api().get(`/v2/articles/${articleId}/comments/${commentId}`).set('Authorization', bearer(admin.token));
      expect([user.status, article.status, comment.status]).toEqual([200, 200, 200]);
      return {
        user: { name: user.body.name, etag: user.headers.etag },
        article: { author: article.body.author.name, etag: article.headers.etag, updated_at: article.body.updated_at },
        comment: { author: comment.body.author.name, etag: comment.headers.etag, updated_at: comment.body.updated_at },
        rows: {
          user: await rows()
            .getRepository(User)
            .findOneOrFail({ where: { id: author.user.id }, select: { name: true, version: true } }),
          article: await rows()
            .getRepository(Article)
            .findOneOrFail({ where: { id: articleId }, select: { version: true } }),
          comment: await rows()
            .getRepository(Comment)
            .findOneOrFail({ where: { id: commentId }, select: { version: true } }),
        },
      };
    };

    it('whose last handler fails answers 500 and changes nothing: the user, and the articles and comments bumped before the failure', async () => {
      const before = await snapshot();
      expect(before.article.author).toBe('Ada Before');
      failing = 'user.renamed';
      const res = await api().patch(`/v1/users/${author.user.id}`).set('Authorization', bearer(author.token)).send({ name: 'Ada After' });
      expect(res.status).toBe(500);
      expect(res.body).toEqual(errorBody('internal'));
      expect(await snapshot()).toEqual(before);
    });

    it('that succeeds commits the user and the bumped article and comment together', async () => {
      const before = await snapshot();
      const res = await api().patch(`/v1/users/${author.user.id}`).set('Authorization', bearer(author.token)).send({ name: 'Ada After' });
      expect(res.status).toBe(200);
      const after = await snapshot();
      expect(after.rows).toEqual({
        user: { name: 'Ada After', version: before.rows.user.version + 1 },
        article: { version: before.rows.article.version + 1 },
        comment: { version: before.rows.comment.version + 1 },
      });
      expect([after.article.author, after.comment.author]).toEqual(['Ada After', 'Ada After']);
      expect(after.article.etag).not.toBe(before.article.etag);
      expect(after.comment.etag).not.toBe(before.comment.etag);
      // the bump carries the rename's time: the user's new updated_at
      expect(after.article.updated_at).toBe(res.body.updated_at);
      expect(after.comment.updated_at).toBe(res.body.updated_at);
    });
  });

  it('a password change whose handler fails answers 500: the old password still logs in and no refresh token was revoked', async () => {
    const me = await createUser(app);
    failing = 'user.password_changed';
    const res = await api().patch(`/v1/users/${me.user.id}`).set('Authorization', bearer(admin.token)).send({ password: 'a brand new secret' });
    expect(res.status).toBe(500);
    expect(res.body).toEqual(errorBody('internal'));
    const tokens = await rows()
      .getRepository(RefreshToken)
      .find({ where: { user_id: me.user.id } });
    expect(tokens.length).toBeGreaterThan(0);
    expect(tokens.map((token) => token.revoked_at)).toEqual(tokens.map(() => null));
    const refreshed = await api().post('/v1/refresh').send({ refresh_token: me.refreshToken });
    expect(refreshed.status).toBe(200);
    const old = await api().post('/v1/login').send({ username: me.user.username, password: DEFAULT_PASSWORD });
    expect(old.status).toBe(200);
    const changed = await api().post('/v1/login').send({ username: me.user.username, password: 'a brand new secret' });
    expect(changed.status).toBe(401);
    expect(changed.body).toEqual(errorBody('unauthorized'));
  });

  it('a change of address or a registration whose handler fails answers 500: no user change, no verification token, no mail', async () => {
    const me = await createUser(app, { email: `lifecycle.${process.pid}@example.test` });
    const before = { mails: await rows().getRepository(MailMessage).count(), tokens: await rows().getRepository(EmailVerificationToken).count() };
    failing = 'user.email_changed';
    const res = await api()
      .patch(`/v1/users/${me.user.id}`)
      .set('Authorization', bearer(me.token))
      .send({ email: `lifecycle.new.${process.pid}@example.test` });
    expect(res.status).toBe(500);
    expect(res.body).toEqual(errorBody('internal'));
    const registered = await api()
      .post('/v1/users')
      .send({ username: `lifecycle_${process.pid}`, password: DEFAULT_PASSWORD, name: 'Lifecycle', email: `lifecycle.reg.${process.pid}@example.test` });
    expect(registered.status).toBe(500);
    failing = undefined;
    const read = await api().get(`/v1/users/${me.user.id}`).set('Authorization', bearer(me.token));
    expect(read.body.email).toBe(`lifecycle.${process.pid}@example.test`);
    expect(
      await rows()
        .getRepository(User)
        .count({ where: { username: `lifecycle_${process.pid}` } }),
    ).toBe(0);
    expect({ mails: await rows().getRepository(MailMessage).count(), tokens: await rows().getRepository(EmailVerificationToken).count() }).toEqual(before);
  });

  it('a deletion whose handler fails answers 500: the user, its refresh tokens and the event log are as before', async () => {
    const me = await createUser(app);
    const events = () =>
      rows()
        .getRepository(EventRecord)
        .count({ where: { type: 'user.deleted', resource_id: me.user.id } });
    failing = 'user.deleted';
    const res = await api().delete(`/v1/users/${me.user.id}`).set('Authorization', bearer(admin.token));
    expect(res.status).toBe(500);
    expect(res.body).toEqual(errorBody('internal'));
    const read = await api().get(`/v1/users/${me.user.id}`).set('Authorization', bearer(admin.token));
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: me.user.id, username: me.user.username });
    expect(
      await rows()
        .getRepository(RefreshToken)
        .count({ where: { user_id: me.user.id } }),
    ).toBeGreaterThan(0);
    expect(await events()).toBe(0);

    failing = undefined;
    const deleted = await api().delete(`/v1/users/${me.user.id}`).set('Authorization', bearer(admin.token));
    expect(deleted.status).toBe(204);
    expect(await events()).toBe(1);
    expect(
      await rows()
        .getRepository(RefreshToken)
        .count({ where: { user_id: me.user.id } }),
    ).toBe(0);
  });
});
