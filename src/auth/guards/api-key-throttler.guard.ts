import { type ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerLimitDetail } from '@nestjs/throttler';
import { ApiException } from '../../common/errors/api-exception.js';
import { countRefusal } from '../../observability/metrics/registry.js';
import type { AuthUser } from '../auth-user.js';

/**
 * Rate limit per API key (SPEC §7): RATE_LIMIT_PER_MINUTE requests per key per minute, counted by
 * @nestjs/throttler keyed by the key's id (not the client address). Runs after authentication and
 * only for API-key requests. Every API-key response carries `RateLimit-Limit`,
 * `RateLimit-Remaining` and `RateLimit-Reset` (seconds); over the limit → 429 `rate_limited` with
 * `Retry-After` (seconds). The throttler is named `default`, so the headers have no name suffix.
 */
@Injectable()
export class ApiKeyThrottlerGuard extends ThrottlerGuard {
  protected override headerPrefix = 'RateLimit';

  protected override async shouldSkip(context: ExecutionContext): Promise<boolean> {
    return context.switchToHttp().getRequest<{ user?: AuthUser }>().user?.scheme !== 'api_key';
  }

  protected override async getTracker(req: Record<string, any>): Promise<string> {
    return `api-key:${(req.user as AuthUser).apiKeyId}`;
  }

  /** One budget per key across all operations (the default key adds the controller and handler names). */
  protected override generateKey(_context: ExecutionContext, tracker: string, name: string): string {
    return `${name}:${tracker}`;
  }

  protected override async throwThrottlingException(context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    countRefusal('api_key');
    const res = context.switchToHttp().getResponse<{ setHeader(name: string, value: string): void }>();
    res.setHeader('RateLimit-Limit', String(detail.limit));
    res.setHeader('RateLimit-Remaining', '0');
    res.setHeader('RateLimit-Reset', String(detail.timeToBlockExpire));
    throw new ApiException(429, `rate limit of ${detail.limit} requests per minute for this API key exceeded`, undefined, {
      'Retry-After': String(detail.timeToBlockExpire),
    });
  }
}
