import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Env } from '../config/env.validation.js';
import { ApiException } from '../common/errors/api-exception.js';
import { countRefusal } from '../observability/metrics/registry.js';
import { SharedStore } from '../store/shared-store.js';
import type { AuthUser } from '../common/caller/auth-user.js';
import { type QuotaVariable, type RatePolicy, type RatePolicyName, ratePolicies } from './rate-limits.js';

/** The parts of a request the limiter reads. */
export interface LimitedRequest {
  user?: AuthUser;
  body?: unknown;
  ip?: string;
  socket?: { remoteAddress?: string };
}

/** Where the limiter writes its headers (an Express response). */
export interface HeaderSink {
  setHeader(name: string, value: string): void;
}

/** Words for the 429 message, per policy. */
const PER: Record<RatePolicyName, string> = {
  api_key: 'for this API key',
  user: 'for this user',
  anonymous: 'from this client address',
  registration: 'of registrations from this client address',
  sign_in: 'of sign-ins from this client address',
  password_change: 'of password changes for this user',
};

/**
 * Counts requests in the rate-limit policies of rate-limits.ts (docs/limits.md#rates) with ONE
 * atomic fixed-window hit in the {@link SharedStore} (Redis with several instances, else memory),
 * and writes the headers: `RateLimit-Policy: "<name>";q=<quota>;w=<window s>`,
 * `RateLimit: "<name>";r=<remaining>;t=<seconds to reset>` (draft-ietf-httpapi-ratelimit-headers-10)
 * and the earlier draft's `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (seconds).
 * Fails open: when the store does not answer the request passes uncounted (headers show the full
 * quota) and a warning is logged at most every 5 s — a limiter protects capacity; refusing
 * everyone during a Redis outage would make it an outage.
 */
@Injectable()
export class RateLimiter {
  private readonly logger = new Logger('RateLimit');
  private readonly policies: Record<RatePolicyName, RatePolicy>;
  private lastWarningAt = 0;

  constructor(
    private readonly store: SharedStore,
    config: ConfigService<Env, true>,
  ) {
    const quota = (variable: QuotaVariable) => config.get(variable, { infer: true });
    this.policies = ratePolicies({
      RATE_LIMIT_PER_MINUTE: quota('RATE_LIMIT_PER_MINUTE'),
      RATE_LIMIT_USER_PER_MINUTE: quota('RATE_LIMIT_USER_PER_MINUTE'),
      RATE_LIMIT_ANONYMOUS_PER_MINUTE: quota('RATE_LIMIT_ANONYMOUS_PER_MINUTE'),
      RATE_LIMIT_REGISTRATIONS_PER_HOUR: quota('RATE_LIMIT_REGISTRATIONS_PER_HOUR'),
      RATE_LIMIT_SIGN_INS_PER_MINUTE: quota('RATE_LIMIT_SIGN_INS_PER_MINUTE'),
      RATE_LIMIT_PASSWORD_CHANGES_PER_HOUR: quota('RATE_LIMIT_PASSWORD_CHANGES_PER_HOUR'),
    });
  }

  /**
   * Counts one request of `req` in policy `name` (partitioned by API key, user or client address,
   * `req.ip`, which honours TRUST_PROXY) and sets the five headers on `res`.
   * @throws 429 `rate_limited` with `Retry-After` (seconds until the window ends) over the quota;
   *   a refused request is not counted.
   */
  async count(name: RatePolicyName, req: LimitedRequest, res: HeaderSink): Promise<void> {
    const policy = this.policies[name];
    const windowMs = policy.windowSeconds * 1000;
    let hits = 0;
    let resetMs = windowMs;
    let blocked = false;
    try {
      const outcome = await this.store.hit(`rate:${policy.name}:${partitionKey(policy, req)}`, windowMs, policy.quota, 0);
      hits = outcome.hits;
      blocked = outcome.blocked;
      resetMs = blocked ? outcome.blockMs : outcome.windowMs;
    } catch (error) {
      this.warnFailOpen(error);
    }
    const remaining = blocked ? 0 : Math.max(0, policy.quota - hits);
    const reset = Math.max(blocked ? 1 : 0, Math.ceil(resetMs / 1000));
    res.setHeader('RateLimit-Policy', `"${policy.name}";q=${policy.quota};w=${policy.windowSeconds}`);
    res.setHeader('RateLimit', `"${policy.name}";r=${remaining};t=${reset}`);
    res.setHeader('RateLimit-Limit', String(policy.quota));
    res.setHeader('RateLimit-Remaining', String(remaining));
    res.setHeader('RateLimit-Reset', String(reset));
    if (blocked) {
      countRefusal(policy.name);
      const per = policy.windowSeconds === 3600 ? 'hour' : 'minute';
      throw new ApiException(429, `rate limit of ${policy.quota} requests per ${per} ${PER[policy.name]} exceeded; retry in ${reset} s`, undefined, {
        'Retry-After': String(reset),
      });
    }
  }

  private warnFailOpen(error: unknown): void {
    if (Date.now() - this.lastWarningAt < 5000) return;
    this.lastWarningAt = Date.now();
    this.logger.warn(`rate limiting is off while the shared store is unavailable (failing open): ${(error as Error).message}`);
  }
}

/** The partition a request counts in under `policy`: the API key's id, the user's id, or the client address. */
function partitionKey(policy: RatePolicy, req: LimitedRequest): string {
  const user = req.user;
  if (policy.partition === 'api_key' && user?.apiKeyId !== undefined) return `k${user.apiKeyId}`;
  if (policy.partition === 'user' && user !== undefined) return `u${user.id}`;
  return `a${req.ip ?? req.socket?.remoteAddress ?? 'unknown'}`;
}
