import { type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { type HeaderSink, type LimitedRequest, RateLimiter } from '../rate-limiter.js';
import type { GuardedRoute, RouteGuard } from '../../common/guards/route-guards.js';
import { choosePolicy, type CostlyRule, RATE_LIMIT_RULE, SKIP_RATE_LIMIT } from '../rate-limits.js';

/** What a handler's metadata says, resolved once per handler. */
interface HandlerRule {
  skip: boolean;
  costly?: CostlyRule;
}

/**
 * The request-rate limit of every caller (docs/limits.md#rates), a global guard right after
 * authentication: each request is counted by the {@link RateLimiter} in the one policy
 * {@link choosePolicy} picks — the handler's costly policy (`@RateLimit(…)`), else per API key,
 * per user, or per client address — with one store round trip. Operations marked
 * `@SkipRateLimit()` (health probes, metrics) are not limited. (A request whose credential is
 * refused never gets here: the authentication guard counts it as anonymous.)
 */
@Injectable()
export class RateLimitGuard implements RouteGuard {
  private readonly rules = new Map<Function, HandlerRule>();

  constructor(
    private readonly limiter: RateLimiter,
    private readonly reflector: Reflector,
  ) {}

  /** Every operation not marked `@SkipRateLimit()`. */
  appliesTo({ handler, controller }: GuardedRoute): boolean {
    return !(this.reflector.getAllAndOverride<boolean>(SKIP_RATE_LIMIT, [handler, controller]) ?? false);
  }

  /**
   * Counts the request. Returns true (with the headers set) while within the quota.
   * @throws 429 `rate_limited` with `Retry-After` over the quota.
   */
  async canActivate(context: ExecutionContext): Promise<boolean> {
    const rule = this.ruleFor(context);
    if (rule.skip) return true;
    const http = context.switchToHttp();
    const req = http.getRequest<LimitedRequest>();
    await this.limiter.count(choosePolicy(rule.costly, req, req.user?.scheme), req, http.getResponse<HeaderSink>());
    return true;
  }

  private ruleFor(context: ExecutionContext): HandlerRule {
    const handler = context.getHandler();
    let rule = this.rules.get(handler);
    if (rule === undefined) {
      const targets = [handler, context.getClass()];
      rule = {
        skip: this.reflector.getAllAndOverride<boolean>(SKIP_RATE_LIMIT, targets) ?? false,
        costly: this.reflector.getAllAndOverride<CostlyRule>(RATE_LIMIT_RULE, targets),
      };
      this.rules.set(handler, rule);
    }
    return rule;
  }
}
