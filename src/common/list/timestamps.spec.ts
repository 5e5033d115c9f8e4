import { describe, expect, it } from '@jest/globals';
import { toIso } from './timestamps.js';

/** What `toIso` answered before it rewrote TypeORM's text: the instant parsed as UTC, then formatted. */
const parsed = (text: string): string => new Date(`${text.replace(' ', 'T')}Z`).toISOString();

describe('toIso', () => {
  it('gives the parsed instant for TypeORM text of 100,000 random instants between 1970 and 2100', () => {
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 100_000; i++) {
      const text = new Date(Math.floor(random() * 4_102_444_800_000)).toISOString().replace('T', ' ').replace('Z', '');
      expect(toIso(text)).toBe(parsed(text));
    }
  });

  it('parses what the rewrite cannot vouch for: days 29–31, other precisions', () => {
    for (const text of ['2024-02-29 23:59:59.999', '2023-02-29 00:00:00.000', '2026-04-31 12:00:00.000', '2026-01-31 00:00:00.5', '2026-01-02 03:04:05']) {
      expect(toIso(text)).toBe(parsed(text));
    }
  });

  it('passes Dates, null and undefined through as before', () => {
    expect(toIso(new Date(Date.UTC(2026, 10, 27, 10, 0, 0, 7)))).toBe('2026-11-27T10:00:00.007Z');
    expect(toIso(null)).toBeNull();
    expect(toIso(undefined)).toBeUndefined();
  });
});
