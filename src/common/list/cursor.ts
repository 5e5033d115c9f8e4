import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A value of a sort key as a cursor carries it: the column's raw value (timestamps as text). */
export type CursorValue = string | number | null;

/**
 * A decoded list cursor (docs/lists.md#cursor-paging): `after` continues forwards past the position,
 * `before` goes backwards from it; `values` are the sort-key values of the row at the position,
 * one per sort key (`id` last).
 */
export interface Cursor {
  direction: 'after' | 'before';
  values: CursorValue[];
}

/** Outcome of {@link decodeCursor}: the cursor, or why it is refused. */
export type DecodedCursor = { ok: true; cursor: Cursor } | { ok: false; message: string };

const PROCESS_KEY = randomBytes(32);

/**
 * The HMAC key of list cursors: derived from `secret` (LIST_CURSOR_SECRET, else JWT_SECRET) so
 * that every instance sharing the secret accepts the others' cursors; a per-process random key
 * when there is none (unit tests).
 */
export function cursorKey(secret: string | undefined): Buffer {
  return secret === undefined ? PROCESS_KEY : createHmac('sha256', secret).update('resource-api list cursor v1').digest();
}

/**
 * The fingerprint a cursor is bound to: a hash of the collection path, the sort keys and every
 * equality and range filter (in a canonical order), so a cursor used with other parameters is
 * recognised. Takes JSON-able parts; returns 16 bytes as base64url.
 */
export function fingerprint(parts: unknown): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 22);
}

function mac(key: Buffer, payload: string): Buffer {
  return createHmac('sha256', key).update(payload).digest();
}

/**
 * Encodes a cursor as `base64url(JSON payload).base64url(HMAC-SHA256)`: opaque to clients and
 * tamper-evident. `fp` is the {@link fingerprint} of the query it belongs to.
 */
export function encodeCursor(key: Buffer, fp: string, cursor: Cursor): string {
  const payload = Buffer.from(JSON.stringify({ f: fp, d: cursor.direction === 'after' ? 'a' : 'b', v: cursor.values })).toString('base64url');
  return `${payload}.${mac(key, payload).toString('base64url')}`;
}

/**
 * Checks and decodes a cursor made by {@link encodeCursor}: refused (with the message for the 400
 * detail on `cursor`) when it is malformed or its MAC does not match (modified, or from another
 * secret), when it was issued for another fingerprint (other sort or filters), or when it does not
 * carry `keys` values.
 */
export function decodeCursor(key: Buffer, fp: string, keys: number, text: string): DecodedCursor {
  const invalid = { ok: false as const, message: 'cursor is not valid (modified, truncated or issued by another server)' };
  const match = /^([A-Za-z0-9_-]{1,4096})\.([A-Za-z0-9_-]{43})$/.exec(text);
  if (!match) return invalid;
  const given = Buffer.from(match[2], 'base64url');
  const expected = mac(key, match[1]);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return invalid;
  let payload: { f?: unknown; d?: unknown; v?: unknown };
  try {
    payload = JSON.parse(Buffer.from(match[1], 'base64url').toString('utf8'));
  } catch {
    return invalid;
  }
  if (payload.f !== fp)
    return { ok: false, message: 'cursor was issued for other sort or filter parameters; repeat the sort and filters of the request that returned it' };
  const values = payload.v;
  if ((payload.d !== 'a' && payload.d !== 'b') || !Array.isArray(values) || values.length !== keys) return invalid;
  if (!values.every((value) => value === null || typeof value === 'string' || typeof value === 'number')) return invalid;
  return { ok: true, cursor: { direction: payload.d === 'a' ? 'after' : 'before', values: values as CursorValue[] } };
}
