import { Controller, Get, Req, Res } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ApiExcludeController } from '@nestjs/swagger';
import { SkipRateLimit } from '../../auth/rate-limits.js';
import type { Request, Response } from 'express';
import { Public } from '../../common/caller/public.decorator.js';
import { ApiException } from '../../common/errors/api-exception.js';
import type { Env } from '../../config/env.validation.js';
import { metricsAccess, type MetricsAccessConfig, scrapeVerdict } from './metrics-access.js';
import { registry } from './registry.js';

/** The 401 of a scrape without the right token: `ErrorResp` with `WWW-Authenticate: Bearer realm="metrics"`. */
export function metricsUnauthorized(): ApiException {
  return new ApiException(401, 'metrics need Authorization: Bearer <METRICS_TOKEN>', undefined, { 'WWW-Authenticate': 'Bearer realm="metrics"' });
}

/**
 * `GET /metrics` on the service's port (README.md#metrics): the Prometheus text exposition format
 * (`text/plain; version=0.0.4`) of the process's registry, `Cache-Control: no-store`. Public as
 * far as API credentials go (its own token, see {@link scrapeVerdict}), unversioned, never
 * rate-limited, not traced. Not in the OpenAPI documents: it is Prometheus's format for Prometheus,
 * not part of the JSON API, and in production it usually lives on METRICS_PORT (README "Metrics").
 * @throws 404 `not_found` (same body as an unknown route) when metrics are off, on METRICS_PORT, or
 *   in production without METRICS_TOKEN; 401 `unauthorized` without the token where one is needed.
 */
@ApiExcludeController()
@Public()
@SkipRateLimit()
@Controller('metrics')
export class MetricsController {
  private readonly access: MetricsAccessConfig;

  constructor(config: ConfigService<Env, true>) {
    this.access = metricsAccess({
      METRICS: config.get('METRICS', { infer: true }),
      NODE_ENV: config.get('NODE_ENV', { infer: true }),
      METRICS_TOKEN: config.get('METRICS_TOKEN', { infer: true }),
      METRICS_PORT: config.get('METRICS_PORT', { infer: true }),
    });
  }

  @Get()
  async scrape(@Req() req: Request, @Res() res: Response): Promise<void> {
    const verdict = scrapeVerdict(this.access, 'service', req.headers.authorization);
    if (verdict === 404) throw new ApiException(404, `no route for ${req.path}`);
    if (verdict === 401) throw metricsUnauthorized();
    const text = await registry.metrics();
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Content-Type', registry.contentType);
    res.send(text);
  }
}
