import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { ApiException } from '../common/errors/api-exception.js';
import { MemoryStore } from '../store/memory-store.js';
import {
  ACCOUNT_WINDOW_MS,
  FAILURE_WINDOW_MS,
  LoginThrottle,
  MAX_FAILURES_PER_ACCOUNT,
  MAX_FAILURES_PER_ADDRESS,
  MAX_FAILURES_PER_USERNAME,
} from './login-throttle.js';

/** The status and `Retry-After` of what `reserve` did: 'ok', or the refusal. */
async function attempt(throttle: LoginThrottle, username: string, address: string): Promise<'ok' | { status: number; retryAfter: string | undefined }> {
  try {
    await throttle.reserve(username, address);
    return 'ok';
  } catch (error) {
    const refusal = error as ApiException;
    return { status: refusal.getStatus(), retryAfter: refusal.headers?.['Retry-After'] };
  }
}

describe('LoginThrottle (docs/authentication.md#login-throttling) on the in-process store, with a fake clock', () => {
  let store: MemoryStore;
  let throttle: LoginThrottle;
  beforeEach(() => {
    jest.useFakeTimers({ now: 1_000_000 });
    store = new MemoryStore();
    throttle = new LoginThrottle(store);
  });
  afterEach(() => {
    store.onModuleDestroy();
    jest.useRealTimers();
  });

  it('has the documented limits', () => {
    expect([MAX_FAILURES_PER_USERNAME, MAX_FAILURES_PER_ADDRESS, MAX_FAILURES_PER_ACCOUNT]).toEqual([5, 100, 100]);
    expect([FAILURE_WINDOW_MS, ACCOUNT_WINDOW_MS]).toEqual([900_000, 3_600_000]);
  });

  it('reserves at most 5 slots for 30 concurrent attempts on one username and address', async () => {
    const outcomes = await Promise.all(Array.from({ length: 30 }, () => attempt(throttle, 'alice', '10.0.0.1')));
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(5);
    expect(outcomes.filter((o) => o !== 'ok')).toEqual(Array(25).fill({ status: 429, retryAfter: '900' }));
  });

  it('limits one account to 100 failures an hour across addresses, then frees it when the hour ends', async () => {
    for (let i = 0; i < 100; i += 1) expect(await attempt(throttle, 'bob', `198.51.100.${i}`)).toBe('ok');
    jest.setSystemTime(1_000_000 + 30 * 60 * 1000);
    // from a fresh address, half an hour later: the account counter still holds
    expect(await attempt(throttle, 'bob', '203.0.113.1')).toEqual({ status: 429, retryAfter: '1800' });
    // other accounts from the same addresses are not affected
    expect(await attempt(throttle, 'carol', '198.51.100.1')).toBe('ok');
    jest.setSystemTime(1_000_000 + ACCOUNT_WINDOW_MS);
    expect(await attempt(throttle, 'bob', '203.0.113.1')).toBe('ok');
  });

  it('gives the account and address slots back on a success and resets the username counter', async () => {
    for (let i = 0; i < 4; i += 1) await throttle.reserve('dave', '10.0.0.2');
    await throttle.reserve('dave', '10.0.0.2');
    await throttle.recordSuccess('dave', '10.0.0.2');
    expect(await store.counter('login-failures:u:dave|10.0.0.2')).toBeNull();
    expect((await store.counter('login-failures:a:10.0.0.2'))!.count).toBe(4);
    expect((await store.counter('login-failures:acct:dave'))!.count).toBe(4);
    for (let i = 0; i < 5; i += 1) expect(await attempt(throttle, 'dave', '10.0.0.2')).toBe('ok');
    expect(await attempt(throttle, 'dave', '10.0.0.2')).toMatchObject({ status: 429 });
  });

  it('gives every slot back when the attempt is cancelled (an error that is not a wrong password)', async () => {
    await throttle.reserve('erin', '10.0.0.3');
    await throttle.cancel('erin', '10.0.0.3');
    for (const key of ['login-failures:u:erin|10.0.0.3', 'login-failures:a:10.0.0.3', 'login-failures:acct:erin']) {
      expect((await store.counter(key))!.count).toBe(0);
    }
  });
});
