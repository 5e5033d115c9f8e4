import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { parseSamples, select } from './setup/prometheus-text.js';
import { ensureBuilt, type ServerProcess, startServer } from './setup/server-process.js';

/**
 * The metrics read back through a real Prometheus server (README.md#metrics): the test starts a real
 * Prometheus server, sends traffic, and reads the request count and a latency quantile back
 * through Prometheus's HTTP query API. The built service runs as a child process in production
 * mode with METRICS_TOKEN, on the run's database (SQLite, or PostgreSQL + Redis when
 * DATABASE_URL/REDIS_URL say so); Prometheus (Debian's `prometheus` package, PROMETHEUS_PATH,
 * default /usr/bin/prometheus) scrapes it every second with the token. Skipped with one printed
 * line when Prometheus is missing, unless REQUIRE_PROMETHEUS=1 (CI, scripts/ci-install.sh prometheus),
 * which fails instead.
 */

const PROMETHEUS = process.env.PROMETHEUS_PATH || '/usr/bin/prometheus';
const available = existsSync(PROMETHEUS);
if (!available) {
  const message = `Prometheus e2e test: no Prometheus at ${PROMETHEUS}. Install it (Debian/Ubuntu: sudo apt-get install -y prometheus, or bash scripts/ci-install.sh prometheus) or set PROMETHEUS_PATH.`;
  if (process.env.REQUIRE_PROMETHEUS === '1') throw new Error(`REQUIRE_PROMETHEUS=1: ${message}`);
  process.stdout.write(`\n${message} Skipped.\n`);
}

const postgres = /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '');
const DATABASE_ENV: Record<string, string> = postgres
  ? { DATABASE_URL: process.env.DATABASE_URL!, ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}) }
  : {};
const TOKEN = `prometheus-scrape-token-${process.pid}-0123456789`;
const PASSWORD = 'correct-horse-battery-staple';
const READS = 40;
const WRITES = 10;

