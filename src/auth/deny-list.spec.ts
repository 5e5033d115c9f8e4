import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import type { ConfigService } from '@nestjs/config';
import type { Env } from '../config/env.validation.js';
import { MemoryStore } from '../store/memory-store.js';
import { issuedAtClaims, issuedAtMs, TokenDenyList } from './deny-list.js';

const config = { get: () => 300 } as unknown as ConfigService<Env, true>;

describe('TokenDenyList (docs/authentication.md#logging-out-and-the-deny-list: authority is current)', () => {
  let store: MemoryStore;
  let denyList: TokenDenyList;
  const token = (iatMs: number, overrides: Partial<{ jti: string; fid: string; user_id: number }> = {}) => ({
    jti: 'j1',
    fid: 'f1',
    user_id: 7,
    ...issuedAtClaims(iatMs),
    ...overrides,
  });
  beforeEach(() => {
    jest.useFakeTimers({ now: 1_700_000_000_400, doNotFake: ['setTimeout'] });
    store = new MemoryStore();
    denyList = new TokenDenyList(store, config);
  });
  afterEach(() => {
    store.onModuleDestroy();
    jest.useRealTimers();
  });

  it('dates a token by iat_ms, or by the start of its iat second when iat_ms is absent or inconsistent', () => {
    expect(issuedAtMs({ iat: 1_700_000_000, iat_ms: 1_700_000_000_250 })).toBe(1_700_000_000_250);
    expect(issuedAtMs({ iat: 1_700_000_000 })).toBe(1_700_000_000_000);
    expect(issuedAtMs({ iat: 1_700_000_000, iat_ms: 1_600_000_000_000 })).toBe(1_700_000_000_000);
  });

  it('denies tokens read at or before the user stamp and none after it, within the same second', async () => {
    const before = token(1_700_000_000_399);
    await store.set('deny-user:7', '1700000000400', 10_000);
    expect(await denyList.isDenied(before)).toBe(true);
    expect(await denyList.isDenied(token(1_700_000_000_400))).toBe(true);
    expect(await denyList.isDenied(token(1_700_000_000_401))).toBe(false);
    expect(await denyList.isDenied(token(1_700_000_000_100, { user_id: 8 }))).toBe(false);
  });

  it('reads a stamp in seconds (older releases) as covering its whole second', async () => {
    await store.set('deny-user:7', '1700000000', 10_000);
    expect(await denyList.isDenied(token(1_700_000_000_999))).toBe(true);
    expect(await denyList.isDenied(token(1_700_000_001_000))).toBe(false);
  });

  it('revokeUser stamps now, only forward, and returns once the clock has passed the stamp', async () => {
    jest.useRealTimers();
    const stamp = await denyList.revokeUser(7);
    expect(Date.now()).toBeGreaterThan(stamp);
    expect(await denyList.isDenied(token(stamp))).toBe(true);
    expect(await denyList.isDenied(token(Date.now()))).toBe(false);
  });

  it('denies every token of a login (fid) and a single jti', async () => {
    await denyList.denyFamily('f1');
    expect(await denyList.isFamilyDenied('f1')).toBe(true);
    expect(await denyList.isDenied(token(Date.now()))).toBe(true);
    expect(await denyList.isDenied(token(Date.now(), { fid: 'f2' }))).toBe(false);
    await denyList.deny('j9', Math.floor(Date.now() / 1000) + 60);
    expect(await denyList.isDenied(token(Date.now(), { fid: 'f2', jti: 'j9' }))).toBe(true);
  });
});
