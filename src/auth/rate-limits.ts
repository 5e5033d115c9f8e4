import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import type { Env } from '../config/env.validation.js';

/**
 * Every request-rate limit of the service, declared here and nowhere else (docs/limits.md#rates).
 * Each request is counted in exactly ONE policy, chosen by {@link choosePolicy}: a costly
 * operation (an argon2id hash) in its own tighter policy, else by who is calling — an API key per
 * key, an authenticated user per user (bearer token, cookie session and OAuth token share one
 * budget), anyone else per client address. Windows are fixed and start at a partition's first
 * request; a partition over its quota is refused until its window ends.
 */

/** The name of a policy: also its name in `RateLimit-Policy`/`RateLimit` and its `limiter` label in the metrics. */
export type RatePolicyName = 'api_key' | 'user' | 'anonymous' | 'registration' | 'sign_in' | 'password_change';

/** The policies a handler can opt into with {@link RateLimit}: the costly operations. */
export type CostlyPolicyName = 'registration' | 'sign_in' | 'password_change';

/** What a policy counts per: the API key, the authenticated user, or the client address (`req.ip`, TRUST_PROXY-aware). */
export type Partition = 'api_key' | 'user' | 'address';

/** One policy: `quota` requests per `windowSeconds`, counted per `partition`. */
export interface RatePolicy {
  name: RatePolicyName;
  quota: number;
  windowSeconds: number;
  partition: Partition;
  /** The environment variable setting `quota`. */
  variable: QuotaVariable;
}

/** The environment variables of the quotas (each an integer 1-1,000,000, validated in env.validation.ts). */
export type QuotaVariable =
  | 'RATE_LIMIT_PER_MINUTE'
  | 'RATE_LIMIT_USER_PER_MINUTE'
  | 'RATE_LIMIT_ANONYMOUS_PER_MINUTE'
  | 'RATE_LIMIT_REGISTRATIONS_PER_HOUR'
  | 'RATE_LIMIT_SIGN_INS_PER_MINUTE'
  | 'RATE_LIMIT_PASSWORD_CHANGES_PER_HOUR';

/** The windows of the policies, in seconds; the quotas come from the environment. */
const WINDOWS: Record<RatePolicyName, number> = {
  api_key: 60,
  user: 60,
  anonymous: 60,
  registration: 3600,
  sign_in: 60,
  password_change: 3600,
};

const VARIABLES: Record<RatePolicyName, QuotaVariable> = {
  api_key: 'RATE_LIMIT_PER_MINUTE',
  user: 'RATE_LIMIT_USER_PER_MINUTE',
  anonymous: 'RATE_LIMIT_ANONYMOUS_PER_MINUTE',
  registration: 'RATE_LIMIT_REGISTRATIONS_PER_HOUR',
  sign_in: 'RATE_LIMIT_SIGN_INS_PER_MINUTE',
  password_change: 'RATE_LIMIT_PASSWORD_CHANGES_PER_HOUR',
};

const PARTITIONS: Record<RatePolicyName, Partition> = {
  api_key: 'api_key',
  user: 'user',
  anonymous: 'address',
  registration: 'address',
  sign_in: 'address',
  password_change: 'user',
};

/**
 * The six policies with their quotas read from the validated environment `env` (the
 * `RATE_LIMIT_*` variables, each 1-1,000,000). Returns them by name.
 */
export function ratePolicies(env: Pick<Env, QuotaVariable>): Record<RatePolicyName, RatePolicy> {
  const names = Object.keys(WINDOWS) as RatePolicyName[];
  return Object.fromEntries(
    names.map((name) => [name, { name, quota: env[VARIABLES[name]], windowSeconds: WINDOWS[name], partition: PARTITIONS[name], variable: VARIABLES[name] }]),
  ) as Record<RatePolicyName, RatePolicy>;
}

/** Metadata of {@link RateLimit}: the costly policy and, optionally, when it applies. */
export interface CostlyRule {
  policy: CostlyPolicyName;
  /** Takes the request (its parsed body); true when the request does the costly work. Absent: always. */
  when?: (req: { body?: unknown }) => boolean;
}

/** Metadata key of {@link RateLimit} (a {@link CostlyRule}), read by the RateLimitGuard. */
export const RATE_LIMIT_RULE = 'resource-api:rate-limit-rule';
/** Metadata key of {@link SkipRateLimit}, read by the RateLimitGuard. */
export const SKIP_RATE_LIMIT = 'resource-api:skip-rate-limit';
/** OpenAPI extension set by {@link SkipRateLimit}: the document gives the operation no 429 and no rate-limit headers (removed from the output). */
export const NO_RATE_LIMIT_EXTENSION = 'x-no-rate-limit';

/**
 * Counts an operation in the costly policy `policy` (its own tighter budget, instead of the
 * caller's general one) — always, or only when `when(req)` is true (e.g. a user update that sets
 * a password). See docs/limits.md#rates.
 */
export const RateLimit = (policy: CostlyPolicyName, when?: CostlyRule['when']) => SetMetadata(RATE_LIMIT_RULE, { policy, when } satisfies CostlyRule);

/**
 * Exempts a controller or operation from every request-rate limit: health probes and metrics
 * scrapes, which must answer whoever asks how often (docs/limits.md#rates).
 */
export const SkipRateLimit = () => applyDecorators(SetMetadata(SKIP_RATE_LIMIT, true), ApiExtension(NO_RATE_LIMIT_EXTENSION, true));

/** True when a JSON body sets `password` (a password change: an argon2id hash). */
export const setsPassword = (req: { body?: unknown }): boolean =>
  typeof req.body === 'object' && req.body !== null && !Array.isArray(req.body) && (req.body as Record<string, unknown>).password !== undefined;

/**
 * Picks the one policy a request is counted in: the handler's costly `rule` when it applies,
 * else `api_key` for an API-key caller, `user` for another authenticated caller, `anonymous`
 * without a caller (`scheme` undefined: a public operation).
 */
export function choosePolicy(rule: CostlyRule | undefined, req: { body?: unknown }, scheme: 'bearer' | 'api_key' | 'session' | undefined): RatePolicyName {
  if (rule && (!rule.when || rule.when(req))) return rule.policy;
  if (scheme === 'api_key') return 'api_key';
  return scheme === undefined ? 'anonymous' : 'user';
}
