import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Env } from '../config/env.validation.js';
import { SharedStore } from '../store/shared-store.js';

/**
 * The access-token deny list (SPEC §3), kept in the {@link SharedStore} so a logout or a deletion
 * on one instance is seen by all (SPEC §10):
 * - a `jti` denied at logout stays denied until the token's own `exp`, then drops out;
 * - a deleted user's tokens (SPEC §6 "DELETE removes the user's … tokens"): every access token of
 *   that user issued up to the deletion is denied for ACCESS_TOKEN_TTL, the longest any of them
 *   can still be valid.
 * Both are bounded by the tokens issued in one ACCESS_TOKEN_TTL. Fails closed: when the store is
 * unavailable the methods reject with 503 `service_unavailable`, and a bearer request is refused
 * rather than let through unchecked.
 */
@Injectable()
export class TokenDenyList {
  private readonly accessTokenTtlMs: number;

  constructor(
    private readonly store: SharedStore,
    config: ConfigService<Env, true>,
  ) {
    this.accessTokenTtlMs = config.get('ACCESS_TOKEN_TTL', { infer: true }) * 1000;
  }

  /** Denies `jti` until `expiresAt` (Unix seconds, the token's `exp`). @throws 503 when the store is unavailable. */
  async deny(jti: string, expiresAt: number): Promise<void> {
    const ttlMs = expiresAt * 1000 - Date.now();
    if (ttlMs > 0) await this.store.set(`deny:${jti}`, '1', ttlMs);
  }

  /**
   * Denies every access token of `userId` issued up to now (`iat` ≤ this second), for as long as
   * such a token can be valid. @throws 503 when the store is unavailable.
   */
  async denyUser(userId: number): Promise<void> {
    await this.store.set(`deny-user:${userId}`, String(Math.floor(Date.now() / 1000)), this.accessTokenTtlMs + 1000);
  }

  /**
   * True while `jti` is denied, or the token (of `claims.user_id`, issued at `claims.iat`, Unix
   * seconds) was issued before its user was deleted. One store round trip. @throws 503 when the
   * store is unavailable.
   */
  async isDenied(jti: string, claims?: { user_id: number; iat: number }): Promise<boolean> {
    const [denied, userDeniedUpTo] = await this.store.getMany(claims ? [`deny:${jti}`, `deny-user:${claims.user_id}`] : [`deny:${jti}`]);
    if (denied !== null) return true;
    return claims !== undefined && userDeniedUpTo != null && claims.iat <= Number(userDeniedUpTo);
  }
}
