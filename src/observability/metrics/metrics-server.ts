import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type MetricsAccessConfig, scrapeVerdict } from './metrics-access.js';
import { registry } from './registry.js';

/** The separate metrics listener of METRICS_PORT. */
export interface MetricsServer {
  /** The port it listens on (METRICS_PORT, or the free port chosen for `0`). */
  port: number;
  /** Stops listening and closes its connections; resolves when closed. */
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` on its own plain-HTTP port (METRICS_PORT), apart from the API: a scrape
 * target reachable only from the monitoring network, with nothing else of the service on it.
 * Access per {@link scrapeVerdict} (`metrics-port`: open unless METRICS_TOKEN is set). Any other
 * path → 404, another method → 405 with `Allow: GET, HEAD`; errors are `ErrorResp` JSON bodies
 * with a fresh `request_id`, like the API's. Listens on `host` (all interfaces when undefined).
 * @throws the listen error (port in use, permission) — start-up then fails with it.
 */
export async function startMetricsServer(port: number, access: MetricsAccessConfig, host?: string): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const requestId = randomUUID();
    const fail = (status: number, code: string, error: string, headers: Record<string, string> = {}) => {
      const body = JSON.stringify({ error, code, request_id: requestId });
      res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', 'X-Request-Id': requestId, ...headers });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') return fail(404, 'not_found', `no route for ${path.slice(0, 200)}`);
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return fail(405, 'method_not_allowed', `method ${String(req.method).slice(0, 20)} not allowed`, { Allow: 'GET, HEAD' });
    const verdict = scrapeVerdict(access, 'metrics-port', req.headers.authorization);
    if (verdict === 401)
      return fail(401, 'unauthorized', 'metrics need Authorization: Bearer <METRICS_TOKEN>', { 'WWW-Authenticate': 'Bearer realm="metrics"' });
    if (verdict === 404) return fail(404, 'not_found', 'no route for /metrics');
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store', 'X-Request-Id': requestId });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      () => fail(500, 'internal', 'collecting the metrics failed'),
    );
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
