import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Todo } from '../src/todos/todo.entity.js';
import { createArticle } from './factories/article.factory.js';
import { createComment } from './factories/comment.factory.js';
import { registerClient } from './factories/oauth.factory.js';
import { createTag } from './factories/tag.factory.js';
import { User } from '../src/users/user.entity.js';
import { bearer, type CreatedUser, createUser } from './factories/user.factory.js';
import { createTestApp } from './setup/test-app.js';

/**
 * Lists at scale (docs/lists.md): cursor (keyset) paging, `Prefer: count=…`, range filters and change
 * sync, on the users list (admins; `age` nullable, names with ties) and the todos list
 * (`updated_at` sortable), on whichever database DATABASE_URL names.
 */
describe('lists: cursors, count preferences, range filters (docs/lists.md)', () => {
  let app: NestExpressApplication;
  let admin: CreatedUser;
  let alice: { user: User; token: string };
  const http = () => request(app.getHttpServer());
  const t0 = Date.parse('2026-01-01T00:00:00.000Z');
  let serial = 0;

  /** Inserts a user row with the given age, name and creation offset (ms after t0); returns its id. */
  async function insertUser(age: number | null, name: string, offsetMs: number): Promise<number> {
    serial += 1;
    const at = new Date(t0 + offsetMs);
    const result = await app
      .get(DataSource)
      .getRepository(User)
      .insert({ username: `lists_${serial}`, name, age, email: null, role: 'user', password_hash: 'x', created_at: at, updated_at: at });
    return Number(result.identifiers[0].id);
  }

  const users = (query: Record<string, string | string[]>, prefer?: string) => {
    const req = http().get('/v1/users').query(query).set('Authorization', bearer(admin.token));
    return prefer ? req.set('Prefer', prefer) : req;
  };
  const ids = (body: { data: Array<{ id: number }> }) => body.data.map((item) => item.id);
  const link = (body: { links: Array<{ rel: string; href: string }> }, rel: string) => body.links.find((l) => l.rel === rel)?.href;

  /** Follows `next_cursor` from the first page of `query` (page size `size`); returns the ids in order and the pages read. */
  async function walk(query: Record<string, string>, size: number, between?: (page: number) => Promise<void>): Promise<{ ids: number[]; pages: number }> {
    const seen: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const res = await users(cursor ? { ...query, cursor, size: String(size) } : { ...query, size: String(size) });
      expect(res.status).toBe(200);
      pages += 1;
      seen.push(...ids(res.body));
      const fromCursor = cursor !== undefined;
      cursor = res.body.next_cursor;
      if (!cursor) break;
      // a cursor page's next link carries the cursor; the first (page-style) page links page 2
      expect(link(res.body, 'next')).toContain(fromCursor ? `cursor=${cursor}` : 'page=2');
      if (between) await between(pages);
      if (pages > 200) throw new Error('walk does not end');
    }
    return { ids: seen, pages };
  }

  beforeAll(async () => {
    app = await createTestApp();
    admin = await createUser(app, { role: 'admin' });
    alice = await createUser(app);
    // ties in age, name and created_at, and NULL ages, spread over the id order
    const ages = [30, null, 25, 30, null, 41, 25, 30, null, 19, 41, 30, null, 25, 60, 30, null, 19, 33, 30, null, 25, 41, 30, 27, null, 30, 19, 22, 30];
    for (let i = 0; i < ages.length; i++) await insertUser(ages[i], `name ${i % 4}`, (i % 5) * 1000);
  });
  afterAll(async () => {
    await app.close();
  });

  describe('cursor paging', () => {
    it.each(['id', '-id', 'age', '-age', 'age,-name', '-age,name', 'name,age', '-name,-age', 'created_at', '-created_at,age', 'created_at,-age,id', 'age,-id'])(
      'sort=%s: following next_cursor visits every row exactly once, in the order of a plain sorted read, and prev_cursor walks back',
      async (sort) => {
        const plain = await users({ sort, size: '100' });
        expect(plain.status).toBe(200);
        expect(plain.body.total).toBe(32);
        const expected = ids(plain.body);
        const { ids: walked, pages } = await walk({ sort }, 7);
        expect(walked).toEqual(expected);
        expect(pages).toBe(5);

        // backwards from the last page
        let res = await users({ sort, size: '7' });
        while (res.body.next_cursor) res = await users({ sort, size: '7', cursor: res.body.next_cursor });
        const back: number[][] = [ids(res.body)];
        while (res.body.prev_cursor) {
          res = await users({ sort, size: '7', cursor: res.body.prev_cursor });
          expect(res.status).toBe(200);
          back.unshift(ids(res.body));
        }
        expect(back.flat()).toEqual(expected);
      },
    );

    it('the first page carries next_cursor; a cursor page has no page number, no total (count=none) and cursor links', async () => {
      const first = await users({ sort: 'age', size: '10' });
      expect(first.status).toBe(200);
      expect(first.headers['preference-applied']).toBe('count=exact');
      expect(first.body.next_cursor).toEqual(expect.stringMatching(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/));
      expect(first.body.prev_cursor).toBeUndefined();
      const second = await users({ sort: 'age', size: '10', cursor: first.body.next_cursor });
      expect(second.status).toBe(200);
      expect(second.headers['preference-applied']).toBe('count=none');
      expect(second.headers.vary).toMatch(/Prefer/);
      expect(Object.keys(second.body).sort()).toEqual(['data', 'links', 'next_cursor', 'prev_cursor', 'size']);
      expect(second.body.links.map((l: { rel: string }) => l.rel)).toEqual(['self', 'first', 'prev', 'next']);
      expect(link(second.body, 'first')).toBe('/v1/users?sort=age&size=10');
      expect(link(second.body, 'self')).toBe(`/v1/users?sort=age&cursor=${first.body.next_cursor}&size=10`);
      // following the next link itself gives the third page
      const third = await http().get(link(second.body, 'next')!).set('Authorization', bearer(admin.token));
      expect(third.status).toBe(200);
      const all = ids((await users({ sort: 'age', size: '100' })).body);
      expect(ids(third.body)).toEqual(all.slice(20, 30));
      // limit works as the page size too, and the links repeat it
      const byLimit = await users({ sort: 'age', limit: '3', cursor: first.body.next_cursor });
      expect(byLimit.status).toBe(200);
      expect(ids(byLimit.body)).toEqual(all.slice(10, 13));
      expect(link(byLimit.body, 'next')).toMatch(/&limit=3$/);
    });

    it('a walk sees no row twice while rows are inserted and deleted; rows inserted before the position are not seen, after it are', async () => {
      const before = ids((await users({ sort: 'age', size: '100' })).body);
      const inserted: { early?: number; late?: number } = {};
      let deletedAhead: number | undefined;
      let deletedBehind: number | undefined;
      const { ids: walked } = await walk({ sort: 'age' }, 5, async (page) => {
        if (page !== 2) return;
        // position: 10 rows read (ages 19…25 region); an age of 1 sorts before it, 99 after it
        inserted.early = await insertUser(1, 'early', 0);
        inserted.late = await insertUser(99, 'late', 0);
        deletedAhead = before[20];
        deletedBehind = before[3];
        await app.get(DataSource).getRepository(User).delete([deletedAhead, deletedBehind]);
      });
      expect(new Set(walked).size).toBe(walked.length);
      expect(walked).not.toContain(inserted.early);
      expect(walked).not.toContain(deletedAhead);
      expect(walked).toContain(inserted.late);
      expect(walked).toContain(deletedBehind); // read before it was deleted
      const untouched = before.filter((id) => id !== deletedAhead);
      expect(walked.filter((id) => id !== inserted.late)).toEqual(untouched);
      // back to 32 rows for the tests below
      await app.get(DataSource).getRepository(User).delete([inserted.early!, inserted.late!]);
      await insertUser(50, 'name 0', 0);
      await insertUser(51, 'name 1', 0);
      const restored = await users({ size: '1' });
      expect(restored.body.total).toBe(32);
    });

    it('refuses a modified cursor, one for other sort or filters, and cursor with page or offset: 400 naming cursor', async () => {
      const first = await users({ sort: 'age', role: 'user', size: '5' });
      const cursor: string = first.body.next_cursor;
      const flipped = cursor.slice(0, 3) + (cursor[3] === 'A' ? 'B' : 'A') + cursor.slice(4);
      const payloadChanged = (() => {
        const [payload, mac] = cursor.split('.');
        const json = JSON.parse(Buffer.from(payload, 'base64url').toString());
        json.v[0] = 1000;
        return `${Buffer.from(JSON.stringify(json)).toString('base64url')}.${mac}`;
      })();
      const cases: Array<[Record<string, string>, string]> = [
        [{ sort: 'age', role: 'user', cursor: flipped }, 'cursor is not valid'],
        [{ sort: 'age', role: 'user', cursor: payloadChanged }, 'cursor is not valid'],
        [{ sort: 'age', role: 'user', cursor: 'garbage' }, 'cursor is not valid'],
        [{ sort: 'age', role: 'user', cursor: cursor.slice(0, -1) }, 'cursor is not valid'],
        [{ sort: '-age', role: 'user', cursor }, 'other sort or filter'],
        [{ sort: 'age', cursor }, 'other sort or filter'],
        [{ sort: 'age', role: 'admin', cursor }, 'other sort or filter'],
        [{ sort: 'age', role: 'user', 'age[gte]': '20', cursor }, 'other sort or filter'],
        [{ sort: 'age', role: 'user', cursor, page: '2' }, 'cannot be combined'],
        [{ sort: 'age', role: 'user', cursor, offset: '5' }, 'cannot be combined'],
      ];
      for (const [query, message] of cases) {
        const res = await users(query);
        expect(res.status).toBe(400);
        expect(res.body.code).toBe('bad_request');
        expect(res.body.details).toEqual([{ field: 'cursor', message: expect.stringContaining(message) }]);
      }
      // a cursor of another collection is refused too
      const todos = await http().get('/v1/todos').query({ cursor }).set('Authorization', bearer(alice.token));
      expect(todos.status).toBe(400);
      expect(todos.body.details).toEqual([{ field: 'cursor', message: expect.stringContaining('other sort or filter') }]);
      // the same parameters in another order are the same query
      const same = await users({ role: 'user', cursor, sort: 'age', size: '3' });
      expect(same.status).toBe(200);
    });
  });

  describe('Prefer: count', () => {
    it.each([
      ['count=exact', {}, 'count=exact', true],
      ['count=none', {}, 'count=none', false],
      ['count=estimated', {}, 'count=exact', true], // 32 rows: below the threshold (and exact on SQLite)
      ['respond-async, count=none', {}, 'count=none', false],
      ['count=bogus', {}, 'count=exact', true], // an unknown value is ignored (RFC 7240 §2)
      [undefined, {}, 'count=exact', true],
    ] as Array<[string | undefined, Record<string, string>, string, boolean]>)(
      'Prefer %s on a page → Preference-Applied %s',
      async (prefer, query, applied, hasTotal) => {
        const res = await users({ ...query, size: '10', page: '2' }, prefer);
        expect(res.status).toBe(200);
        expect(res.headers['preference-applied']).toBe(applied);
        expect(res.headers.vary).toMatch(/Prefer/);
        if (hasTotal) {
          expect(res.body.total).toBe(32);
          expect(link(res.body, 'last')).toBe('/v1/users?page=4&size=10');
        } else {
          expect(res.body).not.toHaveProperty('total');
          expect(link(res.body, 'last')).toBeUndefined();
          expect(link(res.body, 'next')).toBe('/v1/users?page=3&size=10');
          expect(link(res.body, 'prev')).toBe('/v1/users?page=1&size=10');
        }
        expect(ids(res.body)).toHaveLength(10);
      },
    );

    it('count=none on the last page has no next link; with a cursor count=exact and count=estimated give the total', async () => {
      const last = await users({ size: '10', page: '4' }, 'count=none');
      expect(ids(last.body)).toHaveLength(2);
      expect(link(last.body, 'next')).toBeUndefined();
      expect(last.body.next_cursor).toBeUndefined();
      const first = await users({ size: '10' });
      for (const prefer of ['count=exact', 'count=estimated']) {
        const res = await users({ size: '10', cursor: first.body.next_cursor }, prefer);
        expect(res.status).toBe(200);
        expect(res.headers['preference-applied']).toBe('count=exact');
        expect(res.body.total).toBe(32);
      }
    });
  });

  describe('range filters', () => {
    let all: Array<{ id: number; age: number | null; created_at: string; role: string }>;
    beforeAll(async () => {
      all = (await users({ size: '100' })).body.data;
    });

    it.each([
      ['age[gte]', '30', (a: number) => a >= 30],
      ['age[gt]', '30', (a: number) => a > 30],
      ['age[lte]', '25', (a: number) => a <= 25],
      ['age[lt]', '25', (a: number) => a < 25],
    ])('%s=%s keeps the rows whose age compares so (NULL ages never match)', async (param, value, keep) => {
      const res = await users({ [param]: value, size: '100' });
      expect(res.status).toBe(200);
      const expected = all.filter((u) => u.age !== null && keep(u.age)).map((u) => u.id);
      expect(expected.length).toBeGreaterThan(0);
      expect(ids(res.body)).toEqual(expected);
      expect(res.body.total).toBe(expected.length);
      expect(link(res.body, 'self')).toContain(`${param}=${value}`);
    });

    it('combines range operators with each other and with equality filters, in page and cursor paging', async () => {
      const res = await users({ 'age[gt]': '19', 'age[lte]': '41', role: 'user', sort: '-age', size: '4' });
      expect(res.status).toBe(200);
      const expected = all
        .filter((u) => u.age !== null && u.age > 19 && u.age <= 41 && u.role === 'user')
        .sort((a, b) => b.age! - a.age! || b.id - a.id)
        .map((u) => u.id);
      expect(res.body.total).toBe(expected.length);
      const { ids: walked } = await walk({ 'age[gt]': '19', 'age[lte]': '41', role: 'user', sort: '-age' }, 4);
      expect(walked).toEqual(expected);
    });

    it.each([
      ['created_at[gte]', '2026-01-01T00:00:02Z', (t: number) => t >= t0 + 2000],
      ['created_at[gt]', '2026-01-01T00:00:02.000Z', (t: number) => t > t0 + 2000],
      ['created_at[lte]', '2026-01-01T01:00:01+01:00', (t: number) => t <= t0 + 1000],
      ['created_at[lt]', '2026-01-01T00:00:01Z', (t: number) => t < t0 + 1000],
    ])('%s=%s compares timestamps (any zone)', async (param, value, keep) => {
      const res = await users({ [param]: value, size: '100' });
      expect(res.status).toBe(200);
      const expected = all.filter((u) => keep(Date.parse(u.created_at))).map((u) => u.id);
      expect(expected.length).toBeGreaterThan(0);
      expect(ids(res.body)).toEqual(expected);
    });

    it.each([
      ['age[gte]', 'abc', 'age[gte]'],
      ['age[gt]', '1.5', 'age[gt]'],
      ['age[lt]', '99999999999', 'age[lt]'],
      ['age[between]', '3', 'age[between]'],
      ['name[gt]', 'a', 'name[gt]'],
      ['role[gte]', 'user', 'role[gte]'],
      ['created_at[gt]', '2026-01-01', 'created_at[gt]'],
      ['created_at[lt]', 'yesterday', 'created_at[lt]'],
      ['colour[gt]', '1', 'colour[gt]'],
    ])('%s=%s → 400 naming %s', async (param, value, field) => {
      const res = await users({ [param]: value });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('bad_request');
      expect(res.body.details).toEqual([{ field, message: expect.any(String) }]);
    });

    it('a range parameter given twice → 400', async () => {
      const res = await http().get('/v1/users?age[gte]=1&age[gte]=2').set('Authorization', bearer(admin.token));
      expect(res.status).toBe(400);
      expect(res.body.details).toEqual([{ field: 'age[gte]', message: 'age[gte] must be given once' }]);
    });
  });

  describe('change sync: updated_at[gt]=T&sort=updated_at with cursor paging', () => {
    it('returns every todo changed after T exactly once, also one changed during the walk', async () => {
      const repo = app.get(DataSource).getRepository(Todo);
      const made: number[] = [];
      for (let i = 0; i < 23; i++) {
        const at = new Date(t0 + Math.floor(i / 3) * 1000); // ties of three
        made.push(
          Number(
            (await repo.insert({ title: `t${i}`, content: null, status: 'pending', owner_id: alice.user.id, created_at: at, updated_at: at })).identifiers[0]
              .id,
          ),
        );
      }
      const since = new Date(t0 + 2000).toISOString();
      const expected = made.filter((_, i) => Math.floor(i / 3) * 1000 > 2000);
      const seen: number[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const res = await http()
          .get('/v1/todos')
          .query({ 'updated_at[gt]': since, sort: 'updated_at', size: '4', ...(cursor ? { cursor } : {}) })
          .set('Authorization', bearer(alice.token));
        expect(res.status).toBe(200);
        seen.push(...ids(res.body));
        cursor = res.body.next_cursor;
        pages += 1;
        if (pages === 2) {
          // a row already read changes again: it moves past the position and is read once more, as a new change
          await repo.update(seen[0], { updated_at: new Date(t0 + 60_000) });
        }
      } while (cursor);
      expect(seen.slice(0, -1)).toEqual(expected);
      expect(seen[seen.length - 1]).toBe(expected[0]);
      expect(new Set(seen.slice(0, -1)).size).toBe(expected.length);
    });
  });
  describe('change sync on every list with updated_at: writes through the API, walked with updated_at[gt]=T&sort=updated_at', () => {
    const pause = () => new Promise((resolve) => setTimeout(resolve, 5));

    /**
     * Walks `path` from `since` (exclusive) in pages of 2 with cursors, as `token`; `between` runs
     * after the first page. Returns the ids in the order received; every page is 200.
     */
    async function sync(path: string, token: string, since: string, between?: () => Promise<void>): Promise<number[]> {
      const seen: number[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const res = await http()
          .get(path)
          .query({ 'updated_at[gt]': since, sort: 'updated_at', size: '2', ...(cursor ? { cursor } : {}) })
          .set('Authorization', bearer(token));
        expect(res.status).toBe(200);
        seen.push(...ids(res.body));
        for (const item of res.body.data) expect(Date.parse(item.updated_at)).toBeGreaterThan(Date.parse(since));
        cursor = res.body.next_cursor;
        pages += 1;
        if (pages === 1 && between) await between();
        if (pages > 50) throw new Error('sync does not end');
      } while (cursor);
      return seen;
    }

    /** T: just after everything written so far (the newest updated_at of `items`), then a pause so later writes are after it. */
    async function mark(items: Array<{ updated_at: string }>): Promise<string> {
      const since = new Date(Math.max(...items.map((item) => Date.parse(item.updated_at)))).toISOString();
      await pause();
      return since;
    }

    /**
     * The common case on one list: `made` exist before T; `change(id)` writes one through the API
     * (and returns its new representation). Changing three of them after T, the walk returns exactly
     * those three in the order written; one changed again during the walk comes once more at the end.
     */
    async function expectSync(
      path: string,
      token: string,
      made: Array<{ id: number; updated_at: string }>,
      change: (id: number) => Promise<{ id: number; updated_at: string }>,
    ) {
      const since = await mark(made);
      const changed: number[] = [];
      for (const item of [made[3], made[0], made[5]]) {
        const after = await change(item.id);
        expect(Date.parse(after.updated_at)).toBeGreaterThan(Date.parse(since));
        changed.push(after.id);
        await pause();
      }
      let last = since;
      const seen = await sync(path, token, since, async () => {
        last = (await change(changed[0])).updated_at; // already read: it moves past the position, a new change
      });
      expect(seen).toEqual([...changed, changed[0]]);
      // a client re-syncing from the newest updated_at it received gets nothing new
      expect(await sync(path, token, last)).toEqual([]);
    }

    it('users (admins): PATCH moves updated_at; sync returns the changed users once each', async () => {
      const made = [];
      for (let i = 0; i < 6; i++) made.push((await createUser(app)).user);
      const rows = (await users({ sort: '-updated_at', size: '6' })).body.data;
      await expectSync('/v1/users', admin.token, rows, async (id) => {
        const res = await http()
          .patch(`/v1/users/${id}`)
          .set('Authorization', bearer(admin.token))
          .send({ name: `renamed ${Math.random()}` });
        expect(res.status).toBe(200);
        return res.body;
      });
      expect(made).toHaveLength(6);
    });

    it('tags (everyone reads, admins write): PATCH moves updated_at; sync returns the renamed tags once each', async () => {
      const made = [];
      for (let i = 0; i < 6; i++) made.push(await createTag(app, { name: `sync-tag-${i}` }));
      const rows = made.map((tag) => ({ id: tag.id, updated_at: tag.updated_at.toISOString() }));
      await expectSync('/v1/tags', alice.token, rows, async (id) => {
        const res = await http()
          .patch(`/v1/tags/${id}`)
          .set('Authorization', bearer(admin.token))
          .send({ name: `sync-renamed-${id}-${Date.now()}` });
        expect(res.status).toBe(200);
        return res.body;
      });
    });

    it("an article's comments: PATCH moves updated_at; sync returns the edited comments once each", async () => {
      const article = await createArticle(app, alice.user, { status: 'published' });
      const made = [];
      for (let i = 0; i < 6; i++) made.push(await createComment(app, article, alice.user));
      const rows = made.map((comment) => ({ id: comment.id, updated_at: comment.updated_at.toISOString() }));
      const path = `/v1/articles/${article.id}/comments`;
      await expectSync(path, alice.token, rows, async (id) => {
        const res = await http()
          .patch(`${path}/${id}`)
          .set('Authorization', bearer(alice.token))
          .send({ body: `edited ${Date.now()}` });
        expect(res.status).toBe(200);
        return res.body;
      });
    });

    it('orders (the own ones): PATCH and status changes move updated_at; sync returns the changed orders once each', async () => {
      const made = [];
      for (let i = 0; i < 6; i++) {
        const res = await http()
          .post('/v1/orders')
          .set('Authorization', bearer(alice.token))
          .send({ items: [{ sku: `S-${i}`, quantity: 1, unit_price_cents: 100 }], currency: 'EUR' });
        expect(res.status).toBe(201);
        made.push(res.body);
      }
      let flip = 0;
      await expectSync('/v1/orders', alice.token, made, async (id) => {
        flip += 1;
        const res = await http()
          .patch(`/v1/orders/${id}`)
          .set('Authorization', bearer(alice.token))
          .send({ items: [{ sku: `CHANGED-${flip}`, quantity: flip, unit_price_cents: 100 }] });
        expect(res.status).toBe(200);
        return res.body;
      });
    });

    it('OAuth clients (admins): clients registered after T are returned once each', async () => {
      const before = await registerClient(app, admin);
      const since = await mark([before as unknown as { updated_at: string }]);
      const later = [];
      for (let i = 0; i < 3; i++) {
        later.push((await registerClient(app, admin, { name: `Sync client ${i}` })).id);
        await pause();
      }
      expect(await sync('/v1/oauth-clients', admin.token, since)).toEqual(later);
    });

    it('cascading changes count as changes: renaming a tag moves the articles carrying it, renaming a user moves their articles and comments', async () => {
      const author = await createUser(app);
      const tag = await createTag(app, { name: 'sync-cascade' });
      const tagged = await createArticle(app, author.user, { status: 'published' }, [tag]);
      const plain = await createArticle(app, author.user, { status: 'published' });
      const other = await createArticle(app, alice.user, { status: 'published' });
      const comment = await createComment(app, other, author.user);
      const since = await mark([tagged, plain, other, comment].map((row) => ({ updated_at: row.updated_at.toISOString() })));
      expect((await http().patch(`/v1/tags/${tag.id}`).set('Authorization', bearer(admin.token)).send({ name: 'sync-cascade-renamed' })).status).toBe(200);
      expect(await sync('/v1/articles', alice.token, since)).toEqual([tagged.id]);
      const since2 = await mark([{ updated_at: new Date().toISOString() }]);
      expect((await http().patch(`/v1/users/${author.user.id}`).set('Authorization', bearer(admin.token)).send({ name: 'Renamed Author' })).status).toBe(200);
      expect(await sync('/v1/articles', alice.token, since2)).toEqual([tagged.id, plain.id].sort((a, b) => a - b));
      expect(await sync(`/v1/articles/${other.id}/comments`, alice.token, since2)).toEqual([comment.id]);
    });
  });
});
