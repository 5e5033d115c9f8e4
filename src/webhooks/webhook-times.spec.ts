import { describe, expect, it } from '@jest/globals';
import { DEFAULT_WEBHOOK_RETRY_SCHEDULE } from '../config/env.validation.js';
import { leaseMs, retryDelayMs, sqlTime } from './webhook-times.js';

describe('retryDelayMs (WEBHOOK_RETRY_SCHEDULE with ±10 % jitter)', () => {
  it('takes the schedule entry for retry n, jittered within ±10 %', () => {
    expect(retryDelayMs([5, 300], 1, 0.5)).toBe(5000);
    expect(retryDelayMs([5, 300], 2, 0)).toBe(270_000);
    expect(retryDelayMs([5, 300], 2, 0.999999)).toBe(330_000);
  });

  it('is null past the schedule: that attempt was the last', () => {
    expect(retryDelayMs([1, 1, 1], 4)).toBeNull();
    expect(retryDelayMs([1], 0)).toBeNull();
  });

  it('the default schedule lasts about three days over ten attempts', () => {
    const seconds = DEFAULT_WEBHOOK_RETRY_SCHEDULE.reduce((sum, delay) => sum + delay, 0);
    expect(DEFAULT_WEBHOOK_RETRY_SCHEDULE).toHaveLength(9);
    expect(seconds / 86_400).toBeGreaterThan(2.9);
    expect(seconds / 86_400).toBeLessThan(3.3);
  });
});

describe('leaseMs and sqlTime', () => {
  it('leases a claim for well over the attempt timeout', () => {
    expect(leaseMs(10_000)).toBe(50_000);
    expect(leaseMs(300)).toBeGreaterThan(30_000);
  });

  it('writes timestamps as each database compares them', () => {
    const at = new Date('2026-11-21T10:15:00.123Z');
    expect(sqlTime(true, at)).toBe(at);
    expect(sqlTime(false, at)).toBe('2026-11-21 10:15:00.123');
  });
});
