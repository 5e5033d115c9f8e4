import { createHash, timingSafeEqual } from 'node:crypto';
import type { Env } from '../../config/env.validation.js';

/** Where a scrape arrived: on the service's port (`GET /metrics`), or on the separate METRICS_PORT. */
export type ScrapePlace = 'service' | 'metrics-port';

/** The configuration the access rules read (validated by validateEnv). */
export interface MetricsAccessConfig {
  /** METRICS: false → no endpoint anywhere. */
  enabled: boolean;
  production: boolean;
  /** METRICS_TOKEN, when set. */
  token?: string;
  /** METRICS_PORT, when set (then the service's port does not serve /metrics). */
  port?: number;
}

/** The access configuration from the validated environment (METRICS, NODE_ENV, METRICS_TOKEN, METRICS_PORT). */
export function metricsAccess(env: Pick<Env, 'METRICS' | 'NODE_ENV' | 'METRICS_TOKEN' | 'METRICS_PORT'>): MetricsAccessConfig {
  return { enabled: env.METRICS, production: env.NODE_ENV === 'production', token: env.METRICS_TOKEN, port: env.METRICS_PORT };
}

/** How a scrape is answered: 200 with the metrics, 401 (a token is needed and none or a wrong one came), or 404 (no metrics here). */
export type ScrapeVerdict = 200 | 401 | 404;

/**
 * The access rules of the metrics (README.md#metrics):
 * - METRICS=false: 404 everywhere.
 * - On the service's port: 404 when METRICS_PORT is set (metrics live there instead). Outside
 *   production: open. In production: 404 while METRICS_TOKEN is unset (the endpoint does not
 *   exist), else only with `Authorization: Bearer <METRICS_TOKEN>` (401 otherwise).
 * - On METRICS_PORT: open, unless METRICS_TOKEN is set, then the same Bearer token is needed.
 * The token is compared in constant time (SHA-256 digests of both compared with timingSafeEqual,
 * so neither the content nor the length of the token leaks through timing).
 */
export function scrapeVerdict(config: MetricsAccessConfig, place: ScrapePlace, authorization: string | undefined): ScrapeVerdict {
  if (!config.enabled) return 404;
  if (place === 'service') {
    if (config.port !== undefined) return 404;
    if (!config.production) return 200;
    if (config.token === undefined) return 404;
  } else if (config.token === undefined) {
    return 200;
  }
  return bearerMatches(authorization, config.token) ? 200 : 401;
}

/** True when `authorization` is `Bearer <token>` (scheme in any case) with exactly `token`. */
export function bearerMatches(authorization: string | undefined, token: string): boolean {
  const presented = /^Bearer +([\x21-\x7e]+) *$/i.exec(authorization ?? '')?.[1];
  if (presented === undefined) return false;
  return timingSafeEqual(digest(presented), digest(token));
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
