import { Injectable, type OnModuleDestroy } from '@nestjs/common';

/**
 * The access-token deny list (SPEC §3): a `jti` denied at logout stays denied until the token's
 * own `exp`, then drops out, so the list is bounded by the tokens issued in one ACCESS_TOKEN_TTL.
 * This implementation keeps it in process; the scale-out configuration replaces the provider
 * with a shared store behind the same two methods.
 */
@Injectable()
export class TokenDenyList implements OnModuleDestroy {
  private readonly denied = new Map<string, number>();
  private readonly sweeper = setInterval(() => this.sweep(), 60_000).unref();

  /** Denies `jti` until `expiresAt` (Unix seconds, the token's `exp`). */
  async deny(jti: string, expiresAt: number): Promise<void> {
    if (expiresAt * 1000 > Date.now()) this.denied.set(jti, expiresAt);
  }

  /** True while `jti` is denied. */
  async isDenied(jti: string): Promise<boolean> {
    const until = this.denied.get(jti);
    if (until === undefined) return false;
    if (until * 1000 <= Date.now()) {
      this.denied.delete(jti);
      return false;
    }
    return true;
  }

  /** Drops entries whose tokens have expired anyway. */
  sweep(now = Date.now()): void {
    for (const [jti, until] of this.denied) if (until * 1000 <= now) this.denied.delete(jti);
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
  }
}
