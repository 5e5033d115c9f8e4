import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import type { ArticleStatus } from '../../src/articles/article.entity.js';
import { ARTICLES_FIELDS } from '../../src/articles/articles.resource.js';
import type { AuthUser } from '../../src/common/caller/auth-user.js';
import { parseListQuery } from '../../src/common/list/list-query.js';
import { openTestDataSource, truncateDataSource } from '../setup/database.js';
import { rejection } from '../setup/refusal.js';
import { insertCaller, type Services, servicesOn } from './services.js';

/**
 * Service tier (no HTTP): article visibility (published / draft / archived × author / admin /
 * other, in reads and lists), who may change an article, and its status transitions, through
 * ArticlesService on the real database (docs/resources/articles.md).
 */
describe('ArticlesService on the database (docs/resources/articles.md)', () => {
  let dataSource: DataSource;
  let articles: Services['articles'];
  let author: AuthUser;
  let other: AuthUser;
  let admin: AuthUser;
  const ids: Record<ArticleStatus, number> = { draft: 0, published: 0, archived: 0 };

  beforeAll(async () => {
    dataSource = await openTestDataSource();
    articles = servicesOn(dataSource).articles;
  });
  afterAll(() => dataSource.destroy());
  beforeEach(async () => {
    await truncateDataSource(dataSource);
    [author, other, admin] = [await insertCaller(dataSource), await insertCaller(dataSource), await insertCaller(dataSource, 'admin')];
    ids.draft = (await articles.create({ title: 'A draft' }, author)).body.id;
    ids.published = (await articles.create({ title: 'Published', status: 'published' }, author)).body.id;
    ids.archived = (await articles.create({ title: 'Archived', status: 'published' }, author)).body.id;
    await articles.update(ids.archived, { status: 'archived' }, author);
  });

  it.each(['draft', 'archived'] as const)('a %s article: its author and admins read it, anyone else 403 naming the status', async (status) => {
    for (const caller of [author, admin]) expect((await articles.findOne(ids[status], caller)).body.status).toBe(status);
    expect(await rejection(articles.findOne(ids[status], other))).toEqual({
      status: 403,
      code: 'forbidden',
      message: `article ${ids[status]} is ${status} and belongs to another user`,
    });
    expect(await rejection(articles.requireReadable(ids[status], other))).toMatchObject({ status: 403 });
  });

  it('a published article is readable by everyone; a missing one is 404 for everyone', async () => {
    for (const caller of [author, other, admin]) expect((await articles.findOne(ids.published, caller)).body.title).toBe('Published');
    expect(await rejection(articles.findOne(999_999, admin))).toEqual({ status: 404, code: 'not_found', message: 'article 999999 not found' });
  });

  it('lists the published and own articles for a user, all for an admin; a filter never widens that', async () => {
    const list = async (caller: AuthUser, raw: Record<string, string> = {}) =>
      (await articles.list(parseListQuery(raw, ARTICLES_FIELDS), caller)).items.map((a) => a.id).sort();
    expect(await list(other)).toEqual([ids.published]);
    expect(await list(other, { status: 'draft' })).toEqual([]);
    expect(await list(author)).toEqual(Object.values(ids).sort());
    expect(await list(admin)).toEqual(Object.values(ids).sort());
    const own = (await articles.create({ title: 'Own draft' }, other)).body.id;
    expect(await list(other)).toEqual([ids.published, own].sort());
  });

  it('only the author or an admin changes or deletes an article (403, unchanged)', async () => {
    const refused = { status: 403, code: 'forbidden', message: 'only the article’s author or an admin may change it' };
    expect(await rejection(articles.update(ids.published, { title: 'Hijacked' }, other))).toEqual(refused);
    expect(await rejection(articles.remove(ids.published, other))).toEqual(refused);
    expect((await articles.findOne(ids.published, other)).body.title).toBe('Published');
    expect((await articles.update(ids.published, { title: 'Edited by an admin' }, admin)).body.title).toBe('Edited by an admin');
    await articles.remove(ids.published, author);
    expect(await rejection(articles.findOne(ids.published, author))).toMatchObject({ status: 404 });
  });

  it('status: archived is final (409), draft ⇄ published, publishing sets published_at once', async () => {
    expect(await rejection(articles.update(ids.archived, { status: 'draft' }, admin))).toEqual({
      status: 409,
      code: 'conflict',
      message: 'cannot change status from archived to draft',
    });
    // PUT without status means draft: refused for an archived article too
    expect(await rejection(articles.replace(ids.archived, { title: 'Again' }, author))).toEqual({
      status: 409,
      code: 'conflict',
      message: 'cannot change status from archived to draft',
    });
    const published = (await articles.update(ids.draft, { status: 'published' }, author)).body;
    expect(published.published_at).not.toBeNull();
    const back = (await articles.update(ids.draft, { status: 'draft' }, author)).body;
    const again = (await articles.update(ids.draft, { status: 'published' }, author)).body;
    expect([back.published_at, again.published_at]).toEqual([published.published_at, published.published_at]);
    expect((await articles.update(ids.draft, { status: 'published' }, author)).body.status).toBe('published'); // staying is no change
  });
});
