import { describe, expect, it } from '@jest/globals';
import { cursorKey, decodeCursor, encodeCursor, fingerprint } from './cursor.js';
import { keysetParts } from './find-page.js';
import { preferredCount } from './list-query.js';
import type { SortKey } from './list-query.js';

const KEY = cursorKey('a shared secret of enough length!');
const FP = fingerprint(['/v1/todos', ['-created_at', '-id'], [], []]);

describe('list cursors (docs/lists.md#cursor-paging)', () => {
  it('round-trips the position and direction', () => {
    const text = encodeCursor(KEY, FP, { direction: 'after', values: ['2026-01-01 00:00:00.000', null, 42] });
    expect(text).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(decodeCursor(KEY, FP, 3, text)).toEqual({ ok: true, cursor: { direction: 'after', values: ['2026-01-01 00:00:00.000', null, 42] } });
    expect(decodeCursor(KEY, FP, 1, encodeCursor(KEY, FP, { direction: 'before', values: [7] }))).toEqual({
      ok: true,
      cursor: { direction: 'before', values: [7] },
    });
  });

  it('refuses a modified payload or MAC, another key, another fingerprint, a wrong number of values', () => {
    const text = encodeCursor(KEY, FP, { direction: 'after', values: [5] });
    const [payload, mac] = text.split('.');
    const forged = Buffer.from(JSON.stringify({ f: FP, d: 'a', v: [6] })).toString('base64url');
    expect(decodeCursor(KEY, FP, 1, `${forged}.${mac}`)).toMatchObject({ ok: false, message: expect.stringContaining('not valid') });
    expect(decodeCursor(KEY, FP, 1, `${payload}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`)).toMatchObject({ ok: false });
    expect(decodeCursor(cursorKey('another secret, another server!!'), FP, 1, text)).toMatchObject({
      ok: false,
      message: expect.stringContaining('not valid'),
    });
    expect(decodeCursor(KEY, fingerprint(['/v1/todos', ['created_at', 'id'], [], []]), 1, text)).toMatchObject({
      ok: false,
      message: expect.stringContaining('other sort or filter'),
    });
    expect(decodeCursor(KEY, FP, 2, text)).toMatchObject({ ok: false });
    for (const junk of ['', '.', 'abc', `${payload}.`, `.${mac}`, `${payload}.${mac}.x`]) expect(decodeCursor(KEY, FP, 1, junk)).toMatchObject({ ok: false });
  });
});

describe('keysetParts', () => {
  const key = (column: string, direction: 'ASC' | 'DESC'): SortKey => ({ field: column.split('.')[1], column, direction });
  const notNull = () => false;
  const noTimestamp = () => false;
  const nullable = (column: string) => column === 'u.age';
  const sql = (result: { parts: Array<{ sql: string }> }) => result.parts.map((part) => part.sql);

  it('one row-value comparison when every key goes the same way and none is nullable', () => {
    expect(keysetParts([key('t.created_at', 'DESC'), key('t.id', 'DESC')], ['x', 3], notNull, noTimestamp, false)).toEqual({
      parts: [{ sql: '(t.created_at, t.id) < (:k_0, :k_1)', nulls: [] }],
      params: { k_0: 'x', k_1: 3 },
    });
    expect(keysetParts([key('t.id', 'ASC')], [3], notNull, noTimestamp, false)).toEqual({ parts: [{ sql: 't.id > :k_0', nulls: [] }], params: { k_0: 3 } });
    expect(sql(keysetParts([key('t.created_at', 'ASC'), key('t.id', 'ASC')], ['x', 3], notNull, (c: string) => c === 't.created_at', true))).toEqual([
      '(t.created_at, t.id) > (CAST(:k_0 AS timestamptz), :k_1)',
    ]);
  });

  it('a nullable first key: the row-value comparison for the values, the NULLs as a part of their own (NULL is the largest value)', () => {
    // ascending, NULLS LAST: after a value come the larger values, then every NULL
    expect(sql(keysetParts([key('u.age', 'ASC'), key('u.id', 'ASC')], [30, 7], nullable, noTimestamp, true))).toEqual([
      '(u.age, u.id) > (:k_0, :k_1)',
      'u.age IS NULL',
    ]);
    // descending, NULLS FIRST: after a value come the smaller values only (the row-value comparison is never true for NULL)
    expect(sql(keysetParts([key('u.age', 'DESC'), key('u.id', 'DESC')], [30, 7], nullable, noTimestamp, false))).toEqual(['(u.age, u.id) < (:k_0, :k_1)']);
    expect(keysetParts([key('u.age', 'ASC'), key('u.id', 'ASC')], [30, 7], nullable, noTimestamp, false).parts[1].nulls).toEqual(['u.age']);
    // ascending from a NULL: only the NULLs with a larger id
    expect(sql(keysetParts([key('u.age', 'ASC'), key('u.id', 'ASC')], [null, 7], nullable, noTimestamp, true))).toEqual(['u.age IS NULL AND u.id > :k_1']);
    // descending from a NULL: the NULLs with a smaller id, then every value
    expect(sql(keysetParts([key('u.age', 'DESC'), key('u.id', 'DESC')], [null, 7], nullable, noTimestamp, true))).toEqual([
      'u.age IS NULL AND u.id < :k_1',
      'u.age IS NOT NULL',
    ]);
  });

  it('mixed directions: a bound on the first key the index seeks to, then the exact expansion of the ties', () => {
    expect(sql(keysetParts([key('u.name', 'ASC'), key('u.age', 'DESC'), key('u.id', 'ASC')], ['a', 3, 9], nullable, noTimestamp, false))).toEqual([
      'u.name >= :k_0 AND (u.name > :k_0 OR (u.name = :k_0 AND ((u.age <= :k_1 AND (u.age < :k_1 OR (u.age = :k_1 AND ((u.id > :k_2))))))))',
    ]);
    // descending nullable first key, ascending second: NULLs come first, so none is after a value
    expect(sql(keysetParts([key('u.age', 'DESC'), key('u.name', 'ASC'), key('u.id', 'DESC')], [30, 'b', 4], nullable, noTimestamp, false))).toEqual([
      'u.age <= :k_0 AND (u.age < :k_0 OR (u.age = :k_0 AND ((u.name >= :k_1 AND (u.name > :k_1 OR (u.name = :k_1 AND ((u.id < :k_2))))))))',
    ]);
  });
});

describe('preferredCount (RFC 7240)', () => {
  it.each([
    ['count=exact', 'exact'],
    ['count=estimated', 'estimated'],
    ['COUNT=None', 'none'],
    ['respond-async, count="none"', 'none'],
    ['count=none; foo=bar', 'none'],
    [['handling=lenient', 'count=estimated'], 'estimated'],
    ['count=bogus', undefined],
    ['counter=none', undefined],
    [undefined, undefined],
  ] as Array<[string | string[] | undefined, string | undefined]>)('%j → %s', (prefer, mode) => {
    expect(preferredCount(prefer)).toBe(mode);
  });
});
