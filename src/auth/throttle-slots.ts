import { ApiException } from '../common/errors/api-exception.js';
import { countRefusal, type Limiter } from '../observability/metrics/registry.js';
import type { SharedStore } from '../store/shared-store.js';
import type { Slot } from '../store/slots.js';

/**
 * Takes one slot in each of `slots` in the {@link SharedStore} (all or none, before the work they
 * limit), for the mail throttles (docs/authentication.md#password-reset,
 * docs/authentication.md#e-mail-verification).
 * @throws 429 `rate_limited` `too many <what>; try again in N s` with `Retry-After`, counted as a
 *   refusal of `limiter`, when a counter is full; 503 when the store is unavailable.
 */
export async function acquireOrRefuse(store: SharedStore, slots: Slot[], limiter: Limiter, what: string): Promise<void> {
  const outcome = await store.acquire(slots);
  if (!outcome.acquired) {
    countRefusal(limiter);
    const retryAfter = Math.max(1, Math.ceil(outcome.retryAfterMs / 1000));
    throw new ApiException(429, `too many ${what}; try again in ${retryAfter} s`, undefined, { 'Retry-After': String(retryAfter) });
  }
}
