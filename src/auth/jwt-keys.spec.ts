import crypto, { generateKeyPairSync, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { AccessTokenPayload, AuthUser } from '../common/caller/auth-user.js';
import type { TokenDenyList } from './deny-list.js';
import { JwtKeys } from './jwt-keys.js';
import type { UsersService } from '../users/users.service.js';

// Spied before jsonwebtoken is loaded (it takes these functions from `crypto` once, at load time),
// so every key it would build per call is counted. Everything that loads it is imported below, dynamically.
const createSecretKey = jest.spyOn(crypto, 'createSecretKey');
const createPublicKey = jest.spyOn(crypto, 'createPublicKey');
const createPrivateKey = jest.spyOn(crypto, 'createPrivateKey');
const createHmac = jest.spyOn(crypto, 'createHmac');
const { default: jsonwebtoken } = await import('jsonwebtoken');
const { JwtService } = await import('@nestjs/jwt');
const { JwtStrategy } = await import('./strategies/jwt.strategy.js');

const SECRET = 'a-test-secret-of-at-least-32-characters!';
const jwt = new JwtService();

/** An access token as AuthService issues it (`expiresIn: null`: the claims carry their own `exp`). */
function accessToken(keys: JwtKeys, claims: Partial<AccessTokenPayload> & { nbf?: number } = {}, expiresIn: number | null = 300): Promise<string> {
  const iatMs = Date.now();
  return jwt.signAsync(
    { user_id: 7, role: 'user', typ: 'access', fid: 'f1', iat: Math.floor(iatMs / 1000), iat_ms: iatMs, ...claims },
    { ...keys.signOptions, ...(expiresIn === null ? {} : { expiresIn }), jwtid: randomUUID() },
  );
}

/**
 * Runs the bearer strategy on `Authorization: Bearer <token>` both ways — through passport and
 * through authenticateBearer (what AuthenticationGuard calls) — and checks they agree: the
 * caller, or false when refused (401).
 */
async function authenticate(strategy: InstanceType<typeof JwtStrategy>, token: string): Promise<AuthUser | false> {
  const request = { headers: { authorization: `Bearer ${token}` } };
  const viaPassport = await new Promise<AuthUser | false>((resolve, reject) => {
    const run = Object.assign(Object.create(strategy) as InstanceType<typeof JwtStrategy>, {
      success: (user: AuthUser) => resolve(user),
      fail: () => resolve(false),
      error: (err: unknown) => reject(err),
    });
    run.authenticate(request as never, {});
  });
  const direct = await strategy.authenticateBearer(request as never);
  expect(direct).toEqual(viaPassport);
  return direct;
}

function strategyFor(keys: JwtKeys, denied: () => boolean = () => false): InstanceType<typeof JwtStrategy> {
  const denyList = { isDenied: async () => denied() } as unknown as TokenDenyList;
  const users = { exists: async () => true } as unknown as UsersService;
  return new JwtStrategy(keys, denyList, users);
}

function resetSpies(): void {
  for (const spy of [createSecretKey, createPublicKey, createPrivateKey, createHmac]) spy.mockClear();
}

describe('JwtKeys (docs/authentication.md#the-access-token: HS256 or RS256, algorithm pinned; keys made once at start-up)', () => {
  afterAll(() => {
    jest.restoreAllMocks();
  });

  describe('HS256', () => {
    const keys = new JwtKeys({ JWT_SECRET: SECRET });
    const strategy = strategyFor(keys);

    it('signs and verifies 1,000 tokens with the prebuilt secret key: no key object is made per call', async () => {
      resetSpies();
      const tokens = await Promise.all(Array.from({ length: 1000 }, () => accessToken(keys)));
      const users = await Promise.all(tokens.map((token) => authenticate(strategy, token)));
      expect(users.every((user) => user !== false && user.id === 7 && user.role === 'user')).toBe(true);
      expect(createSecretKey).not.toHaveBeenCalled();
      expect(createPublicKey).not.toHaveBeenCalled();
      expect(createPrivateKey).not.toHaveBeenCalled();
    });

    it('accepts a token signed with the secret as a string (tokens issued before keep working)', async () => {
      const iatMs = Date.now();
      const token = jsonwebtoken.sign({ user_id: 7, role: 'admin', typ: 'access', fid: 'f1', iat: Math.floor(iatMs / 1000), iat_ms: iatMs }, SECRET, {
        algorithm: 'HS256',
        expiresIn: 300,
        jwtid: 'j1',
      });
      expect(await authenticate(strategy, token)).toMatchObject({ id: 7, role: 'admin', jti: 'j1' });
    });

    it('refuses another secret, alg none, an expired token and a token without exp', async () => {
      const other = new JwtKeys({ JWT_SECRET: `${SECRET}-other` });
      expect(await authenticate(strategy, await accessToken(other))).toBe(false);
      const unsigned = jsonwebtoken.sign({ user_id: 7, role: 'user', typ: 'access', fid: 'f1', jti: 'j' }, '', { algorithm: 'none', expiresIn: 300 });
      expect(await authenticate(strategy, unsigned)).toBe(false);
      expect(await authenticate(strategy, await accessToken(keys, {}, -10))).toBe(false);
      const noExp = await jwt.signAsync(
        { user_id: 7, role: 'user', typ: 'access', fid: 'f1', iat: Math.floor(Date.now() / 1000) },
        { ...keys.signOptions, jwtid: 'j' },
      );
      expect(await authenticate(strategy, noExp)).toBe(false);
      expect(await authenticate(strategy, 'not-a-jwt')).toBe(false);
      expect(await strategy.authenticateBearer({ headers: { authorization: 'Bearer' } } as never)).toBe(false);
    });

    it('verifies a token seen again from the cache: one HMAC for three requests', async () => {
      const token = await accessToken(keys);
      createHmac.mockClear();
      for (let i = 0; i < 3; i += 1) expect(await authenticate(strategy, token)).toMatchObject({ id: 7 });
      // passport's path and authenticateBearer share the verifier: six verifications, one HMAC
      expect(createHmac).toHaveBeenCalledTimes(1);
    });

    it('never serves a cached verification past exp (jsonwebtoken: refused from the second exp on), nor before nbf', async () => {
      const start = Date.now();
      jest.useFakeTimers({ now: start, doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
      try {
        const exp = Math.floor(start / 1000) + 2;
        const token = await accessToken(keys, { exp }, null);
        expect(await authenticate(strategy, token)).toMatchObject({ id: 7, exp });
        jest.setSystemTime(exp * 1000 - 1);
        expect(await authenticate(strategy, token)).toMatchObject({ id: 7 });
        jest.setSystemTime(exp * 1000);
        expect(await authenticate(strategy, token)).toBe(false);
        const notYet = await accessToken(keys, { nbf: Math.floor(Date.now() / 1000) + 5 });
        expect(await authenticate(strategy, notYet)).toBe(false);
      } finally {
        jest.useRealTimers();
      }
    });

    it('asks the deny list on every request, a cached verification included', async () => {
      let denied = false;
      const guarded = strategyFor(keys, () => denied);
      const token = await accessToken(keys);
      expect(await authenticate(guarded, token)).toMatchObject({ id: 7 });
      denied = true;
      expect(await authenticate(guarded, token)).toBe(false);
    });

    it('refuses another spelling of the signature (unused low bits of its last character set)', async () => {
      const token = await accessToken(keys);
      const last = token.at(-1) as string;
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      // HS256: 32 bytes in 43 characters, the last one's two low bits unused
      const respelled = `${token.slice(0, -1)}${alphabet[alphabet.indexOf(last) ^ 1]}`;
      expect(Buffer.from(respelled.split('.')[2], 'base64url')).toEqual(Buffer.from(token.split('.')[2], 'base64url'));
      expect(await authenticate(strategy, respelled)).toBe(false);
      expect(await authenticate(strategy, token)).toMatchObject({ id: 7 });
    });
  });

  describe('RS256', () => {
    let keys: JwtKeys;
    let publicPem: string;
    beforeAll(() => {
      const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
      publicPem = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
      keys = new JwtKeys({
        JWT_SECRET: SECRET,
        JWT_PRIVATE_KEY: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        JWT_PUBLIC_KEY: publicPem,
      });
    });

    it('signs with kid and verifies with the prebuilt key pair: no key object is made per call', async () => {
      const strategy = strategyFor(keys);
      resetSpies();
      const tokens = await Promise.all(Array.from({ length: 50 }, () => accessToken(keys)));
      expect(jsonwebtoken.decode(tokens[0], { complete: true })?.header).toMatchObject({ alg: 'RS256', kid: keys.kid });
      const users = await Promise.all(tokens.map((token) => authenticate(strategy, token)));
      expect(users.every((user) => user !== false && user.id === 7)).toBe(true);
      expect(createSecretKey).not.toHaveBeenCalled();
      expect(createPublicKey).not.toHaveBeenCalled();
      expect(createPrivateKey).not.toHaveBeenCalled();
    });

    it('refuses an HS256 token signed with the public key (key confusion) and an HS256 token of the secret', async () => {
      const strategy = strategyFor(keys);
      const claims = { user_id: 7, role: 'user', typ: 'access', fid: 'f1', iat: Math.floor(Date.now() / 1000) };
      const confused = jsonwebtoken.sign(claims, crypto.createSecretKey(Buffer.from(publicPem)), { algorithm: 'HS256', expiresIn: 300, jwtid: 'j' });
      expect(await authenticate(strategy, confused)).toBe(false);
      expect(await authenticate(strategy, await accessToken(new JwtKeys({ JWT_SECRET: SECRET })))).toBe(false);
    });
  });
});
