import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import type { AuthUser } from '../../src/common/caller/auth-user.js';
import { COMMENTS_FIELDS } from '../../src/comments/comments.resource.js';
import { parseListQuery } from '../../src/common/list/list-query.js';
import { TODOS_FIELDS } from '../../src/todos/todos.resource.js';
import { openTestDataSource, truncateDataSource } from '../setup/database.js';
import { rejection } from '../setup/refusal.js';
import { insertCaller, type Services, servicesOn } from './services.js';

/**
 * Service tier (no HTTP): ownership of todos and comments — 404 for what does not exist before 403
 * for what is someone else's — and who may delete a comment (its author, the article's author, an
 * admin), through the services on the real database (docs/authentication.md#roles-and-scopes, the pages under docs/resources/).
 */
describe('ownership through the services on the database (docs/resources/todos.md, docs/resources/comments.md)', () => {
  let dataSource: DataSource;
  let services: Services;
  let alice: AuthUser;
  let bob: AuthUser;
  let carol: AuthUser;
  let admin: AuthUser;

  beforeAll(async () => {
    dataSource = await openTestDataSource();
    services = servicesOn(dataSource);
  });
  afterAll(() => dataSource.destroy());
  beforeEach(async () => {
    await truncateDataSource(dataSource);
    [alice, bob, carol, admin] = [
      await insertCaller(dataSource),
      await insertCaller(dataSource),
      await insertCaller(dataSource),
      await insertCaller(dataSource, 'admin'),
    ];
  });

  describe('todos', () => {
    it("another user's todo is 403 for reads and writes, a missing one 404; admins reach all", async () => {
      const { id } = (await services.todos.create({ title: 'Mine' }, alice)).body;
      const forbidden = { status: 403, code: 'forbidden', message: `todo ${id} belongs to another user` };
      expect(await rejection(services.todos.findOne(id, bob))).toEqual(forbidden);
      expect(await rejection(services.todos.update(id, { title: 'Theirs' }, bob))).toEqual(forbidden);
      expect(await rejection(services.todos.remove(id, bob))).toEqual(forbidden);
      expect(await rejection(services.todos.findOne(id + 1, bob))).toEqual({ status: 404, code: 'not_found', message: `todo ${id + 1} not found` });
      expect((await services.todos.findOne(id, alice)).body.title).toBe('Mine');
      expect((await services.todos.update(id, { status: 'done' }, admin)).body.status).toBe('done');
      await services.todos.remove(id, admin);
      expect(await rejection(services.todos.findOne(id, alice))).toMatchObject({ status: 404 });
    });

    it("lists the caller's own todos, every todo for an admin", async () => {
      const mine = (await services.todos.create({ title: 'a' }, alice)).body.id;
      const theirs = (await services.todos.create({ title: 'b' }, bob)).body.id;
      const list = async (caller: AuthUser) => (await services.todos.list(parseListQuery({}, TODOS_FIELDS), caller)).items.map((todo) => todo.id).sort();
      expect(await list(alice)).toEqual([mine]);
      expect(await list(admin)).toEqual([mine, theirs].sort());
    });
  });

  describe('comments', () => {
    let article: number;
    let comment: number;

    beforeEach(async () => {
      article = (await services.articles.create({ title: 'Alice writes', status: 'published' }, alice)).body.id;
      comment = (await services.comments.create(article, { body: 'Bob comments' }, bob)).body.id;
    });

    it('only its author edits a comment: not the article’s author, not an admin (403)', async () => {
      const refused = { status: 403, code: 'forbidden', message: 'only the comment’s author may edit it' };
      for (const caller of [alice, admin, carol]) expect(await rejection(services.comments.update(article, comment, { body: 'x' }, caller))).toEqual(refused);
      expect((await services.comments.update(article, comment, { body: 'Bob again' }, bob)).body.body).toBe('Bob again');
    });

    it('the article’s author deletes a comment on it; a third user may not (403)', async () => {
      expect(await rejection(services.comments.remove(article, comment, carol))).toEqual({
        status: 403,
        code: 'forbidden',
        message: 'only the comment’s author, the article’s author or an admin may delete it',
      });
      await services.comments.remove(article, comment, alice);
      expect(await rejection(services.comments.findOne(article, comment, bob))).toEqual({
        status: 404,
        code: 'not_found',
        message: `comment ${comment} not found`,
      });
    });

    it('its author and admins delete a comment too', async () => {
      const second = (await services.comments.create(article, { body: 'Carol comments' }, carol)).body.id;
      await services.comments.remove(article, comment, bob);
      await services.comments.remove(article, second, admin);
      expect((await services.comments.list(article, parseListQuery({}, COMMENTS_FIELDS), carol)).total).toBe(0);
    });

    it('a comment under another article is 404 (missing before forbidden), an unreadable article 403 first', async () => {
      const elsewhere = (await services.articles.create({ title: 'Other', status: 'published' }, carol)).body.id;
      expect(await rejection(services.comments.remove(elsewhere, comment, admin))).toEqual({
        status: 404,
        code: 'not_found',
        message: `comment ${comment} not found`,
      });
      expect(await rejection(services.comments.update(elsewhere, comment, { body: 'x' }, carol))).toMatchObject({ status: 404 });
      await services.articles.update(article, { status: 'draft' }, alice);
      expect(await rejection(services.comments.remove(article, comment, bob))).toEqual({
        status: 403,
        code: 'forbidden',
        message: `article ${article} is draft and belongs to another user`,
      });
      expect(await rejection(services.comments.create(article, { body: 'on a draft' }, alice))).toEqual({
        status: 409,
        code: 'conflict',
        message: `article ${article} is draft; only published articles take comments`,
      });
    });
  });
});
