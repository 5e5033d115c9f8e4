import { describe, expect, it } from '@jest/globals';
import { ApiException } from '../common/errors/api-exception.js';
import {
  callerScope,
  canonicalJson,
  openRecord,
  parseIdempotencyKey,
  requestFingerprint,
  sealRecord,
  storeKeys,
  type StoredResponse,
} from './idempotency-key.js';

/** The status and detail field of what `fn` throws. */
function thrown(fn: () => unknown): { status: number; fields: string[] } {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiException);
    const e = error as ApiException;
    return { status: e.getStatus(), fields: (e.details ?? []).map((detail) => detail.field) };
  }
  throw new Error('nothing thrown');
}

describe('parseIdempotencyKey', () => {
  it('is undefined without the header, the value with it (any case of the name)', () => {
    expect(parseIdempotencyKey(['Content-Type', 'application/json'])).toBeUndefined();
    expect(parseIdempotencyKey(['idempotency-KEY', ' 8e03978e-40d5 '])).toBe('8e03978e-40d5');
  });

  it('takes 1-255 printable ASCII characters, spaces and quotes included', () => {
    expect(parseIdempotencyKey(['Idempotency-Key', 'a'])).toBe('a');
    expect(parseIdempotencyKey(['Idempotency-Key', '"a b"~'])).toBe('"a b"~');
    expect(parseIdempotencyKey(['Idempotency-Key', 'k'.repeat(255)])).toHaveLength(255);
  });

  it.each([
    ['empty', ['Idempotency-Key', '']],
    ['white space only', ['Idempotency-Key', '   ']],
    ['256 characters', ['Idempotency-Key', 'k'.repeat(256)]],
    ['Latin-1', ['Idempotency-Key', 'caf\u00e9']],
    ['a control character', ['Idempotency-Key', 'a\u0001b']],
    ['sent twice', ['Idempotency-Key', 'a', 'idempotency-key', 'a']],
  ])('refuses %s with 400 naming the header', (_name, raw) => {
    expect(thrown(() => parseIdempotencyKey(raw))).toEqual({ status: 400, fields: ['Idempotency-Key'] });
  });
});

describe('canonicalJson and requestFingerprint', () => {
  it('sorts object keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null } })).toBe('{"a":{"c":null,"d":[2,1]},"b":1}');
    expect(canonicalJson(undefined)).toBe('');
  });

  it('is equal for the same method, path and JSON, different for any other', () => {
    const base = requestFingerprint('POST', '/v1/todos', { title: 'a', status: 'done' });
    expect(requestFingerprint('post', '/v1/todos', { status: 'done', title: 'a' })).toBe(base);
    expect(requestFingerprint('POST', '/v2/todos', { title: 'a', status: 'done' })).not.toBe(base);
    expect(requestFingerprint('POST', '/v1/todos?x=1', { title: 'a', status: 'done' })).not.toBe(base);
    expect(requestFingerprint('PATCH', '/v1/todos', { title: 'a', status: 'done' })).not.toBe(base);
    expect(requestFingerprint('POST', '/v1/todos', { title: 'b', status: 'done' })).not.toBe(base);
    expect(requestFingerprint('POST', '/v1/todos', [{ title: 'a', status: 'done' }])).not.toBe(base);
  });
});

describe('callerScope', () => {
  it('separates users, API keys, OAuth clients and anonymous addresses', () => {
    expect(callerScope({ id: 7 }, '10.0.0.1')).toBe('user:7');
    expect(callerScope({ id: 7, apiKeyId: 3 }, '10.0.0.1')).toBe('key:3');
    expect(callerScope({ id: 7, clientId: 'app' }, '10.0.0.1')).toBe('oauth:app:7');
    expect(callerScope(undefined, '10.0.0.1')).toBe('anon:10.0.0.1');
  });
});

describe('storeKeys, sealRecord and openRecord', () => {
  const record: StoredResponse = { fingerprint: 'f', headers: { Location: '/v1/api-keys/1' }, body: '{"key":"rak_secret_value"}' };

  it('names records by a hash: neither scope nor key is readable', () => {
    const names = storeKeys('user:7', 'my-key');
    expect(names.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(names.lock).toBe(`idempotency:lock:${names.digest}`);
    expect(storeKeys('user:8', 'my-key').digest).not.toBe(names.digest);
  });

  it('round-trips only with the same scope and key; the sealed text shows nothing of the body', () => {
    const sealed = sealRecord(record, 'user:7', 'my-key');
    expect(Buffer.from(sealed, 'base64url').toString('latin1')).not.toContain('rak_secret_value');
    expect(openRecord(sealed, 'user:7', 'my-key')).toEqual(record);
    expect(openRecord(sealed, 'user:7', 'other-key')).toBeNull();
    expect(openRecord(sealed, 'user:8', 'my-key')).toBeNull();
    expect(openRecord('not sealed', 'user:7', 'my-key')).toBeNull();
    expect(sealRecord(record, 'user:7', 'my-key')).not.toBe(sealed);
  });
});
