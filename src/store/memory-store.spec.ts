import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { MemoryStore } from './memory-store.js';

describe('MemoryStore (the in-process SharedStore)', () => {
  let store: MemoryStore;
  beforeEach(() => {
    jest.useFakeTimers({ now: 1_000_000 });
    store = new MemoryStore();
  });
  afterEach(() => {
    store.onModuleDestroy();
    jest.useRealTimers();
  });

  it('keeps a value for its time to live, then forgets it', async () => {
    await store.set('k', 'v', 1000);
    jest.setSystemTime(1_000_999);
    expect(await store.get('k')).toBe('v');
    jest.setSystemTime(1_001_000);
    expect(await store.get('k')).toBeNull();
  });

  it('counts in a fixed window that starts at the first increment', async () => {
    expect(await store.counter('c')).toBeNull();
    expect(await store.increment('c', 10_000)).toEqual({ count: 1, ttlMs: 10_000 });
    jest.setSystemTime(1_004_000);
    expect(await store.increment('c', 10_000)).toEqual({ count: 2, ttlMs: 6_000 });
    expect(await store.counter('c')).toEqual({ count: 2, ttlMs: 6_000 });
    jest.setSystemTime(1_010_000);
    expect(await store.counter('c')).toBeNull();
    expect(await store.increment('c', 10_000)).toEqual({ count: 1, ttlMs: 10_000 });
  });

  it('deletes keys and clears everything', async () => {
    await store.set('a', '1', 1000);
    await store.set('b', '2', 1000);
    await store.hit('h', 1000, 1, 0);
    await store.delete('a', 'missing');
    expect(await store.get('a')).toBeNull();
    expect(await store.get('b')).toBe('2');
    await store.clear();
    expect(await store.get('b')).toBeNull();
    expect((await store.hit('h', 1000, 1, 0)).hits).toBe(1);
  });

  it('sweeps expired entries and finished windows', async () => {
    await store.set('short', 'x', 100);
    await store.set('long', 'y', 100_000);
    await store.hit('h', 100, 5, 0);
    store.sweep(1_000_200);
    const sizes = store as unknown as { entries: Map<string, unknown>; windows: Map<string, unknown> };
    expect([...sizes.entries.keys()]).toEqual(['long']);
    expect(sizes.windows.size).toBe(0);
  });

  // slots and raised values

  it('acquires in all counters or none, and releases', async () => {
    const slots = [
      { key: 'x', limit: 2, windowMs: 10_000 },
      { key: 'y', limit: 1, windowMs: 20_000 },
    ];
    expect(await store.acquire(slots)).toEqual({ acquired: true });
    expect(await store.acquire(slots)).toEqual({ acquired: false, retryAfterMs: 20_000 });
    expect(await store.counter('x')).toEqual({ count: 1, ttlMs: 10_000 });
    await store.release('y');
    expect(await store.counter('y')).toEqual({ count: 0, ttlMs: 20_000 });
    expect(await store.acquire(slots)).toEqual({ acquired: true });
    expect(await store.counter('x')).toEqual({ count: 2, ttlMs: 10_000 });
  });

  it('raises a value only forward, for the time to live given', async () => {
    expect(await store.raise('s', 500, 1000)).toBe(500);
    expect(await store.raise('s', 400, 1000)).toBe(500);
    expect(await store.raise('s', 600, 1000)).toBe(600);
    jest.setSystemTime(1_001_000);
    expect(await store.get('s')).toBeNull();
    expect(await store.raise('s', 1, 1000)).toBe(1);
  });
});
