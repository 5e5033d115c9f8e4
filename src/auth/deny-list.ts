import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Env } from '../config/env.validation.js';
import { SharedStore } from '../store/shared-store.js';

/** A `deny-user:` stamp below this is in Unix seconds (older releases), not epoch milliseconds. */
const LEGACY_SECONDS_BELOW = 100_000_000_000;

/** What the deny list needs of a verified access token (see AccessTokenPayload). */
export interface DenyCheckClaims {
  jti: string;
  user_id: number;
  fid: string;
  /** Issued at, Unix seconds. */
  iat: number;
  /** Issued at, epoch milliseconds (the service's tokens carry it); absent in older tokens. */
  iat_ms?: number;
}

/**
 * When a token's authority was read, in epoch ms: its `iat_ms` claim when present and consistent
 * with `iat`, else the start of its `iat` second (the earliest it can have been issued, so an
 * older token is judged conservatively).
 */
export function issuedAtMs(claims: Pick<DenyCheckClaims, 'iat' | 'iat_ms'>): number {
  const ms = claims.iat_ms;
  return typeof ms === 'number' && Number.isSafeInteger(ms) && Math.floor(ms / 1000) === claims.iat ? ms : claims.iat * 1000;
}

/**
 * The issue-time claims of an access token whose authority (user, role) was read at `readAtMs`
 * (epoch ms, taken BEFORE the read): `iat` (seconds) and `iat_ms`. Dating the token by the read
 * rather than by signing is what makes a token built from state older than a not-before stamp
 * fall before it ({@link TokenDenyList.revokeUser}).
 */
export function issuedAtClaims(readAtMs: number): { iat: number; iat_ms: number } {
  return { iat: Math.floor(readAtMs / 1000), iat_ms: readAtMs };
}

/**
 * The access-token deny list (docs/authentication.md#logging-out-and-the-deny-list: authority is current), kept in the {@link SharedStore} so
 * a revocation on one instance is seen by all (docs/operations.md#several-instances-and-redis). Three kinds of entry, all read in ONE
 * store round trip per request ({@link isDenied}) and each kept only as long as a token it
 * denies can still be valid (ACCESS_TOKEN_TTL), so the list is bounded by the tokens issued in one
 * ACCESS_TOKEN_TTL:
 * - `deny:<jti>` — one token, denied at logout until its own `exp`;
 * - `deny-user:<id>` — a not-before stamp (epoch ms): every token of the user whose authority was
 *   read at or before it is denied. Written when the user's role or password changes or the user
 *   is deleted; it only moves forward ({@link SharedStore.raise});
 * - `deny-fid:<fid>` — every access token of one login (refresh-token family), written when a
 *   rotated refresh token is presented again (reuse) and at logout.
 * Fails closed: when the store is unavailable the methods reject with 503 `service_unavailable`,
 * and a bearer request is refused rather than let through unchecked.
 */
@Injectable()
export class TokenDenyList {
  private readonly keepMs: number;

  constructor(
    private readonly store: SharedStore,
    config: ConfigService<Env, true>,
  ) {
    // the longest an access token lives, plus a second for the truncation of `exp` to seconds
    this.keepMs = config.get('ACCESS_TOKEN_TTL', { infer: true }) * 1000 + 1000;
  }

  /** Denies `jti` until `expiresAt` (Unix seconds, the token's `exp`). @throws 503 when the store is unavailable. */
  async deny(jti: string, expiresAt: number): Promise<void> {
    const ttlMs = expiresAt * 1000 - Date.now();
    if (ttlMs > 0) await this.store.set(`deny:${jti}`, '1', ttlMs);
  }

  /**
   * Denies every access token of `userId` whose authority was read up to now (`issuedAtMs` ≤ the
   * stamp). Call it AFTER the change is committed (a token issued from a read of the old state
   * then falls before the stamp); it returns only once the clock has passed the stamp, so a token
   * issued after the caller's response is never denied by it. Returns the stamp (epoch ms).
   * @throws 503 when the store is unavailable.
   */
  async revokeUser(userId: number): Promise<number> {
    const now = Date.now();
    const stamp = await this.store.raise(`deny-user:${userId}`, now, this.keepMs);
    while (Date.now() <= now) await new Promise((resolve) => setTimeout(resolve, 1));
    return stamp;
  }

  /** Denies every access token of the login `fid` for as long as one can be valid. @throws 503 when the store is unavailable. */
  async denyFamily(fid: string): Promise<void> {
    await this.store.set(`deny-fid:${fid}`, '1', this.keepMs);
  }

  /** True while the login `fid` is denied (see {@link denyFamily}). @throws 503 when the store is unavailable. */
  async isFamilyDenied(fid: string): Promise<boolean> {
    return (await this.store.get(`deny-fid:${fid}`)) !== null;
  }

  /**
   * True when the token is denied: its `jti`, its login (`fid`), or its authority read at or
   * before its user's not-before stamp. One store round trip. @throws 503 when the store is unavailable.
   */
  async isDenied(claims: DenyCheckClaims): Promise<boolean> {
    const [jti, user, family] = await this.store.getMany([`deny:${claims.jti}`, `deny-user:${claims.user_id}`, `deny-fid:${claims.fid}`]);
    if (jti !== null || family !== null) return true;
    if (user === null) return false;
    const stamp = Number(user);
    // a stamp in seconds (written before stamps were in ms) covers the whole of its second
    return issuedAtMs(claims) <= (stamp < LEGACY_SECONDS_BELOW ? stamp * 1000 + 999 : stamp);
  }
}
