import { Controller, Get, Header, ServiceUnavailableException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { type HealthCheckResult, HealthCheckService, type HealthIndicatorResult } from '@nestjs/terminus';
import { SkipRateLimit } from '../auth/rate-limits.js';
import { Public } from '../common/caller/public.decorator.js';
import { ApiException, type ErrorDetail } from '../common/errors/api-exception.js';
import { ErrorResp } from '../common/errors/error-resp.js';
import { NoDatabase } from '../common/openapi/api-errors.decorator.js';
import type { Env } from '../config/env.validation.js';
import { DATABASE_RETRY_AFTER_SECONDS } from '../database/database-errors.js';
import { GracefulShutdown } from './graceful-shutdown.js';
import { LivenessResponse, ReadinessCheckResponse, ReadinessResponse } from './health.response.js';
import { ReadinessChecks } from './readiness-checks.js';

const REQUEST_ID = '3f2c9a1e-7d4b-4f0e-9a51-2c8d7e6b1a90';

/**
 * `/health/live` and `/health/ready` (docs/operations.md#health): unversioned, public (no credential), never
 * rate-limited, never cached. For load balancers and orchestrators: "live" restarts a dead
 * process, "ready" takes an instance out of rotation.
 */
@ApiTags('health')
@ApiExtraModels(ReadinessCheckResponse)
@Public()
@SkipRateLimit()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly checks: ReadinessChecks,
    private readonly shutdown: GracefulShutdown,
    private readonly config: ConfigService<Env, true>,
  ) {}

  /** 200 `{status: "ok"}` while the process runs and serves HTTP; touches no dependency. */
  @Get('live')
  @Header('Cache-Control', 'no-store')
  @NoDatabase()
  @ApiOperation({
    operationId: 'getLiveness',
    summary: 'Liveness: the process is up',
    description: 'Always 200 while the process serves HTTP; checks no dependency. Public, not rate-limited.',
  })
  @ApiOkResponse({ type: LivenessResponse, description: 'The process is up.' })
  live(): LivenessResponse {
    return { status: 'ok' };
  }

  /**
   * 200 with the process's ROLE and each check's result when every dependency answers within
   * HEALTH_CHECK_TIMEOUT_MS (a worker's LISTEN connection is one: `webhook_listener`).
   * @throws 503 `service_unavailable` with `Retry-After`: while shutting down, or naming each
   *   failed dependency in `details` (`{field: "database", message: "no answer within 2000 ms"}`).
   */
  @Get('ready')
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    operationId: 'getReadiness',
    summary: 'Readiness: the dependencies answer',
    description:
      'Checks every dependency (the database; more when configured; on a ROLE=worker process its LISTEN connection, `webhook_listener`) in parallel, each within HEALTH_CHECK_TIMEOUT_MS. 200 with the process role when all answer; 503 when one does not (named in `details`) or the process is shutting down (from the first moment of SIGTERM). Public, not rate-limited.',
  })
  @ApiOkResponse({ type: ReadinessResponse, description: 'Every dependency answers: route traffic here.' })
  @ApiResponse({
    status: 503,
    type: ErrorResp,
    description:
      'Not ready: a dependency does not answer (each one named in `details`, `field` = the dependency), or the process is shutting down. Take the instance out of rotation; retry after `Retry-After` seconds.',
    example: {
      error: 'not ready: database unavailable',
      code: 'service_unavailable',
      details: [{ field: 'database', message: 'no answer within 2000 ms' }],
      request_id: REQUEST_ID,
    },
  })
  async ready(): Promise<ReadinessResponse> {
    if (this.shutdown.isShuttingDown) throw this.unavailable('not ready: shutting down');
    const timeoutMs = this.config.get('HEALTH_CHECK_TIMEOUT_MS', { infer: true });
    let result: HealthCheckResult;
    try {
      result = await this.health.check(this.checks.indicatorFunctions(timeoutMs));
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      result = error.getResponse() as HealthCheckResult;
    }
    if (result.status === 'shutting_down' || this.shutdown.isShuttingDown) throw this.unavailable('not ready: shutting down');
    const down = Object.entries(result.error ?? {}) as Array<[string, HealthIndicatorResult[string]]>;
    if (result.status === 'error' || down.length > 0) {
      const details: ErrorDetail[] = down.map(([name, detail]) => ({ field: name, message: this.reason(detail, timeoutMs) }));
      throw this.unavailable(`not ready: ${down.map(([name]) => name).join(', ')} unavailable`, details);
    }
    const checks: Record<string, ReadinessCheckResponse> = {};
    for (const [name, detail] of Object.entries(result.details)) {
      checks[name] = { status: 'up', response_time_ms: Number(detail.responseTime ?? 0) };
    }
    return { status: 'ok', role: this.config.get('ROLE', { infer: true }), checks };
  }

  /** A safe reason for a failed check: terminus' messages may quote the driver, which a 5xx body never does (docs/errors.md#the-body). */
  private reason(detail: HealthIndicatorResult[string], timeoutMs: number): string {
    return /^timeout of \d+ms exceeded$/.test(String(detail.message)) ? `no answer within ${timeoutMs} ms` : 'unreachable or failing';
  }

  private unavailable(message: string, details?: ErrorDetail[]): ApiException {
    return new ApiException(503, message, details, { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) });
  }
}
