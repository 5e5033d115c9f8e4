import { describe, expect, it } from '@jest/globals';
import { applyHit, type WindowState } from './rate-window.js';

/** Runs hits at the given times (ms) from an empty state; returns each outcome. */
function run(times: number[], windowMs: number, limit: number, blockMs: number) {
  let state: WindowState | undefined;
  return times.map((now) => {
    const result = applyHit(state, now, windowMs, limit, blockMs);
    state = result.state;
    return result.outcome;
  });
}

describe('applyHit (fixed-window arithmetic of the rate limit and its Redis script)', () => {
  it('starts a window at the first hit and counts every hit up to the limit', () => {
    const outcomes = run([1000, 1010, 1500], 60_000, 3, 0);
    expect(outcomes).toEqual([
      { hits: 1, windowMs: 60_000, blocked: false, blockMs: 0 },
      { hits: 2, windowMs: 59_990, blocked: false, blockMs: 0 },
      { hits: 3, windowMs: 59_500, blocked: false, blockMs: 0 },
    ]);
  });

  it('blocks hit limit + 1 until the window ends when blockMs is 0, without counting refused hits', () => {
    const outcomes = run([0, 1, 2, 20_000, 30_000], 60_000, 2, 0);
    expect(outcomes[2]).toEqual({ hits: 3, windowMs: 59_998, blocked: true, blockMs: 59_998 });
    // still refused; the count stays at the hit that crossed the limit
    expect(outcomes[3]).toEqual({ hits: 3, windowMs: 40_000, blocked: true, blockMs: 40_000 });
    expect(outcomes[4]).toEqual({ hits: 3, windowMs: 30_000, blocked: true, blockMs: 30_000 });
  });

  it('opens a fresh window once the old one has ended', () => {
    const outcomes = run([0, 1, 2, 60_000, 60_001], 60_000, 2, 0);
    expect(outcomes[2].blocked).toBe(true);
    expect(outcomes[3]).toEqual({ hits: 1, windowMs: 60_000, blocked: false, blockMs: 0 });
    expect(outcomes[4]).toEqual({ hits: 2, windowMs: 59_999, blocked: false, blockMs: 0 });
  });

  it('keeps a longer block (blockMs > 0) past the end of the window', () => {
    const outcomes = run([0, 10, 59_000, 60_000, 100_009, 100_010], 60_000, 1, 100_000);
    expect(outcomes[1]).toEqual({ hits: 2, windowMs: 59_990, blocked: true, blockMs: 100_000 });
    expect(outcomes[2]).toEqual({ hits: 2, windowMs: 1_000, blocked: true, blockMs: 41_010 });
    // the window is over but the block is not: refused, with no window to report
    expect(outcomes[3]).toEqual({ hits: 0, windowMs: 0, blocked: true, blockMs: 40_010 });
    expect(outcomes[4]).toEqual({ hits: 0, windowMs: 0, blocked: true, blockMs: 1 });
    expect(outcomes[5]).toEqual({ hits: 1, windowMs: 60_000, blocked: false, blockMs: 0 });
  });

  it('blocks the 61st hit of a minute at the default limit of 60, and only that one onwards', () => {
    const outcomes = run(
      Array.from({ length: 62 }, (_, i) => i * 100),
      60_000,
      60,
      0,
    );
    expect(outcomes.slice(0, 60).every((o) => !o.blocked)).toBe(true);
    expect(outcomes[59].hits).toBe(60);
    expect(outcomes[60]).toEqual({ hits: 61, windowMs: 54_000, blocked: true, blockMs: 54_000 });
    expect(outcomes[61].blocked).toBe(true);
  });

  it('does not mutate the state it was given', () => {
    const state: WindowState = { hits: 1, windowEndsAt: 1000, blockEndsAt: 0 };
    applyHit(state, 10, 1000, 5, 0);
    expect(state).toEqual({ hits: 1, windowEndsAt: 1000, blockEndsAt: 0 });
  });
});
