import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Histogram } from 'prom-client';
import type { Middleware } from '../../common/middleware/chain.js';
import { routeTemplate } from '../tracing/http-route.js';
import { gauge, histogram } from './registry.js';
import { type RequestTiming, startTiming } from './request-timing.js';

/** The `route` label of a request no controller route took (unknown path, 405, refused before routing). */
export const UNMATCHED_ROUTE = 'unmatched';

/** Methods labelled by name; any other is `_OTHER` (OpenTelemetry HTTP conventions), so a client cannot add series by inventing methods. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT']);

/** At most this many label combinations are cached as pre-bound children (routes × methods × statuses of this service stay far below). */
const MAX_CHILDREN = 5000;

/** What {@link httpMetrics} does: record the metrics (METRICS), add `Server-Timing` (SERVER_TIMING). */
export interface HttpMetricsOptions {
  metrics: boolean;
  serverTiming: boolean;
}

/**
 * The HTTP middleware of metrics and Server-Timing; install it first (before routing) so that
 * every response counts, unknown routes and refusals included. Returns undefined when both are off.
 *
 * Metrics: `http_server_request_duration_seconds{method, route, status_code}` (from the moment the
 * middleware runs to the end of the response, labelled by the route template — `/v1/todos/{id}`,
 * never the raw path — or {@link UNMATCHED_ROUTE}), and `http_server_active_requests` (in flight).
 * A label combination's child is bound once and cached, so a request costs two clock reads, a map
 * lookup and the observation.
 *
 * Server-Timing (README.md#metrics, W3C Server Timing): `Server-Timing: db;dur=<ms>, total;dur=<ms>` on
 * every response, `db` the summed time of the request's database statements so far and `total`
 * the time until the headers were written (ms, one decimal). The timing lives in the request
 * context (src/context/request-context.ts), set only when SERVER_TIMING is true; this
 * middleware runs after the one that enters the context.
 */
export function httpMetrics(options: HttpMetricsOptions): Middleware | undefined {
  if (!options.metrics && !options.serverTiming) return undefined;
  const duration = options.metrics
    ? histogram('http_server_request_duration_seconds', 'Duration of HTTP requests in seconds, by method, route template and status code.', [
        'method',
        'route',
        'status_code',
      ])
    : undefined;
  const active = options.metrics ? gauge('http_server_active_requests', 'HTTP requests in flight.') : undefined;
  const children = new Map<string, Histogram.Internal<string>>();
  const record = (req: IncomingMessage, res: ServerResponse, start: number): void => {
    active!.dec();
    const method = KNOWN_METHODS.has(req.method ?? '') ? req.method! : '_OTHER';
    const route = routeTemplate(req) ?? UNMATCHED_ROUTE;
    const key = `${method} ${res.statusCode} ${route}`;
    let child = children.get(key);
    if (child === undefined) {
      child = duration!.labels(method, route, String(res.statusCode));
      if (children.size < MAX_CHILDREN) children.set(key, child);
    }
    child.observe((performance.now() - start) / 1000);
  };

  return (req, res, next) => {
    const start = performance.now();
    if (options.metrics) {
      active!.inc();
      res.once('close', () => record(req, res, start));
    }
    if (!options.serverTiming) {
      next();
      return;
    }
    const timing: RequestTiming = { dbMs: 0 };
    const writeHead = res.writeHead;
    res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
      if (!this.headersSent) this.setHeader('Server-Timing', `db;dur=${timing.dbMs.toFixed(1)}, total;dur=${(performance.now() - start).toFixed(1)}`);
      return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
    } as ServerResponse['writeHead'];
    startTiming(timing);
    next();
  };
}
