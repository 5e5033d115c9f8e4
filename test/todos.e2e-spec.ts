import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Todo, type TodoStatus } from '../src/todos/todo.entity.js';
import type { User } from '../src/users/user.entity.js';
import { bearer, createUser } from './factories/user.factory.js';
import { createTestApp, truncateAll } from './setup/test-app.js';
import { ISO_MS } from './setup/formats.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The response object of a todo (docs/resources/todos.md), for exact comparisons. */
function todoShape(fields: { id: number; title: string; content: string | null; status: TodoStatus; owner: number }) {
  return {
    ...fields,
    created_at: expect.stringMatching(ISO_MS),
    updated_at: expect.stringMatching(ISO_MS),
    links: [
      { rel: 'self', href: `/v1/todos/${fields.id}` },
      { rel: 'owner', href: `/v1/users/${fields.owner}` },
    ],
  };
}

/** An envelope link's path and its query parameters (each name → all its values), order-insensitive. */
function parseHref(href: string): { path: string; query: Record<string, string[]> } {
  const url = new URL(href, 'http://localhost');
  const query: Record<string, string[]> = {};
  for (const [name, value] of url.searchParams) (query[name] ??= []).push(value);
  for (const values of Object.values(query)) values.sort();
  return { path: url.pathname, query };
}

function linkOf(links: Array<{ rel: string; href: string }>, rel: string) {
  return links.find((link) => link.rel === rel);
}

