import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The one Prometheus registry of the process: everything `GET /metrics` (or the METRICS_PORT
 * server) serves. Other modules add their metrics through {@link counter}, {@link gauge} and
 * {@link histogram} — one line each, e.g. for webhook deliveries:
 *
 * ```ts
 * const deliveries = counter('webhook_deliveries_total', 'Webhook deliveries by outcome.', ['outcome']);
 * deliveries.labels('delivered').inc();
 * ```
 *
 * Label only by values from a small fixed set (an outcome, a method, a route template), never by
 * ids, URLs or user input: every distinct label value is a new series kept for the process's life.
 */
export const registry = new Registry();

/** Buckets of the duration histograms in seconds: the OpenTelemetry HTTP semantic conventions' advice (5 ms … 10 s). */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

let enabled = false;

/** True once {@link enableMetrics} ran (METRICS=true, the default): collection is on. */
export function metricsEnabled(): boolean {
  return enabled;
}

/**
 * Turns collection on (called once at start-up when METRICS is true): registers the Node runtime
 * defaults of prom-client (`process_*` CPU, memory, file descriptors; `nodejs_*` event-loop lag,
 * heap, GC durations, active handles). Idempotent. With METRICS=false it is never called: the
 * counters of this module stay at zero and nothing samples the runtime.
 */
export function enableMetrics(): void {
  if (enabled) return;
  enabled = true;
  collectDefaultMetrics({ register: registry, gcDurationBuckets: [0.001, 0.01, 0.1, 1, 2, 5] });
}

/**
 * The counter `name` of the shared registry, created on first call with `help` and `labelNames`
 * (a later call with the same name returns the same counter; its help and labels are the first
 * call's). `name` must match `[a-zA-Z_:][a-zA-Z0-9_:]*` and end in `_total`, per the Prometheus
 * naming rules. @throws Error when `name` is already a metric of another type.
 */
export function counter<L extends string = string>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
  return existing(name, Counter) ?? new Counter<L>({ name, help, labelNames, registers: [registry] });
}

/**
 * The gauge `name` of the shared registry, created on first call (same rules as {@link counter},
 * without the `_total`). `collect`, when given, runs at each scrape to set the value — the way to
 * report a queue length or a backlog without touching the hot path. @throws Error when `name` is
 * a metric of another type.
 */
export function gauge<L extends string = string>(
  name: string,
  help: string,
  labelNames: readonly L[] = [],
  collect?: (this: Gauge<L>) => void | Promise<void>,
): Gauge<L> {
  return existing(name, Gauge) ?? new Gauge<L>({ name, help, labelNames, registers: [registry], collect });
}

/**
 * The histogram `name` of the shared registry (durations in seconds, `_seconds` suffix), created
 * on first call with `buckets` (default {@link DURATION_BUCKETS}). @throws Error when `name` is a
 * metric of another type.
 */
export function histogram<L extends string = string>(
  name: string,
  help: string,
  labelNames: readonly L[] = [],
  buckets: number[] = DURATION_BUCKETS,
): Histogram<L> {
  return existing(name, Histogram) ?? new Histogram<L>({ name, help, labelNames, buckets, registers: [registry] });
}

/** The metric already registered under `name`, when it is of `type`; throws when it is of another. */
function existing<T>(name: string, type: abstract new (...args: never[]) => T): T | undefined {
  const metric = registry.getSingleMetric(name);
  if (metric === undefined) return undefined;
  if (!(metric instanceof type)) throw new Error(`metric ${name} is already registered with another type`);
  return metric as T;
}

/**
 * Which limiter refused a request with 429: a request-rate policy (docs/limits.md#rates: `api_key`,
 * `user`, `anonymous`, `registration`, `sign_in`, `password_change`), the failed-login throttle (`login`),
 * the password-reset throttle (`password_reset`, docs/authentication.md#password-reset) or the e-mail
 * verification throttle (`email_verification`, docs/authentication.md#e-mail-verification).
 */
export type Limiter = 'api_key' | 'user' | 'anonymous' | 'registration' | 'sign_in' | 'password_change' | 'login' | 'password_reset' | 'email_verification';

const LIMITERS: Limiter[] = ['api_key', 'user', 'anonymous', 'registration', 'sign_in', 'password_change', 'login', 'password_reset', 'email_verification'];
const refusals = counter(
  'rate_limit_refusals_total',
  'Requests refused with 429 by a limiter: a request-rate policy (api_key, user, anonymous, registration, sign_in, password_change) login (failed-login and two-factor throttles), password_reset (password-reset throttle) or email_verification (e-mail verification throttle).',
  ['limiter'],
);
const refusedByLimiter = Object.fromEntries(LIMITERS.map((limiter) => [limiter, refusals.labels(limiter)])) as Record<
  Limiter,
  ReturnType<typeof refusals.labels>
>;

/** Counts one 429 of `limiter` (`rate_limit_refusals_total{limiter}`); nothing while metrics are off. */
export function countRefusal(limiter: Limiter): void {
  if (enabled) refusedByLimiter[limiter].inc();
}

const redisFailures = counter(
  'redis_command_failures_total',
  'Redis commands that failed (timeout after REDIS_TIMEOUT_MS, connection lost or refused); each one answered 503 or failed open.',
);
const redisConnectionErrors = counter(
  'redis_connection_errors_total',
  'Errors the Redis client reported on its connection (failed connects and reconnects, resets).',
);

/** Counts one failed Redis command (`redis_command_failures_total`); nothing while metrics are off. */
export function countRedisFailure(): void {
  if (enabled) redisFailures.inc();
}

/** Counts one error event of the Redis connection (`redis_connection_errors_total`); nothing while metrics are off. */
export function countRedisConnectionError(): void {
  if (enabled) redisConnectionErrors.inc();
}