/** A free TCP port on loopback (bound and released). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface VectorResult {
  metric: Record<string, string>;
  value: [number, string];
}

(available ? describe : describe.skip)('Prometheus scrapes GET /metrics (real prometheus binary, production with METRICS_TOKEN)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'resource-api-prometheus-'));
  let server: ServerProcess;
  let prometheus: ChildProcess;
  let prometheusOutput = '';
  let prometheusUrl: string;

  /** The result of an instant query (`/api/v1/query`), vector results only. */
  async function query(promql: string): Promise<VectorResult[]> {
    const res = await request(prometheusUrl).get('/api/v1/query').query({ query: promql });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('success');
    expect(res.body.data.resultType).toBe('vector');
    return res.body.data.result as VectorResult[];
  }

  /** Polls `promql` until its single value satisfies `done` (scrapes come every second); returns the value. */
  async function waitForValue(promql: string, done: (value: number) => boolean, timeoutMs = 45_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    let last: VectorResult[] = [];
    while (Date.now() < deadline) {
      last = await query(promql);
      if (last.length === 1 && done(Number(last[0].value[1]))) return Number(last[0].value[1]);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    throw new Error(
      `${promql} did not reach the expected value within ${timeoutMs} ms; last result ${JSON.stringify(last)}; prometheus output:\n${prometheusOutput.slice(-3000)}`,
    );
  }

  beforeAll(async () => {
    ensureBuilt();
    server = await startServer(dir, { ...DATABASE_ENV, NODE_ENV: 'production', OAUTH_ISSUER: 'http://localhost', METRICS_TOKEN: TOKEN });
    const port = await freePort();
    prometheusUrl = `http://127.0.0.1:${port}`;
    const config = path.join(dir, 'prometheus.yml');
    writeFileSync(
      config,
      [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1s',
        'scrape_configs:',
        '  - job_name: resource-api',
        '    scrape_interval: 1s',
        '    scrape_timeout: 900ms',
        '    metrics_path: /metrics',
        '    authorization:',
        '      type: Bearer',
        `      credentials: ${TOKEN}`,
        '    static_configs:',
        `      - targets: ['127.0.0.1:${server.port}']`,
        '',
      ].join('\n'),
    );
    prometheus = spawn(
      PROMETHEUS,
      [`--config.file=${config}`, `--storage.tsdb.path=${path.join(dir, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    prometheus.stdout!.on('data', (chunk: Buffer) => (prometheusOutput += chunk.toString('utf8')));
    prometheus.stderr!.on('data', (chunk: Buffer) => (prometheusOutput += chunk.toString('utf8')));
    const deadline = Date.now() + 60_000;
    for (;;) {
      const ready = await request(prometheusUrl)
        .get('/-/ready')
        .then((res) => res.status === 200)
        .catch(() => false);
      if (ready) break;
      if (prometheus.exitCode !== null || Date.now() > deadline) throw new Error(`prometheus did not start:\n${prometheusOutput.slice(-3000)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }, 300_000);

  afterAll(async () => {
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise((resolve) => prometheus.once('exit', resolve));
      prometheus.kill('SIGTERM');
      await exited;
    }
    await server?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('scrapes the service with the token (target up), and reads back the request count and the 0.9 latency quantile', async () => {
    // the target is up: Prometheus authenticates with the token
    await waitForValue('up{job="resource-api"}', (value) => value === 1);

    const username = `prom_${process.pid}_${Date.now() % 100_000}`;
    expect((await request(server.url).post('/v1/users').send({ username, password: PASSWORD, name: 'Prometheus' })).status).toBe(201);
    const login = await request(server.url).post('/v1/login').send({ username, password: PASSWORD });
    expect(login.status).toBe(200);
    const auth = `Bearer ${login.body.token}`;
    const ids: number[] = [];
    for (let i = 0; i < WRITES; i++) {
      const res = await request(server.url)
        .post('/v1/todos')
        .set('Authorization', auth)
        .send({ title: `scraped ${i}` });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    for (let i = 0; i < READS; i++)
      expect(
        (
          await request(server.url)
            .get(`/v1/todos/${ids[i % ids.length]}`)
            .set('Authorization', auth)
        ).status,
      ).toBe(200);

    const reads = 'http_server_request_duration_seconds_count{job="resource-api",method="GET",route="/v1/todos/{id}",status_code="200"}';
    expect(await waitForValue(reads, (value) => value >= READS)).toBe(READS);
    expect(
      await waitForValue(
        'sum(http_server_request_duration_seconds_count{job="resource-api",method="POST",route="/v1/todos",status_code="201"})',
        (value) => value >= WRITES,
      ),
    ).toBe(WRITES);

    // the quantile Prometheus computes lies in the bucket where 90 % of the reads fall, per the service's own exposition
    const quantile = Number(
      (
        await query(
          'histogram_quantile(0.9, sum by (le) (http_server_request_duration_seconds_bucket{job="resource-api",method="GET",route="/v1/todos/{id}",status_code="200"}))',
        )
      )[0].value[1],
    );
    const exposition = await request(server.url).get('/metrics').set('Authorization', `Bearer ${TOKEN}`);
    expect(exposition.status).toBe(200);
    const buckets = select(parseSamples(exposition.text), 'http_server_request_duration_seconds_bucket', {
      method: 'GET',
      route: '/v1/todos/{id}',
      status_code: '200',
    })
      .map((s) => ({ le: s.labels.le === '+Inf' ? Infinity : Number(s.labels.le), count: s.value }))
      .sort((a, b) => a.le - b.le);
    const index = buckets.findIndex((b) => b.count >= 0.9 * READS);
    const upper = buckets[index].le;
    const lower = index === 0 ? 0 : buckets[index - 1].le;
    expect(Number.isFinite(quantile)).toBe(true);
    expect(quantile).toBeGreaterThan(lower);
    expect(quantile).toBeLessThanOrEqual(upper);

    // a rate-based quantile, the form a dashboard uses, is a number too once two scrapes saw the
    // counters grow: keep some reads coming while waiting for it
    const traffic = setInterval(
      () =>
        void request(server.url)
          .get(`/v1/todos/${ids[0]}`)
          .set('Authorization', auth)
          .then(
            () => undefined,
            () => undefined,
          ),
      200,
    );
    try {
      const rated = await waitForValue(
        'histogram_quantile(0.9, sum by (le) (rate(http_server_request_duration_seconds_bucket{job="resource-api",route="/v1/todos/{id}"}[1m])))',
        (value) => Number.isFinite(value) && value > 0,
      );
      expect(rated).toBeLessThanOrEqual(10);
    } finally {
      clearInterval(traffic);
    }

    // the pool gauges and the runtime defaults arrive too
    expect(Number((await query('db_client_connection_max{job="resource-api"}'))[0].value[1])).toBe(postgres ? 10 : 1);
    expect((await query('nodejs_eventloop_lag_seconds{job="resource-api"}')).length).toBe(1);

    // the token is in no log line of the service
    expect(server.output()).not.toContain(TOKEN);
    expect(server.output()).toContain('"url":"/metrics"');
  });
});
