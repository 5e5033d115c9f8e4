import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource, type EntityManager } from 'typeorm';
import { Todo } from '../src/todos/todo.entity.js';
import { bearer, createUser, type CreatedUser } from './factories/user.factory.js';
import { errorBody } from './setup/error-body.js';
import { createTestApp } from './setup/test-app.js';

const onPostgres = /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '');
const describeOnSqlite = onPostgres ? describe.skip : describe;

/** How many requests write while another request's transaction fails. */
const WRITERS = 30;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One request's transaction is its own (docs/writes.md#transactions-on-sqlite): its rollback, or
 * its failed COMMIT, undoes its own writes and nothing that other requests were told was written.
 * On SQLite TypeORM runs every statement on one connection, so this holds only because a
 * transaction takes that connection for itself until it ends; on PostgreSQL each transaction has
 * a connection of its own. The same tests run on both.
 */
describe('transaction isolation between requests', () => {
  let app: NestExpressApplication;
  let dataSource: DataSource;
  let base: string;
  let alice: CreatedUser;

  beforeAll(async () => {
    app = await createTestApp();
    await app.listen(0, '127.0.0.1');
    base = await app.getUrl();
    dataSource = app.get(DataSource);
    alice = await createUser(app);
  });
  afterAll(async () => {
    await app.close();
  });

  /** A row for alice's todos, titled `title`. */
  const todoRow = (title: string) => {
    const now = new Date();
    return { title, content: null, status: 'pending' as const, owner_id: alice.user.id, created_at: now, updated_at: now, version: 1 };
  };

  /** Titles of alice's todos that start with `prefix`, read back from the database. */
  const titles = async (prefix: string) =>
    (
      await dataSource
        .getRepository(Todo)
        .createQueryBuilder('t')
        .where('t.title LIKE :p', { p: `${prefix}%` })
        .getMany()
    )
      .map((t) => t.title)
      .sort();

  /** A transaction that inserts `title`, lets other requests run for `pauseMs`, then fails. */
  const failingTransaction = (title: string, pauseMs: number, fail: (manager: EntityManager) => Promise<void>) =>
    dataSource.transaction(async (manager) => {
      await manager.getRepository(Todo).insert(todoRow(title));
      await sleep(pauseMs);
      await fail(manager);
    });

  it('a rollback undoes its own insert, not a plain write nor a committed transaction of other requests', async () => {
    const failing = failingTransaction('iso1-rolled-back', 100, () => Promise.reject(new Error('rolled back on purpose')));
    await sleep(10);
    const plain = dataSource.getRepository(Todo).insert(todoRow('iso1-plain'));
    const committed = dataSource.transaction((manager) => manager.getRepository(Todo).insert(todoRow('iso1-committed')));
    await expect(failing).rejects.toThrow('rolled back on purpose');
    await Promise.all([plain, committed]);
    expect(await titles('iso1-')).toEqual(['iso1-committed', 'iso1-plain']);
  });

  it(`a failed COMMIT beside ${WRITERS} concurrent writers undoes only its own writes; every acknowledged create is there`, async () => {
    // a deferred foreign key checked at COMMIT: the COMMIT fails and the transaction rolls back
    const failing = failingTransaction('iso2-failed-commit', 300, async (manager) => {
      if (!onPostgres) await manager.query('PRAGMA defer_foreign_keys = ON');
      else await manager.query('SET CONSTRAINTS ALL DEFERRED');
      await manager.getRepository(Todo).insert({ ...todoRow('iso2-orphan'), owner_id: 2_000_000_000 });
    });
    await sleep(10);
    // sent now (a supertest request starts when it is awaited), so they arrive while the transaction is open
    const writes = Array.from({ length: WRITERS }, (_, i) =>
      Promise.resolve(
        request(base)
          .post('/v1/todos')
          .set('Authorization', bearer(alice.token))
          .send({ title: `iso2-writer-${String(i).padStart(2, '0')}` }),
      ),
    );
    await expect(failing).rejects.toThrow();
    const responses = await Promise.all(writes);
    const acknowledged = responses
      .filter((r) => r.status === 201)
      .map((r) => (r.body as { title: string }).title)
      .sort();
    expect(responses.map((r) => r.status)).toEqual(Array(WRITERS).fill(201));
    expect(await titles('iso2-')).toEqual(acknowledged);
    // each acknowledged id holds its own todo (no id handed out twice)
    const ids = responses.map((r) => (r.body as { id: number }).id);
    expect(new Set(ids).size).toBe(WRITERS);
    for (const r of responses) {
      const read = await request(base)
        .get(`/v1/todos/${(r.body as { id: number }).id}`)
        .set('Authorization', bearer(alice.token));
      expect(read.status).toBe(200);
      expect((read.body as { title: string }).title).toBe((r.body as { title: string }).title);
    }
  });

  it(`${WRITERS} concurrent transactions, every second one failing: exactly the others' writes remain`, async () => {
    const results = await Promise.allSettled(
      Array.from({ length: WRITERS }, (_, i) =>
        dataSource.transaction(async (manager) => {
          await manager.getRepository(Todo).insert(todoRow(`iso3-${String(i).padStart(2, '0')}`));
          await sleep(1 + (i % 5));
          if (i % 2 === 1) throw new Error(`transaction ${i} fails`);
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(WRITERS / 2);
    const expected = Array.from({ length: WRITERS }, (_, i) => i)
      .filter((i) => i % 2 === 0)
      .map((i) => `iso3-${String(i).padStart(2, '0')}`);
    expect(await titles('iso3-')).toEqual(expected);
  });
});

/**
 * SQLite only: what the connection gate itself promises — the transaction state TypeORM keeps is
 * put right after SQLite ended a transaction by itself, and a request that waits for the
 * connection longer than DB_QUERY_TIMEOUT_MS answers 503.
 */
describeOnSqlite('the SQLite connection gate', () => {
  let app: NestExpressApplication;
  let dataSource: DataSource;
  let alice: CreatedUser;

  beforeAll(async () => {
    app = await createTestApp();
    await app.init();
    dataSource = app.get(DataSource);
    alice = await createUser(app);
  });
  afterAll(async () => {
    await app.close();
  });

  it('a transaction that SQLite already ended does not leave the next one a stray savepoint', async () => {
    const now = new Date();
    const row = (title: string) => ({
      title,
      content: null,
      status: 'pending' as const,
      owner_id: alice.user.id,
      created_at: now,
      updated_at: now,
      version: 1,
    });
    // the transaction is ended behind TypeORM's back: its COMMIT and ROLLBACK then both fail
    await expect(
      dataSource.transaction(async (manager) => {
        await manager.getRepository(Todo).insert(row('gate-ended'));
        await manager.query('ROLLBACK');
      }),
    ).rejects.toThrow();
    await expect(
      dataSource.transaction(async (manager) => {
        await manager.getRepository(Todo).insert(row('gate-next-rolled-back'));
        throw new Error('rolled back on purpose');
      }),
    ).rejects.toThrow('rolled back on purpose');
    await dataSource.transaction((manager) => manager.getRepository(Todo).insert(row('gate-next-committed')));
    const titles = (await dataSource.getRepository(Todo).find({ where: {} })).map((t) => t.title).filter((t) => t.startsWith('gate-'));
    expect(titles).toEqual(['gate-next-committed']);
    const connection = (dataSource.driver as unknown as { databaseConnection: { inTransaction: boolean } }).databaseConnection;
    expect(connection.inTransaction).toBe(false);
  });

  it('a transaction SQLite ended by itself under a savepoint (a nested transaction failing) gives the connection up', async () => {
    const now = new Date();
    const row = (title: string) => ({
      title,
      content: null,
      status: 'pending' as const,
      owner_id: alice.user.id,
      created_at: now,
      updated_at: now,
      version: 1,
    });
    await expect(
      dataSource.transaction(async (outer) => {
        await outer.getRepository(Todo).insert(row('gate-outer'));
        await outer.transaction(async (inner) => {
          await inner.getRepository(Todo).insert(row('gate-inner'));
          // what SQLITE_FULL or SQLITE_IOERR may do: the whole transaction is gone, savepoints included
          await inner.query('ROLLBACK');
          throw new Error('the disk is full');
        });
      }),
    ).rejects.toThrow('the disk is full');
    // the connection is free again: a plain write and a transaction of others go through at once
    await dataSource.getRepository(Todo).insert(row('gate-after-plain'));
    await dataSource.transaction((manager) => manager.getRepository(Todo).insert(row('gate-after-committed')));
    const titles = (await dataSource.getRepository(Todo).find({ where: {} }))
      .map((t) => t.title)
      .filter((t) => t.startsWith('gate-') && t !== 'gate-next-committed');
    expect(titles.sort()).toEqual(['gate-after-committed', 'gate-after-plain']);
  });

  it('a request that waits for the connection longer than DB_QUERY_TIMEOUT_MS (5 s here) gets 503 with Retry-After', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const holder = dataSource.transaction(async (manager) => {
      await manager.query('SELECT 1');
      await held;
    });
    await sleep(10);
    const response = await request(app.getHttpServer()).get('/v1/todos').set('Authorization', bearer(alice.token));
    release();
    await holder;
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('5');
    expect(response.body).toEqual(errorBody('service_unavailable'));
    const after = await request(app.getHttpServer()).get('/v1/todos').set('Authorization', bearer(alice.token));
    expect(after.status).toBe(200);
  });
});
