import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import type { ConfigService } from '@nestjs/config';
import type { Repository } from 'typeorm';
import type { Env } from '../config/env.validation.js';
import type { EventRecord } from './event.entity.js';
import { EventRetention, PRUNE_BATCH, PRUNE_INTERVAL_MS } from './event-retention.js';

/** A stand-in events table of `rows` ids, all older than the cutoff: find returns the next batch, delete removes it. */
function fakeRepository(rows: number) {
  let left = Array.from({ length: rows }, (_, i) => i + 1);
  const finds: Array<{ take?: number; where: unknown }> = [];
  const repository = {
    find: jest.fn(async (options: { take?: number; where: unknown }) => {
      finds.push(options);
      return left.slice(0, options.take).map((id) => ({ id }));
    }),
    delete: jest.fn(async (where: { id: { value: number[] } }) => {
      const ids = new Set(where.id.value);
      const before = left.length;
      left = left.filter((id) => !ids.has(id));
      return { affected: before - left.length, raw: [] };
    }),
  };
  // prune() runs each batch through its data source (inExclusiveBatch): on SQLite, on the data source's manager
  const dataSource = { options: { type: 'better-sqlite3' }, manager: { getRepository: () => repository } };
  Object.assign(repository, { manager: { connection: dataSource } });
  return { repository: repository as unknown as Repository<EventRecord>, finds, left: () => left.length, calls: repository };
}

const config = (days: number) => ({ get: () => days }) as unknown as ConfigService<Env, true>;

describe('EventRetention (the event log retention job)', () => {
  beforeEach(() => {
    jest.useFakeTimers({ now: Date.parse('2026-11-23T12:00:00Z') });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('deletes everything older than EVENT_RETENTION_DAYS in batches of PRUNE_BATCH, oldest first', async () => {
    const table = fakeRepository(2 * PRUNE_BATCH + 5);
    const retention = new EventRetention(table.repository, config(30));
    expect(await retention.prune()).toBe(2 * PRUNE_BATCH + 5);
    expect(table.left()).toBe(0);
    expect(table.calls.delete).toHaveBeenCalledTimes(3);
    // the cutoff: now − 30 days
    const where = table.finds[0].where as { created_at: { value: Date } };
    expect(where.created_at.value.toISOString()).toBe('2026-10-24T12:00:00.000Z');
    expect(table.finds[0]).toMatchObject({ take: PRUNE_BATCH, order: { created_at: 'ASC', id: 'ASC' } });
  });

  it('runs a minute after start, then every PRUNE_INTERVAL_MS; stops on shutdown (no run after it)', async () => {
    const table = fakeRepository(3);
    const retention = new EventRetention(table.repository, config(1));
    retention.onApplicationBootstrap();
    expect(table.calls.find).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(60_000);
    expect(table.calls.find).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(PRUNE_INTERVAL_MS);
    expect(table.calls.find).toHaveBeenCalledTimes(2);
    await retention.onApplicationShutdown();
    await jest.advanceTimersByTimeAsync(3 * PRUNE_INTERVAL_MS);
    expect(table.calls.find).toHaveBeenCalledTimes(2);
    expect(await retention.prune()).toBe(0);
  });

  it('starts no timer in an API-only process (ROLE=api): the workers prune', async () => {
    const table = fakeRepository(3);
    const apiOnly = { get: (key: string) => (key === 'ROLE' ? 'api' : 1) } as unknown as ConfigService<Env, true>;
    const retention = new EventRetention(table.repository, apiOnly);
    retention.onApplicationBootstrap();
    await jest.advanceTimersByTimeAsync(3 * PRUNE_INTERVAL_MS);
    expect(table.calls.find).not.toHaveBeenCalled();
    expect(table.left()).toBe(3);
    await retention.onApplicationShutdown();
  });

  it('a failing run is logged and retried at the next one, never thrown out of the timer', async () => {
    const table = fakeRepository(1);
    table.calls.find.mockRejectedValueOnce(new Error('database down'));
    const retention = new EventRetention(table.repository, config(1));
    retention.onApplicationBootstrap();
    await jest.advanceTimersByTimeAsync(60_000);
    expect(table.left()).toBe(1);
    await jest.advanceTimersByTimeAsync(PRUNE_INTERVAL_MS);
    expect(table.left()).toBe(0);
    await retention.onApplicationShutdown();
  });
});
