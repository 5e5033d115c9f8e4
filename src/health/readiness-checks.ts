import { Injectable } from '@nestjs/common';
import { type HealthIndicatorFunction, HealthIndicatorService } from '@nestjs/terminus';

/**
 * One readiness probe: resolves (any value) when the dependency can serve, throws or rejects when
 * it cannot. It gets an `AbortSignal` that fires at HEALTH_CHECK_TIMEOUT_MS; a probe still running
 * then counts as down ("no answer within … ms").
 */
export type ReadinessProbe = (options: { signal: AbortSignal }) => unknown;

const NAME = /^[a-z][a-z0-9_]{0,31}$/;

/**
 * The list of dependencies `GET /health/ready` checks (docs/operations.md#health), open to other modules:
 * the database is registered by HealthModule; a module adding a dependency imports HealthModule
 * and registers its probe once, e.g. in `onModuleInit`:
 *
 * ```ts
 * constructor(private readonly readiness: ReadinessChecks, private readonly redis: Redis) {}
 * onModuleInit() { this.readiness.register('redis', () => this.redis.ping()); }
 * ```
 *
 * Every probe runs in parallel on each readiness request through terminus
 * (`HealthIndicatorService.check(name).attempt(probe).withTimeout(ms)`); any probe down → 503
 * naming it in `details`.
 */
@Injectable()
export class ReadinessChecks {
  private readonly probes = new Map<string, ReadinessProbe>();

  constructor(private readonly indicators: HealthIndicatorService) {}

  /**
   * Adds a probe under `name` (snake_case, 1-32 of `[a-z0-9_]`, starting with a letter): the key in
   * the readiness body and the `field` of its 503 detail.
   * @throws Error for a bad or already registered name (a programming error, at start-up).
   */
  register(name: string, probe: ReadinessProbe): void {
    if (!NAME.test(name)) throw new Error(`readiness check name ${JSON.stringify(name)} must be snake_case`);
    if (this.probes.has(name)) throw new Error(`readiness check ${name} is already registered`);
    this.probes.set(name, probe);
  }

  /** The registered names, in registration order. */
  names(): string[] {
    return [...this.probes.keys()];
  }

  /** The probes as terminus indicator functions, each bounded by `timeoutMs` milliseconds. */
  indicatorFunctions(timeoutMs: number): HealthIndicatorFunction[] {
    return [...this.probes].map(
      ([name, probe]) =>
        () =>
          this.indicators
            .check(name)
            .attempt(async ({ signal }) => {
              await probe({ signal });
            })
            .withTimeout(timeoutMs),
    );
  }
}
