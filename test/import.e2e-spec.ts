import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { runImport } from '../src/cli/import.js';
import { bearer } from './factories/user.factory.js';
import { createTestApp, truncateAll } from './setup/test-app.js';

const FILE = path.resolve(process.cwd(), 'samples/jsonplaceholder.json');
const PASSWORD = 'imported-pass-1';

interface FileData {
  users: Array<{ id: number; username: string; name: string; email: string }>;
  todos: Array<{ id: number; userId: number; title: string; completed: boolean }>;
  posts: Array<{ id: number; userId: number; title: string; body: string }>;
  comments: Array<{ id: number; postId: number; email: string; body: string }>;
}

async function importFile(args: string[]): Promise<{ status: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const status = await runImport(args, { ...process.env, INIT_CWD: process.cwd() }, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { status, out, err };
}

describe('npm run import (JSONPlaceholder)', () => {
  let app: NestExpressApplication;
  const file = JSON.parse(readFileSync(FILE, 'utf8')) as FileData;

  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  it('loads every user and todo of the file and reports it', async () => {
    const result = await importFile([FILE, '--password', PASSWORD]);
    expect(result.err).toEqual([]);
    expect(result.status).toBe(0);
    expect(result.out).toContain(`users: ${file.users.length} imported, 0 already present`);
    expect(result.out).toContain(`todos: ${file.todos.length} imported, 0 already present`);
    expect(result.out).toContain(`articles: ${file.posts.length} imported, 0 already present`);
    expect(result.out).toContain(`comments: ${file.comments.length} imported, 0 already present`);
  });

  it('serves every post as a published article of its author, listed by author sorted by -id', async () => {
    const login = await request(app.getHttpServer()).post('/v1/login').send({ username: 'bret', password: PASSWORD });
    expect(login.status).toBe(200);
    const token = login.body.token as string;
    const all = await request(app.getHttpServer()).get('/v1/articles?size=1&fields=title').set('Authorization', bearer(token));
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(file.posts.length);

    for (const author of [3, 7]) {
      const expected = file.posts.filter((p) => p.userId === author).sort((a, b) => b.id - a.id);
      const res = await request(app.getHttpServer()).get(`/v1/articles?author=${author}&sort=-id&size=100`).set('Authorization', bearer(token));
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(expected.length);
      expect(
        res.body.data.map((a: { id: number; title: string; body: string; status: string; author: number }) => [a.id, a.title, a.body, a.status, a.author]),
      ).toEqual(expected.map((p) => [p.id, p.title, p.body, 'published', author]));
      expect(res.body.data.every((a: { published_at: string | null; tags: string[] }) => a.published_at !== null && a.tags.length === 0)).toBe(true);
    }
  });

  it("serves the file's comments under their articles, authored by the e-mail's user or else the article's author", async () => {
    const login = await request(app.getHttpServer()).post('/v1/login').send({ username: 'bret', password: PASSWORD });
    const token = login.body.token as string;
    const emails = new Map(file.users.map((u) => [u.email.toLowerCase(), u.id]));
    for (const post of [file.posts[0], file.posts[41], file.posts[99]]) {
      const expected = file.comments.filter((c) => c.postId === post.id).sort((a, b) => a.id - b.id);
      const res = await request(app.getHttpServer()).get(`/v1/articles/${post.id}/comments?size=100`).set('Authorization', bearer(token));
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(expected.length);
      expect(res.body.data.map((c: { id: number; body: string; article: number; author: number }) => [c.id, c.body, c.article, c.author])).toEqual(
        expected.map((c) => [c.id, c.body, post.id, emails.get(c.email.toLowerCase()) ?? post.userId]),
      );
    }
    const newest = await request(app.getHttpServer())
      .get(`/v1/articles/${file.posts[0].id}/comments?sort=-id&size=2&fields=body`)
      .set('Authorization', bearer(token));
    const expectedIds = file.comments
      .filter((c) => c.postId === file.posts[0].id)
      .map((c) => c.id)
      .sort((a, b) => b - a)
      .slice(0, 2);
    expect(newest.body.data.map((c: { id: number }) => c.id)).toEqual(expectedIds);
  });

  it('lets an imported user log in with the normalised username and see exactly their todos', async () => {
    const source = file.users.find((u) => u.username === 'Elwyn.Skiles')!;
    const login = await request(app.getHttpServer()).post('/v1/login').send({ username: 'elwyn_skiles', password: PASSWORD });
    expect(login.status).toBe(200);
    const token = login.body.token as string;

    const me = await request(app.getHttpServer()).get(`/v1/users/${source.id}`).set('Authorization', bearer(token));
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: source.id, username: 'elwyn_skiles', name: source.name, email: source.email.toLowerCase(), role: 'user' });

    const done = file.todos.filter((t) => t.userId === source.id && t.completed);
    const res = await request(app.getHttpServer()).get('/v1/todos?status=done&size=100').set('Authorization', bearer(token));
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(done.length);
    expect(res.body.data.map((t: { id: number }) => t.id)).toEqual(done.map((t) => t.id));
    expect(res.body.data.every((t: { status: string; owner: number }) => t.status === 'done' && t.owner === source.id)).toBe(true);

    const byTitle = [...file.todos.filter((t) => t.userId === source.id)].sort((a, b) => (a.title < b.title ? 1 : a.title > b.title ? -1 : a.id - b.id));
    const sorted = await request(app.getHttpServer()).get('/v1/todos?sort=-title&size=5&page=2&fields=title').set('Authorization', bearer(token));
    expect(sorted.status).toBe(200);
    expect(sorted.body.total).toBe(byTitle.length);
    expect(sorted.body.data.map((t: { id: number; title: string }) => [t.id, t.title])).toEqual(byTitle.slice(5, 10).map((t) => [t.id, t.title]));
  });

  it('is idempotent: a second run neither duplicates nor fails', async () => {
    const result = await importFile([FILE, '--password', PASSWORD]);
    expect(result.status).toBe(0);
    expect(result.out).toContain(`users: 0 imported, ${file.users.length} already present`);
    expect(result.out).toContain(`todos: 0 imported, ${file.todos.length} already present`);
    expect(result.out).toContain(`articles: 0 imported, ${file.posts.length} already present`);
    expect(result.out).toContain(`comments: 0 imported, ${file.comments.length} already present`);
    const dataSource = app.get(DataSource);
    const [{ count }] = await dataSource.query('SELECT COUNT(*) AS count FROM todos');
    expect(Number(count)).toBe(file.todos.length);
  });

  it('moves id sequences past the imported ids, so later inserts work', async () => {
    const res = await request(app.getHttpServer()).post('/v1/users').send({ username: 'after_import', password: 'password-123', name: 'After Import' });
    expect(res.status).toBe(201);
    expect(res.body.id).toBe(Math.max(...file.users.map((u) => u.id)) + 1);
  });

  it('refuses a file whose ids collide with other records and writes nothing', async () => {
    await truncateAll(app);
    const taken = await request(app.getHttpServer()).post('/v1/users').send({ username: 'someone_else', password: 'password-123', name: 'Someone' });
    expect(taken.status).toBe(201);
    expect(taken.body.id).toBe(1);
    const result = await importFile([FILE, '--password', PASSWORD]);
    expect(result.status).toBe(1);
    expect(result.err).toHaveLength(1);
    expect(result.err[0]).toBe('import failed: user id 1 already holds a different user (username "someone_else", not "bret")');
    const dataSource = app.get(DataSource);
    const [{ users }] = await dataSource.query('SELECT COUNT(*) AS users FROM users');
    const [{ todos }] = await dataSource.query('SELECT COUNT(*) AS todos FROM todos');
    expect(Number(users)).toBe(1);
    expect(Number(todos)).toBe(0);
    const [{ articles }] = await dataSource.query('SELECT COUNT(*) AS articles FROM articles');
    expect(Number(articles)).toBe(0);
  });

  it('reports bad input as one line with a non-zero status', async () => {
    const missing = await importFile([path.join(os.tmpdir(), 'does-not-exist.json'), '--password', PASSWORD]);
    expect(missing.status).toBe(1);
    expect(missing.err).toEqual([expect.stringMatching(/^import failed: cannot read .*does-not-exist\.json: ENOENT$/)]);

    const wrongShape = path.join(os.tmpdir(), `import-wrong-${process.pid}.json`);
    writeFileSync(
      wrongShape,
      JSON.stringify({ users: [{ id: 1, username: 'Bret', name: 'B', email: 'b@example.com' }], todos: [{ id: 1, userId: 9, title: 'x', completed: false }] }),
    );
    const shape = await importFile([wrongShape, '--password', PASSWORD]);
    expect(shape.status).toBe(1);
    expect(shape.err).toEqual(['import failed: todos[0].userId names user 9, who is not in the file']);

    writeFileSync(wrongShape, '{"users": ');
    const notJson = await importFile([wrongShape, '--password', PASSWORD]);
    expect(notJson.status).toBe(1);
    expect(notJson.err[0]).toMatch(/is not valid JSON$/);

    const noPassword = await importFile([FILE]);
    expect(noPassword.status).toBe(2);
    expect(noPassword.err[0]).toMatch(/^import: a password for the imported users is required; usage:/);
  });
});
