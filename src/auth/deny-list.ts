import { Injectable } from '@nestjs/common';
import { SharedStore } from '../shared-state/shared-store.js';

/**
 * The access-token deny list (SPEC §3): a `jti` denied at logout stays denied until the token's
 * own `exp`, then drops out (the entry's time to live), so the list is bounded by the tokens
 * issued in one ACCESS_TOKEN_TTL. Kept in the {@link SharedStore}, so a logout on one instance is
 * seen by all (SPEC §10). Fails closed: when the store is unavailable both methods reject with
 * 503 `service_unavailable`, and a bearer request is refused rather than let through unchecked.
 */
@Injectable()
export class TokenDenyList {
  constructor(private readonly store: SharedStore) {}

  /** Denies `jti` until `expiresAt` (Unix seconds, the token's `exp`). @throws 503 when the store is unavailable. */
  async deny(jti: string, expiresAt: number): Promise<void> {
    const ttlMs = expiresAt * 1000 - Date.now();
    if (ttlMs > 0) await this.store.set(`deny:${jti}`, '1', ttlMs);
  }

  /** True while `jti` is denied. @throws 503 when the store is unavailable. */
  async isDenied(jti: string): Promise<boolean> {
    return (await this.store.get(`deny:${jti}`)) !== null;
  }
}
