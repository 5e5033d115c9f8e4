import { describe, expect, it } from '@jest/globals';
import { applyAcquire, applyRelease, type CounterState, type Slot } from './slots.js';

const slot = (key: string, limit: number, windowMs = 1000): Slot => ({ key, limit, windowMs });

describe('applyAcquire / applyRelease (slot arithmetic of the login throttle and its Redis scripts)', () => {
  it('takes a slot in every counter, starting a window at the first one', () => {
    const { states, outcome } = applyAcquire([undefined, { count: 2, endsAt: 5000 }], 1000, [slot('a', 3, 10_000), slot('b', 3)]);
    expect(outcome).toEqual({ acquired: true });
    expect(states).toEqual([
      { count: 1, endsAt: 11_000 },
      { count: 3, endsAt: 5000 },
    ]);
  });

  it('refuses in all counters when one is full, counting nothing, with the longest wait of the full ones', () => {
    const before: CounterState[] = [
      { count: 1, endsAt: 9000 },
      { count: 3, endsAt: 4000 },
      { count: 5, endsAt: 7000 },
    ];
    const { states, outcome } = applyAcquire(before, 1000, [slot('a', 5), slot('b', 3), slot('c', 5)]);
    expect(outcome).toEqual({ acquired: false, retryAfterMs: 6000 });
    expect(states).toEqual(before);
  });

  it('opens a fresh window once the old one has ended', () => {
    const { states, outcome } = applyAcquire([{ count: 3, endsAt: 1000 }], 1000, [slot('a', 3, 500)]);
    expect(outcome).toEqual({ acquired: true });
    expect(states).toEqual([{ count: 1, endsAt: 1500 }]);
  });

  it('lets exactly `limit` of a burst through', () => {
    let states: (CounterState | undefined)[] = [undefined];
    const taken = Array.from({ length: 30 }, () => {
      const result = applyAcquire(states, 0, [slot('a', 5)]);
      states = result.states;
      return result.outcome.acquired;
    });
    expect(taken.filter(Boolean)).toHaveLength(5);
    expect(taken.slice(0, 5).every(Boolean)).toBe(true);
  });

  it('gives a slot back without going below zero or past the window', () => {
    expect(applyRelease({ count: 2, endsAt: 5000 }, 1000)).toEqual({ count: 1, endsAt: 5000 });
    expect(applyRelease({ count: 0, endsAt: 5000 }, 1000)).toEqual({ count: 0, endsAt: 5000 });
    expect(applyRelease({ count: 2, endsAt: 1000 }, 1000)).toBeUndefined();
    expect(applyRelease(undefined, 1000)).toBeUndefined();
  });
});
