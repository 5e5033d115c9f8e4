import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import type { AuthUser } from '../../src/common/caller/auth-user.js';
import { EventRecord } from '../../src/events/event.entity.js';
import { type NewEvent, type StoredEvent, toEventPayload } from '../../src/events/event-outbox.js';
import { Todo } from '../../src/todos/todo.entity.js';
import { openTestDataSource, truncateDataSource } from '../setup/database.js';
import { insertCaller, type Services, servicesOn } from './services.js';

/**
 * Service tier (no HTTP): the transactional outbox (docs/events.md) on the real database — an
 * event row is written in the writing transaction; `afterCommit` listeners run once after COMMIT
 * with the transaction's events in order, never after a rollback; an `inTransaction` listener's
 * throw rolls the write back; a rolled-back savepoint drops only its own events.
 */
describe('EventOutbox on the database', () => {
  let dataSource: DataSource;
  let services: Services;
  let alice: AuthUser;
  /** Every afterCommit call: the events it was given. */
  let commits: StoredEvent[][];
  /** Set to make the inTransaction listener throw. */
  let failInTransaction: boolean;
  let seenInTransaction: StoredEvent[];

  const event = (type: NewEvent['type'], resourceId: number): NewEvent => ({
    type,
    ownerId: alice.id,
    resourceId,
    data: { v1: { id: resourceId, v: 1 }, v2: { id: resourceId, v: 2 } },
  });
  const rows = () => dataSource.getRepository(EventRecord).find({ order: { id: 'ASC' } });

  beforeAll(async () => {
    dataSource = await openTestDataSource();
    services = servicesOn(dataSource);
    services.outbox.addListener({
      inTransaction: async (manager, stored) => {
        // the row is visible inside the transaction, before the listener returns
        expect(await manager.count(EventRecord, { where: { event_id: stored.id } })).toBe(1);
        seenInTransaction.push(stored);
        if (failInTransaction) throw new Error('listener refused');
      },
      afterCommit: (events) => {
        commits.push([...events]);
      },
    });
  });
  afterAll(() => dataSource.destroy());
  beforeEach(async () => {
    await truncateDataSource(dataSource);
    alice = await insertCaller(dataSource);
    commits = [];
    seenInTransaction = [];
    failInTransaction = false;
  });

  it('a committed write: one event row, afterCommit called once with it after COMMIT', async () => {
    const todo = (await services.todos.create({ title: 'Buy milk' }, alice)).body;
    expect(commits).toHaveLength(1);
    expect(commits[0]).toHaveLength(1);
    const [stored] = commits[0];
    expect(stored).toEqual({
      seq: expect.any(Number),
      id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
      type: 'todo.created',
      ownerId: alice.id,
      resourceId: todo.id,
      createdAt: expect.any(Date),
      data: { v1: expect.anything(), v2: expect.anything() },
    });
    expect(seenInTransaction.map((e) => e.id)).toEqual([stored.id]);
    const [row] = await rows();
    expect(row).toMatchObject({ id: stored.seq, event_id: stored.id, type: 'todo.created', owner_id: alice.id, resource_id: todo.id });
    // data in both versions' shapes, links into each version
    expect(JSON.parse(row.data_v1)).toEqual({
      ...JSON.parse(JSON.stringify(todo)),
      links: [
        { rel: 'self', href: `/v1/todos/${todo.id}` },
        { rel: 'owner', href: `/v1/users/${alice.id}` },
      ],
    });
    expect(JSON.parse(row.data_v2).links).toEqual([
      { rel: 'self', href: `/v2/todos/${todo.id}` },
      { rel: 'owner', href: `/v2/users/${alice.id}` },
    ]);
    // the stored row and the in-memory event give the same payload
    expect(toEventPayload(row, '2')).toEqual(toEventPayload(stored, '2'));
    expect(toEventPayload(stored, '1')).toEqual({
      id: stored.id,
      type: 'todo.created',
      timestamp: stored.createdAt.toISOString(),
      data: JSON.parse(row.data_v1),
    });
  });

  it('several events of one transaction come to afterCommit together, in order', async () => {
    await dataSource.transaction(async (manager) => {
      await services.outbox.append(manager, event('todo.created', 1));
      await services.outbox.append(manager, event('todo.updated', 1));
      await services.outbox.append(manager, event('todo.deleted', 1));
      expect(commits).toHaveLength(0);
    });
    expect(commits.map((events) => events.map((e) => e.type))).toEqual([['todo.created', 'todo.updated', 'todo.deleted']]);
    expect((await rows()).map((row) => row.type)).toEqual(['todo.created', 'todo.updated', 'todo.deleted']);
  });

  it('a rolled-back transaction: no row, afterCommit never called, and nothing left over for the next commit', async () => {
    await expect(
      dataSource.transaction(async (manager) => {
        await services.outbox.append(manager, event('todo.created', 1));
        throw new Error('the write failed');
      }),
    ).rejects.toThrow('the write failed');
    expect(await rows()).toEqual([]);
    expect(commits).toEqual([]);
    await services.todos.create({ title: 'next' }, alice);
    expect(commits.map((events) => events.map((e) => e.type))).toEqual([['todo.created']]);
  });

  it('an inTransaction listener that throws rolls the write back: no todo, no event, no afterCommit', async () => {
    failInTransaction = true;
    await expect(services.todos.create({ title: 'refused' }, alice)).rejects.toThrow('listener refused');
    expect(await dataSource.getRepository(Todo).count()).toBe(0);
    expect(await rows()).toEqual([]);
    expect(commits).toEqual([]);
  });

  it('a rolled-back savepoint drops only its own events; the outer commit hands over the rest', async () => {
    await dataSource.transaction(async (manager) => {
      await services.outbox.append(manager, event('todo.created', 1));
      await expect(
        manager.transaction(async (inner) => {
          await services.outbox.append(inner, event('todo.updated', 1));
          throw new Error('inner failed');
        }),
      ).rejects.toThrow('inner failed');
      await manager.transaction(async (inner) => {
        await services.outbox.append(inner, event('todo.updated', 2));
      });
    });
    expect(commits.map((events) => events.map((e) => [e.type, e.resourceId]))).toEqual([
      [
        ['todo.created', 1],
        ['todo.updated', 2],
      ],
    ]);
    expect((await rows()).map((row) => [row.type, row.resource_id])).toEqual([
      ['todo.created', 1],
      ['todo.updated', 2],
    ]);
  });

  it('append outside a transaction is a programming error: nothing is written', async () => {
    await expect(services.outbox.append(dataSource.manager, event('todo.created', 1))).rejects.toThrow('needs the entity manager of an active transaction');
    expect(await rows()).toEqual([]);
  });

  it('an afterCommit listener that throws is logged, not propagated: the committed write stands', async () => {
    services.outbox.addListener({
      afterCommit: () => {
        throw new Error('listener crashed');
      },
    });
    const todo = (await services.todos.create({ title: 'kept' }, alice)).body;
    expect(await dataSource.getRepository(Todo).count({ where: { id: todo.id } })).toBe(1);
    expect(commits).toHaveLength(1);
  });

  it('an update that publishes an article emits article.updated then article.published, v2 data with the author embedded', async () => {
    const article = (await services.articles.create({ title: 'Draft' }, alice)).body;
    commits = [];
    await services.articles.update(article.id, { status: 'published' }, alice);
    expect(commits.map((events) => events.map((e) => e.type))).toEqual([['article.updated', 'article.published']]);
    const [updated] = commits[0];
    expect(updated.data.v1).toMatchObject({ id: article.id, status: 'published', author: alice.id });
    expect(updated.data.v2).toMatchObject({
      id: article.id,
      status: 'published',
      author: { id: alice.id, username: expect.any(String), name: expect.any(String) },
    });
  });
});