describe('todos (docs/writes.md, docs/resources/todos.md)', () => {
  let app: NestExpressApplication;
  let alice: { user: User; token: string };
  let bob: { user: User; token: string };
  let admin: { user: User; token: string };

  const http = () => request(app.getHttpServer());

  /** Creates a todo through the API as `token`; returns the response body. */
  async function postTodo(token: string, body: object): Promise<Record<string, any>> {
    const res = await http().post('/v1/todos').set('Authorization', bearer(token)).send(body);
    expect(res.status).toBe(201);
    return res.body;
  }

  beforeAll(async () => {
    app = await createTestApp();
    alice = await createUser(app);
    bob = await createUser(app);
    admin = await createUser(app, { role: 'admin' });
  });
  afterAll(async () => {
    await app.close();
  });

  describe('POST /v1/todos', () => {
    it('creates a todo owned by the caller: 201, Location, defaults and links', async () => {
      const res = await http().post('/v1/todos').set('Authorization', bearer(alice.token)).send({ title: 'Buy milk' });
      expect(res.status).toBe(201);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body.id).toEqual(expect.any(Number));
      expect(res.body).toEqual(todoShape({ id: res.body.id, title: 'Buy milk', content: null, status: 'pending', owner: alice.user.id }));
      expect(res.headers.location).toBe(`/v1/todos/${res.body.id}`);
      expect(res.body.created_at).toBe(res.body.updated_at);
      expect(Math.abs(Date.parse(res.body.created_at) - Date.now())).toBeLessThan(60_000);

      const read = await http().get(res.headers.location).set('Authorization', bearer(alice.token));
      expect(read.status).toBe(200);
      expect(read.body).toEqual(res.body);
    });

    it('accepts content and status', async () => {
      const res = await http()
        .post('/v1/todos')
        .set('Authorization', bearer(alice.token))
        .send({ title: 'Write report', content: 'Two pages.', status: 'in_progress' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual(todoShape({ id: res.body.id, title: 'Write report', content: 'Two pages.', status: 'in_progress', owner: alice.user.id }));
    });

    it('answers a missing title with 400 naming it', async () => {
      const res = await http().post('/v1/todos').set('Authorization', bearer(alice.token)).send({ content: 'no title' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'title is required',
        code: 'bad_request',
        details: [{ field: 'title', message: 'title is required' }],
        request_id: expect.any(String),
      });
    });

    it('writes the todo, its event and a listening webhook’s delivery at once: one statement on PostgreSQL, one transaction of three on SQLite and behind a transaction-mode pooler; the event shows the todo as created', async () => {
      const dataSource = app.get(DataSource);
      const postgres = dataSource.options.type === 'postgres';
      // DB_POOLER=transaction: only a transaction carries statement_timeout to the server
      const pooled = (dataSource.options.extra as { transactionSettings?: string } | undefined)?.transactionSettings !== undefined;
      const now = postgres ? 'now()' : "'2026-01-01 00:00:00.000'";
      const [{ id: webhook }] = await dataSource.query<Array<{ id: number }>>(
        `INSERT INTO webhook_subscriptions (owner_id, url, events, enabled, secret, created_at, updated_at)
         VALUES (${Number(bob.user.id)}, 'http://127.0.0.1:9/hook', '["todo.created"]', ${postgres ? 'TRUE' : '1'}, 'secret', ${now}, ${now}) RETURNING id`,
      );
      try {
        const statements: string[] = [];
        const original = dataSource.logger;
        const noop = () => undefined;
        Object.assign(dataSource, {
          logger: {
            logQuery: (sql: string) => statements.push(sql),
            logQueryError: noop,
            logQuerySlow: noop,
            logSchemaBuild: noop,
            logMigration: noop,
            log: noop,
          },
        });
        let res: request.Response;
        // digits in the text, as a 16-digit id would be written: the event's data keeps them
        const title = 'Heard 1000000000000000 and 1234567890123456 times';
        try {
          res = await http().post('/v1/todos').set('Authorization', bearer(bob.token)).send({ title });
        } finally {
          Object.assign(dataSource, { logger: original });
        }
        expect(res.status).toBe(201);
        const [event] = await dataSource.query<Array<{ event_id: string; resource_id: number; data_v1: string; data_v2: string }>>(
          `SELECT event_id, resource_id, data_v1, data_v2 FROM events WHERE type = 'todo.created' AND owner_id = ${Number(bob.user.id)} ORDER BY id DESC LIMIT 1`,
        );
        expect(Number(event.resource_id)).toBe(res.body.id);
        expect(JSON.parse(event.data_v1)).toEqual(res.body);
        const v2 = await http().get(`/v2/todos/${res.body.id}`).set('Authorization', bearer(bob.token));
        expect(JSON.parse(event.data_v2)).toEqual(v2.body);
        expect(res.body.title).toBe(title);
        const deliveries = await dataSource.query<Array<{ event_id: string }>>(
          `SELECT event_id FROM webhook_deliveries WHERE subscription_id = ${Number(webhook)}`,
        );
        expect(deliveries).toEqual([{ event_id: event.event_id }]);
        // the credential check before the create is no part of it
        const create = statements.slice(statements.findIndex((sql) => /^(START TRANSACTION|BEGIN|WITH r AS)/.test(sql)));
        if (postgres && !pooled) {
          expect(create).toEqual([expect.stringMatching(/^WITH r AS \(INSERT INTO "todos".*INSERT INTO "events".*INSERT INTO webhook_deliveries.*pg_notify/s)]);
        } else if (postgres) {
          expect(create).toEqual([
            'START TRANSACTION',
            expect.stringMatching(/^INSERT INTO "todos"/),
            expect.stringMatching(/^WITH e AS \(INSERT INTO "events".*INSERT INTO webhook_deliveries.*pg_notify/s),
            'COMMIT',
          ]);
        } else {
          expect(create).toEqual([
            expect.stringMatching(/^BEGIN/),
            expect.stringMatching(/^INSERT INTO "todos"/),
            expect.stringMatching(/^INSERT INTO "events"/),
            expect.stringMatching(/^INSERT INTO webhook_deliveries/),
            'COMMIT',
          ]);
        }
      } finally {
        await dataSource.query(`DELETE FROM webhook_subscriptions WHERE id = ${Number(webhook)}`);
      }
    });

    it('writes nothing when its event cannot be written: 500 without internals, no todo, no event (both databases)', async () => {
      const dataSource = app.get(DataSource);
      const postgres = dataSource.options.type === 'postgres';
      if (postgres) {
        await dataSource.query(
          `CREATE FUNCTION todos_e2e_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.data_v1 LIKE '%refused-by-trigger%' THEN RAISE EXCEPTION 'boom'; END IF; RETURN NEW; END $$`,
        );
        await dataSource.query('CREATE TRIGGER todos_e2e_refuse BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION todos_e2e_refuse()');
      } else {
        await dataSource.query(
          `CREATE TRIGGER todos_e2e_refuse BEFORE INSERT ON events WHEN NEW.data_v1 LIKE '%refused-by-trigger%' BEGIN SELECT RAISE(ABORT, 'boom'); END`,
        );
      }
      try {
        const todos = await dataSource.getRepository(Todo).count();
        const [{ n: events }] = await dataSource.query<Array<{ n: number }>>('SELECT COUNT(*) AS n FROM events');
        const refused = await http().post('/v1/todos').set('Authorization', bearer(alice.token)).send({ title: 'refused-by-trigger' });
        expect(refused.status).toBe(500);
        expect(refused.body).toEqual({ error: 'internal server error', code: 'internal', request_id: expect.any(String) });
        expect(refused.text).not.toContain('boom');
        expect(refused.headers.location).toBeUndefined();
        expect(await dataSource.getRepository(Todo).count()).toBe(todos);
        expect(await dataSource.getRepository(Todo).countBy({ title: 'refused-by-trigger' })).toBe(0);
        const [{ n: after }] = await dataSource.query<Array<{ n: number }>>('SELECT COUNT(*) AS n FROM events');
        expect(Number(after)).toBe(Number(events));
        // the next create is whole
        const next = await http().post('/v1/todos').set('Authorization', bearer(alice.token)).send({ title: 'accepted' });
        expect(next.status).toBe(201);
        const [{ n: written }] = await dataSource.query<Array<{ n: number }>>(`SELECT COUNT(*) AS n FROM events WHERE resource_id = ${Number(next.body.id)}`);
        expect(Number(written)).toBe(1);
      } finally {
        await dataSource.query(postgres ? 'DROP TRIGGER IF EXISTS todos_e2e_refuse ON events' : 'DROP TRIGGER IF EXISTS todos_e2e_refuse');
        if (postgres) await dataSource.query('DROP FUNCTION IF EXISTS todos_e2e_refuse()');
      }
    });

    it('answers an empty or null title with 400', async () => {
      for (const title of ['', null]) {
        const res = await http().post('/v1/todos').set('Authorization', bearer(alice.token)).send({ title });
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ code: 'bad_request', details: [{ field: 'title', message: 'title is required' }] });
      }
    });

    it('answers a title of the wrong JSON type with 400', async () => {
      const res = await http().post('/v1/todos').set('Authorization', bearer(alice.token)).send({ title: 42 });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'bad_request', details: [{ field: 'title', message: expect.any(String) }] });
    });

    it('accepts a title of 200 characters and answers 201 characters with 422', async () => {
      const ok = await http()
        .post('/v1/todos')
        .set('Authorization', bearer(alice.token))
        .send({ title: 'a'.repeat(200) });
      expect(ok.status).toBe(201);
      expect(ok.body.title).toBe('a'.repeat(200));

      const res = await http()
        .post('/v1/todos')
        .set('Authorization', bearer(alice.token))
        .send({ title: 'a'.repeat(201) });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        error: expect.any(String),
        code: 'validation_failed',
        details: [{ field: 'title', message: expect.any(String) }],
        request_id: expect.any(String),
      });
    });

    it('answers a status outside the enumeration with 422', async () => {
      const res = await http().post('/v1/todos').set('Authorization', bearer(alice.token)).send({ title: 'x', status: 'finished' });
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ code: 'validation_failed', details: [{ field: 'status', message: expect.any(String) }] });
    });

    it('lists every failing field, and a well-formedness problem makes it 400', async () => {
      const res = await http()
        .post('/v1/todos')
        .set('Authorization', bearer(alice.token))
        .send({ status: 'finished', content: 'c'.repeat(10_001) });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('bad_request');
      expect(res.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['content', 'status', 'title']);
    });

    it('answers a property the operation does not accept with 400 naming it', async () => {
      const res = await http().post('/v1/todos').set('Authorization', bearer(alice.token)).send({ title: 'x', priority: 'high' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'priority is not an accepted property',
        code: 'bad_request',
        details: [{ field: 'priority', message: 'priority is not an accepted property' }],
        request_id: expect.any(String),
      });
    });

    it('ignores read-only properties, including an owner sent by the caller', async () => {
      const res = await http()
        .post('/v1/todos')
        .set('Authorization', bearer(alice.token))
        .send({ id: 999, title: 'Not yours', owner: bob.user.id, created_at: '2000-01-01T00:00:00.000Z', links: [] });
      expect(res.status).toBe(201);
      expect(res.body.id).not.toBe(999);
      expect(res.body.owner).toBe(alice.user.id);
      expect(res.body.created_at).not.toBe('2000-01-01T00:00:00.000Z');
      expect(res.body.links).toEqual([
        { rel: 'self', href: `/v1/todos/${res.body.id}` },
        { rel: 'owner', href: `/v1/users/${alice.user.id}` },
      ]);
    });

    it('needs a credential', async () => {
      const res = await http().post('/v1/todos').send({ title: 'x' });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 'unauthorized' });
    });
  });

  describe('GET /v1/todos/{id}', () => {
    let own: Record<string, any>;

    beforeAll(async () => {
      own = await postTodo(alice.token, { title: 'Read me', content: 'body' });
    });

    it('returns the caller’s own todo', async () => {
      const res = await http().get(`/v1/todos/${own.id}`).set('Authorization', bearer(alice.token));
      expect(res.status).toBe(200);
      expect(res.body).toEqual(own);
    });

    it('refuses another user’s todo with 403', async () => {
      const res = await http().get(`/v1/todos/${own.id}`).set('Authorization', bearer(bob.token));
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: expect.any(String), code: 'forbidden', request_id: expect.any(String) });
    });

    it('answers a missing todo with 404 not_found', async () => {
      const res = await http().get('/v1/todos/999999').set('Authorization', bearer(alice.token));
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'todo 999999 not found', code: 'not_found', request_id: expect.any(String) });
    });

    it('lets an admin read anyone’s todo', async () => {
      const res = await http().get(`/v1/todos/${own.id}`).set('Authorization', bearer(admin.token));
      expect(res.status).toBe(200);
      expect(res.body).toEqual(own);
    });

    it('returns id, the named fields and links with fields=', async () => {
      const res = await http().get(`/v1/todos/${own.id}`).query({ fields: 'title,status' }).set('Authorization', bearer(alice.token));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: own.id, title: 'Read me', status: 'pending', links: own.links });
    });

    it('answers an unknown field in fields= with 400', async () => {
      const res = await http().get(`/v1/todos/${own.id}`).query({ fields: 'title,secret' }).set('Authorization', bearer(alice.token));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'bad_request', details: [{ field: 'fields', message: expect.stringContaining('secret') }] });
    });

    it('answers any other query parameter with 400 naming it', async () => {
      const res = await http().get(`/v1/todos/${own.id}`).query({ page: '1' }).set('Authorization', bearer(alice.token));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'bad_request', details: [{ field: 'page', message: 'unknown query parameter page' }] });
    });
  });

  describe('PATCH /v1/todos/{id}', () => {
    it('marks a todo done with {"status": "done"} and moves updated_at', async () => {
      const todo = await postTodo(alice.token, { title: 'Finish me', content: 'keep' });
      await sleep(5);
      const res = await http().patch(`/v1/todos/${todo.id}`).set('Authorization', bearer(alice.token)).send({ status: 'done' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...todo, status: 'done', updated_at: expect.stringMatching(ISO_MS) });
      expect(Date.parse(res.body.updated_at)).toBeGreaterThan(Date.parse(todo.updated_at));
      expect(res.body.created_at).toBe(todo.created_at);

      const read = await http().get(`/v1/todos/${todo.id}`).set('Authorization', bearer(alice.token));
      expect(read.status).toBe(200);
      expect(read.body).toEqual(res.body);
    });

    it('accepts application/merge-patch+json', async () => {
      const todo = await postTodo(alice.token, { title: 'Merge me' });
      const res = await http()
        .patch(`/v1/todos/${todo.id}`)
        .set('Authorization', bearer(alice.token))
        .set('Content-Type', 'application/merge-patch+json')
        .send(JSON.stringify({ title: 'Merged', status: 'in_progress' }));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...todo, title: 'Merged', status: 'in_progress', updated_at: expect.stringMatching(ISO_MS) });
    });

    it('clears content with null and leaves the other fields', async () => {
      const todo = await postTodo(alice.token, { title: 'Clear me', content: 'to be cleared', status: 'in_progress' });
      const res = await http().patch(`/v1/todos/${todo.id}`).set('Authorization', bearer(alice.token)).send({ content: null });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...todo, content: null, updated_at: expect.stringMatching(ISO_MS) });

      const read = await http().get(`/v1/todos/${todo.id}`).set('Authorization', bearer(alice.token));
      expect(read.status).toBe(200);
      expect(read.body.content).toBeNull();
    });

    it('answers {"title": null} with 400 and changes nothing', async () => {
      const todo = await postTodo(alice.token, { title: 'Keep my title' });
      const res = await http().patch(`/v1/todos/${todo.id}`).set('Authorization', bearer(alice.token)).send({ title: null });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'bad_request', details: [{ field: 'title', message: 'title is required' }] });

      const read = await http().get(`/v1/todos/${todo.id}`).set('Authorization', bearer(alice.token));
      expect(read.status).toBe(200);
      expect(read.body).toEqual(todo);
    });

    it('answers {"status": null} with 400 (status is not nullable) on PATCH, POST and PUT', async () => {
      const todo = await postTodo(alice.token, { title: 'Keep my status', status: 'in_progress' });
      const patch = await http().patch(`/v1/todos/${todo.id}`).set('Authorization', bearer(alice.token)).send({ status: null });
      expect(patch.status).toBe(400);
      expect(patch.body).toMatchObject({ code: 'bad_request', details: [{ field: 'status', message: expect.any(String) }] });
      const post = await http().post('/v1/todos').set('Authorization', bearer(alice.token)).send({ title: 'x', status: null });
      expect(post.status).toBe(400);
      const put = await http().put(`/v1/todos/${todo.id}`).set('Authorization', bearer(alice.token)).send({ title: 'x', status: null });
      expect(put.status).toBe(400);
      const read = await http().get(`/v1/todos/${todo.id}`).set('Authorization', bearer(alice.token));
      expect(read.body).toEqual(todo);
    });

    it('answers a bad status with 422 and an unknown property with 400', async () => {
      const todo = await postTodo(alice.token, { title: 'Patch rules' });
      const bad = await http().patch(`/v1/todos/${todo.id}`).set('Authorization', bearer(alice.token)).send({ status: 'finished' });
      expect(bad.status).toBe(422);
      expect(bad.body).toMatchObject({ code: 'validation_failed', details: [{ field: 'status', message: expect.any(String) }] });
      const unknown = await http().patch(`/v1/todos/${todo.id}`).set('Authorization', bearer(alice.token)).send({ done: true });
      expect(unknown.status).toBe(400);
      expect(unknown.body).toMatchObject({ code: 'bad_request', details: [{ field: 'done', message: 'done is not an accepted property' }] });
    });

    it('answers a missing todo with 404', async () => {
      const res = await http().patch('/v1/todos/999999').set('Authorization', bearer(alice.token)).send({ status: 'done' });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 'not_found' });
    });
  });

  describe('PUT /v1/todos/{id}', () => {
    it('replaces the whole todo: omitted content → null, status → pending', async () => {
      const todo = await postTodo(alice.token, { title: 'Old', content: 'old content', status: 'done' });
      await sleep(5);
      const res = await http().put(`/v1/todos/${todo.id}`).set('Authorization', bearer(alice.token)).send({ title: 'New' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...todo, title: 'New', content: null, status: 'pending', updated_at: expect.stringMatching(ISO_MS) });
      expect(Date.parse(res.body.updated_at)).toBeGreaterThan(Date.parse(todo.updated_at));

      const read = await http().get(`/v1/todos/${todo.id}`).set('Authorization', bearer(alice.token));
      expect(read.status).toBe(200);
      expect(read.body).toEqual(res.body);
    });

    it('accepts what a GET returned (GET → edit → PUT)', async () => {
      const todo = await postTodo(alice.token, { title: 'Round trip' });
      const res = await http()
        .put(`/v1/todos/${todo.id}`)
        .set('Authorization', bearer(alice.token))
        .send({ ...todo, status: 'done' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...todo, status: 'done', updated_at: expect.stringMatching(ISO_MS) });
    });

    it('answers a missing title with 400', async () => {
      const todo = await postTodo(alice.token, { title: 'Needs a title' });
      const res = await http().put(`/v1/todos/${todo.id}`).set('Authorization', bearer(alice.token)).send({ content: 'only content' });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'bad_request', details: [{ field: 'title', message: 'title is required' }] });
    });

    it('does not accept merge-patch media type', async () => {
      const todo = await postTodo(alice.token, { title: 'Put type' });
      const res = await http()
        .put(`/v1/todos/${todo.id}`)
        .set('Authorization', bearer(alice.token))
        .set('Content-Type', 'application/merge-patch+json')
        .send(JSON.stringify({ title: 'x' }));
      expect(res.status).toBe(415);
      expect(res.body).toMatchObject({ code: 'unsupported_media_type' });
    });
  });

  describe('DELETE /v1/todos/{id}', () => {
    it('answers 204 without a body, then 404', async () => {
      const todo = await postTodo(alice.token, { title: 'Delete me' });
      const res = await http().delete(`/v1/todos/${todo.id}`).set('Authorization', bearer(alice.token));
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(res.body).toEqual({});
      expect(res.headers['content-type']).toBeUndefined();

      const read = await http().get(`/v1/todos/${todo.id}`).set('Authorization', bearer(alice.token));
      expect(read.status).toBe(404);
      expect(read.body).toMatchObject({ code: 'not_found' });
      const again = await http().delete(`/v1/todos/${todo.id}`).set('Authorization', bearer(alice.token));
      expect(again.status).toBe(404);
      expect(again.body).toMatchObject({ code: 'not_found' });
    });

    it('lets an admin delete anyone’s todo', async () => {
      const todo = await postTodo(bob.token, { title: 'Admin deletes me' });
      const res = await http().delete(`/v1/todos/${todo.id}`).set('Authorization', bearer(admin.token));
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      const read = await http().get(`/v1/todos/${todo.id}`).set('Authorization', bearer(bob.token));
      expect(read.status).toBe(404);
      expect(read.body).toMatchObject({ code: 'not_found' });
    });
  });

  describe('writes to another user’s todo', () => {
    let todo: Record<string, any>;

    beforeAll(async () => {
      todo = await postTodo(alice.token, { title: 'Alice only', content: 'private' });
    });

    it('refuses PATCH, PUT and DELETE with 403 and leaves the todo unchanged', async () => {
      const patch = await http().patch(`/v1/todos/${todo.id}`).set('Authorization', bearer(bob.token)).send({ status: 'done' });
      expect(patch.status).toBe(403);
      expect(patch.body).toEqual({ error: expect.any(String), code: 'forbidden', request_id: expect.any(String) });

      const put = await http().put(`/v1/todos/${todo.id}`).set('Authorization', bearer(bob.token)).send({ title: 'Bob was here' });
      expect(put.status).toBe(403);
      expect(put.body).toEqual({ error: expect.any(String), code: 'forbidden', request_id: expect.any(String) });

      const del = await http().delete(`/v1/todos/${todo.id}`).set('Authorization', bearer(bob.token));
      expect(del.status).toBe(403);
      expect(del.body).toEqual({ error: expect.any(String), code: 'forbidden', request_id: expect.any(String) });

      const read = await http().get(`/v1/todos/${todo.id}`).set('Authorization', bearer(alice.token));
      expect(read.status).toBe(200);
      expect(read.body).toEqual(todo);
    });

    it('lets an admin change it, keeping the owner', async () => {
      const res = await http().patch(`/v1/todos/${todo.id}`).set('Authorization', bearer(admin.token)).send({ status: 'done' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...todo, status: 'done', owner: alice.user.id, updated_at: expect.stringMatching(ISO_MS) });
    });
  });

  describe('GET /v1/todos (docs/lists.md)', () => {
    let carol: { user: User; token: string };
    let dave: { user: User; token: string };
    let boss: { user: User; token: string };
    /** Carol's todos, in insertion (= id) order. */
    let c: number[];
    /** Dave's todos. */
    let d: number[];

    const list = (token: string, query: Record<string, string | string[]> | string = {}) =>
      http().get('/v1/todos').query(query).set('Authorization', bearer(token));
    const ids = (body: { data: Array<{ id: number }> }) => body.data.map((item) => item.id);

    beforeAll(async () => {
      // a known data set: empty tables, rows inserted with chosen timestamps (including a tie)
      await truncateAll(app);
      carol = await createUser(app);
      dave = await createUser(app);
      boss = await createUser(app, { role: 'admin' });
      const repo = app.get(DataSource).getRepository(Todo);
      const t0 = Date.parse('2026-01-01T10:00:00.000Z');
      const insert = async (owner: number, title: string, status: TodoStatus, offsetMs: number, content: string | null = null) => {
        const at = new Date(t0 + offsetMs);
        const result = await repo.insert({ title, content, status, owner_id: owner, created_at: at, updated_at: at });
        return Number(result.identifiers[0].id);
      };
      c = [];
      c.push(await insert(carol.user.id, 'delta', 'pending', 0, 'first'));
      c.push(await insert(carol.user.id, 'alpha', 'done', 1000));
      c.push(await insert(carol.user.id, 'charlie', 'in_progress', 1000)); // same created_at as c[1]
      c.push(await insert(carol.user.id, 'bravo', 'pending', 2000));
      c.push(await insert(carol.user.id, 'alpha', 'pending', 3000)); // same title as c[1]
      c.push(await insert(carol.user.id, 'echo', 'done', 500));
      d = [];
      d.push(await insert(dave.user.id, 'foxtrot', 'pending', 100));
      d.push(await insert(dave.user.id, 'golf', 'done', 200));
    });

    it('returns the envelope with the exact total, the caller’s todos only, id ascending by default', async () => {
      const res = await list(carol.token);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(Object.keys(res.body).sort()).toEqual(['data', 'links', 'page', 'size', 'total']);
      expect(res.body).toMatchObject({ page: 1, size: 20, total: 6 });
      expect(ids(res.body)).toEqual(c);
      expect(res.body.data.every((item: { owner: number }) => item.owner === carol.user.id)).toBe(true);
    });

    it('returns each element of data exactly as the single GET of that id', async () => {
      const res = await list(carol.token);
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(6);
      for (const item of res.body.data) {
        const one = await http().get(`/v1/todos/${item.id}`).set('Authorization', bearer(carol.token));
        expect(one.status).toBe(200);
        expect(item).toEqual(one.body);
      }
      expect(res.body.data[0]).toEqual(todoShape({ id: c[0], title: 'delta', content: 'first', status: 'pending', owner: carol.user.id }));
      expect(res.body.data[0].created_at).toBe('2026-01-01T10:00:00.000Z');
    });

    it('shows an admin every todo', async () => {
      const res = await list(boss.token);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ page: 1, size: 20, total: 8 });
      expect(ids(res.body)).toEqual([...c, ...d]);
    });

    it('lets an admin filter by owner', async () => {
      const res = await list(boss.token, { owner: String(dave.user.id) });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ total: 2 });
      expect(ids(res.body)).toEqual(d);
    });

    it('never widens visibility: owner=<another user> as a non-admin returns nothing', async () => {
      const res = await list(carol.token, { owner: String(dave.user.id) });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ data: [], page: 1, size: 20, total: 0 });

      const both = await list(carol.token, `owner=${dave.user.id}&owner=${carol.user.id}`);
      expect(both.status).toBe(200);
      expect(both.body.total).toBe(6);
      expect(ids(both.body)).toEqual(c);
    });

    it('filters by one status', async () => {
      const res = await list(carol.token, { status: 'done' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ total: 2 });
      expect(ids(res.body)).toEqual([c[1], c[5]]);
      expect(res.body.data.every((item: { status: string }) => item.status === 'done')).toBe(true);
    });

    it('treats a repeated filter as "any of"', async () => {
      const res = await list(carol.token, 'status=done&status=pending');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ total: 5 });
      expect(ids(res.body)).toEqual([c[0], c[1], c[3], c[4], c[5]]);
    });

    it('answers a bad filter value with 400 and details', async () => {
      const status = await list(carol.token, { status: 'finished' });
      expect(status.status).toBe(400);
      expect(status.body).toEqual({
        error: expect.any(String),
        code: 'bad_request',
        details: [{ field: 'status', message: expect.stringContaining('pending') }],
        request_id: expect.any(String),
      });
      const owner = await list(carol.token, { owner: 'abc' });
      expect(owner.status).toBe(400);
      expect(owner.body).toMatchObject({ code: 'bad_request', details: [{ field: 'owner', message: expect.any(String) }] });
    });

    it.each([
      ['size', '0'],
      ['size', '101'],
      ['size', 'x'],
      ['page', '0'],
      ['page', 'x'],
      ['page', '-1'],
      ['page', '1.5'],
      ['offset', '-1'],
      ['limit', '0'],
      ['limit', '101'],
    ])('answers %s=%s with 400 naming it', async (name, value) => {
      const res = await list(carol.token, { [name]: value });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: expect.any(String),
        code: 'bad_request',
        details: [{ field: name, message: expect.stringContaining(name) }],
        request_id: expect.any(String),
      });
    });

    it('accepts size=100 and size=1', async () => {
      const big = await list(carol.token, { size: '100' });
      expect(big.status).toBe(200);
      expect(big.body).toMatchObject({ page: 1, size: 100, total: 6 });
      const one = await list(carol.token, { size: '1' });
      expect(one.status).toBe(200);
      expect(one.body).toMatchObject({ page: 1, size: 1, total: 6 });
      expect(ids(one.body)).toEqual([c[0]]);
    });

    it('pages with offset/limit: the envelope carries offset, limit, page and size', async () => {
      const res = await list(carol.token, { offset: '2', limit: '2' });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['data', 'limit', 'links', 'next_cursor', 'offset', 'page', 'prev_cursor', 'size', 'total']);
      expect(res.body).toMatchObject({ offset: 2, limit: 2, page: 2, size: 2, total: 6 });
      expect(ids(res.body)).toEqual([c[2], c[3]]);
      const self = parseHref(linkOf(res.body.links, 'self')!.href);
      expect(self).toEqual({ path: '/v1/todos', query: { offset: ['2'], limit: ['2'] } });
      expect(parseHref(linkOf(res.body.links, 'next')!.href).query).toEqual({ offset: ['4'], limit: ['2'] });
      expect(parseHref(linkOf(res.body.links, 'prev')!.href).query).toEqual({ offset: ['0'], limit: ['2'] });
    });

    it('computes page from an offset that is not a multiple of limit', async () => {
      const res = await list(carol.token, { offset: '3', limit: '2' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ offset: 3, limit: 2, page: 2, size: 2, total: 6 });
      expect(ids(res.body)).toEqual([c[3], c[4]]);
    });

    it('answers page/size mixed with offset/limit with 400', async () => {
      const mixed: Array<Record<string, string>> = [
        { page: '1', offset: '0' },
        { size: '2', limit: '2' },
        { page: '2', limit: '5' },
      ];
      for (const query of mixed) {
        const res = await list(carol.token, query);
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ code: 'bad_request', details: [{ field: expect.any(String), message: expect.stringContaining('offset/limit') }] });
      }
    });

    it.each([
      ['-status,title', [4, 3, 0, 2, 1, 5]],
      ['status,-created_at', [1, 5, 2, 4, 3, 0]],
      ['title', [1, 4, 3, 2, 0, 5]],
      ['-title', [5, 0, 2, 3, 4, 1]],
      ['created_at', [0, 5, 1, 2, 3, 4]],
      ['-created_at', [4, 3, 2, 1, 5, 0]],
      ['-id', [5, 4, 3, 2, 1, 0]],
      ['status,title', [1, 5, 2, 4, 3, 0]],
    ])('sorts by %s with id last, in the direction of the first key', async (sort, order) => {
      const res = await list(carol.token, { sort: sort as string });
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(6);
      expect(ids(res.body)).toEqual((order as number[]).map((i) => c[i]));
    });

    it('keeps a sorted order stable across pages', async () => {
      const pages = await Promise.all(['1', '2', '3'].map((page) => list(carol.token, { sort: '-created_at', size: '2', page })));
      for (const res of pages) expect(res.status).toBe(200);
      expect(pages.flatMap((res) => ids(res.body))).toEqual([4, 3, 2, 1, 5, 0].map((i) => c[i]));
    });

    it('answers an unknown or repeated sort field with 400', async () => {
      const unknown = await list(carol.token, { sort: 'content' });
      expect(unknown.status).toBe(400);
      expect(unknown.body).toMatchObject({ code: 'bad_request', details: [{ field: 'sort', message: expect.stringContaining('content') }] });
      const owner = await list(carol.token, { sort: '-title,owner' });
      expect(owner.status).toBe(400);
      expect(owner.body).toMatchObject({ code: 'bad_request', details: [{ field: 'sort', message: expect.stringContaining('owner') }] });
      const twice = await list(carol.token, { sort: 'title,-title' });
      expect(twice.status).toBe(400);
      expect(twice.body).toMatchObject({ code: 'bad_request', details: [{ field: 'sort', message: expect.stringContaining('title') }] });
    });

    it('returns exactly id, the named fields and links with fields=title,status', async () => {
      const res = await list(carol.token, { fields: 'title,status' });
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(6);
      expect(res.body.data).toHaveLength(6);
      for (const item of res.body.data) expect(Object.keys(item).sort()).toEqual(['id', 'links', 'status', 'title']);
      expect(res.body.data[0]).toEqual({
        id: c[0],
        title: 'delta',
        status: 'pending',
        links: [
          { rel: 'self', href: `/v1/todos/${c[0]}` },
          { rel: 'owner', href: `/v1/users/${carol.user.id}` },
        ],
      });
      expect(parseHref(linkOf(res.body.links, 'self')!.href).query.fields).toEqual(['title,status']);
    });

    it('applies fields= to timestamps and owner too', async () => {
      const res = await list(carol.token, { fields: 'owner,created_at', size: '1' });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([{ id: c[0], owner: carol.user.id, created_at: '2026-01-01T10:00:00.000Z', links: expect.any(Array) }]);
    });

    it('answers an unknown field in fields= with 400', async () => {
      const res = await list(carol.token, { fields: 'title,password' });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'bad_request', details: [{ field: 'fields', message: expect.stringContaining('password') }] });
    });

    it('answers an unknown query parameter with 400 naming it', async () => {
      const res = await list(carol.token, { colour: 'red' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'unknown query parameter colour',
        code: 'bad_request',
        details: [{ field: 'colour', message: 'unknown query parameter colour' }],
        request_id: expect.any(String),
      });
    });

    it('lists every bad query parameter at once', async () => {
      const res = await list(carol.token, { colour: 'red', size: '0', sort: 'nope' });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('bad_request');
      expect(res.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['colour', 'size', 'sort']);
    });

    it('links self, first, next and last on page 1 of 3, keeping filters and sort', async () => {
      const query = 'status=pending&status=done&sort=-title&size=2';
      const res = await list(carol.token, query);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ page: 1, size: 2, total: 5 });
      expect(ids(res.body)).toEqual([c[5], c[0]]);
      expect(res.body.links.map((link: { rel: string }) => link.rel)).toEqual(['self', 'first', 'next', 'last']);
      const filters = { status: ['done', 'pending'], sort: ['-title'], size: ['2'] };
      const expected: Record<string, string> = { self: '1', first: '1', next: '2', last: '3' };
      for (const [rel, page] of Object.entries(expected)) {
        expect(parseHref(linkOf(res.body.links, rel)!.href)).toEqual({ path: '/v1/todos', query: { ...filters, page: [page] } });
      }

      // following `next` gives page 2, which links prev back to page 1
      const next = await http().get(linkOf(res.body.links, 'next')!.href).set('Authorization', bearer(carol.token));
      expect(next.status).toBe(200);
      expect(next.body).toMatchObject({ page: 2, size: 2, total: 5 });
      expect(ids(next.body)).toEqual([c[3], c[4]]);
      expect(next.body.links.map((link: { rel: string }) => link.rel)).toEqual(['self', 'first', 'prev', 'next', 'last']);
      expect(parseHref(linkOf(next.body.links, 'prev')!.href)).toEqual({ path: '/v1/todos', query: { ...filters, page: ['1'] } });
      expect(parseHref(linkOf(next.body.links, 'next')!.href)).toEqual({ path: '/v1/todos', query: { ...filters, page: ['3'] } });

      // the last page has no next
      const last = await http().get(linkOf(res.body.links, 'last')!.href).set('Authorization', bearer(carol.token));
      expect(last.status).toBe(200);
      expect(last.body).toMatchObject({ page: 3, size: 2, total: 5 });
      expect(ids(last.body)).toEqual([c[1]]);
      expect(last.body.links.map((link: { rel: string }) => link.rel)).toEqual(['self', 'first', 'prev', 'last']);
    });

    it('repeats fields in the links', async () => {
      const res = await list(carol.token, { fields: 'title', size: '5' });
      expect(res.status).toBe(200);
      expect(res.body.links.map((link: { rel: string }) => link.rel)).toEqual(['self', 'first', 'next', 'last']);
      for (const link of res.body.links) expect(parseHref(link.href).query).toMatchObject({ fields: ['title'], size: ['5'] });
    });

    it('answers a page past the end with 200, empty data and the true total', async () => {
      const res = await list(carol.token, { page: '10', size: '2' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ data: [], page: 10, size: 2, total: 6 });
      expect(parseHref(linkOf(res.body.links, 'last')!.href).query).toEqual({ page: ['3'], size: ['2'] });
      expect(linkOf(res.body.links, 'next')).toBeUndefined();

      const offset = await list(carol.token, { offset: '50', limit: '10' });
      expect(offset.status).toBe(200);
      expect(offset.body).toMatchObject({ data: [], offset: 50, limit: 10, page: 6, size: 10, total: 6 });
    });

    it('returns an empty first page for a caller without todos', async () => {
      const res = await list(boss.token, { owner: String(boss.user.id) });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ data: [], page: 1, size: 20, total: 0 });
      expect(res.body.links.map((link: { rel: string }) => link.rel)).toEqual(['self', 'first', 'last']);
    });

    it('needs a credential', async () => {
      const res = await http().get('/v1/todos');
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 'unauthorized' });
      expect(res.headers['www-authenticate']).toBe('Bearer realm="api"');
    });
  });
});
