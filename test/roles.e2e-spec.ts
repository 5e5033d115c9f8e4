import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import request from 'supertest';
import { ensureBuilt, startServer, type ServerProcess } from './setup/server-process.js';

/**
 * The API and worker roles (docs/operations.md#roles-api-and-worker) with real processes
 * (`node dist/src/main.js`) on one PostgreSQL database and a receiver on loopback counting
 * webhook-ids:
 * - a ROLE=api process never delivers (nothing arrives while it runs alone); a ROLE=worker
 *   process serves no API route (404), only the probes and /metrics, which name its role;
 * - together they deliver each event exactly once and promptly: the worker polls only every
 *   WEBHOOK_POLL_INTERVAL_MS=10000 here, so a delivery well under a second after the write can only
 *   come from the NOTIFY of the API's transaction, heard on the worker's LISTEN connection;
 * - that connection is made again when it is killed, and deliveries are prompt again;
 * - two workers and one API: each event exactly once;
 * - SIGTERM ends each role with exit status 0.
 * Skipped on SQLite: ROLE=api and ROLE=worker need PostgreSQL (one process runs everything on SQLite).
 */
const onPostgres = /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '');
const PASSWORD = 'roles-processes-pw';
const POLL_MS = 10_000;
/** The bound on the time from a write's 201 to the receiver getting its delivery (milliseconds), far under POLL_MS. */
const PROMPT_MS = 1500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Received {
  path: string;
  id: string;
  at: number;
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** The value of the sample `series` (name and labels exactly as exposed) in a Prometheus text, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((entry) => entry.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

(onPostgres ? describe : describe.skip)('API and worker roles (PostgreSQL, real processes)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'resource-api-roles-'));
  const received: Received[] = [];
  let receiver: http.Server;
  let port = 0;
  const servers: ServerProcess[] = [];
  let api: ServerProcess;
  let worker: ServerProcess;
  let auth = '';
  const start = async (role: 'api' | 'worker', extra: Record<string, string> = {}) => {
    const server = await startServer(dir, {
      DATABASE_URL: process.env.DATABASE_URL!,
      ROLE: role,
      JWT_SECRET: 'roles-processes-secret-that-is-at-least-32-bytes',
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_POLL_INTERVAL_MS: String(POLL_MS),
      WEBHOOK_TIMEOUT_MS: '2000',
      ...extra,
    });
    servers.push(server);
    return server;
  };
  const at = (where: string) => received.filter((entry) => entry.path === where);
  const ready = async (server: ServerProcess) => request(server.url).get('/health/ready');
  const metrics = async (server: ServerProcess) => (await request(server.url).get('/metrics')).text;
  const webhook = async (where: string) => {
    const hook = await request(api.url)
      .post('/v1/webhooks')
      .set('Authorization', auth)
      .send({ url: `http://127.0.0.1:${port}${where}`, events: ['todo.created'] });
    expect(hook.status).toBe(201);
    return hook.body.id as number;
  };
  /** Writes one todo through the API process and returns how long (ms) from its 201 until the receiver got its delivery at `where`. */
  const deliveredWithin = async (where: string, title: string) => {
    const before = at(where).length;
    const write = await request(api.url).post('/v1/todos').set('Authorization', auth).send({ title });
    expect(write.status).toBe(201);
    const written = Date.now();
    await waitFor(`the delivery of ${title}`, () => at(where).length > before, POLL_MS * 3);
    return at(where)[before].at - written;
  };

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const where = (req.url ?? '/').split('?')[0];
        const answer = () => {
          received.push({ path: where, id: String(req.headers['webhook-id']), at: Date.now() });
          res.writeHead(200).end();
        };
        // `/slow` answers after 100 ms: widens the race of two workers
        if (where === '/slow') setTimeout(answer, 100);
        else answer();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    port = (receiver.address() as AddressInfo).port;
    ensureBuilt();
  }, 240_000);

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.kill()));
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('an API-only process serves the API, reports its role, and never delivers', async () => {
    api = await start('api');
    const readiness = await ready(api);
    expect(readiness.status).toBe(200);
    expect(readiness.body.role).toBe('api');
    expect(Object.keys(readiness.body.checks)).not.toContain('webhook_listener');
    const username = `roles_${process.pid}`.slice(0, 32);
    expect((await request(api.url).post('/v1/users').send({ username, password: PASSWORD, name: 'roles' })).status).toBe(201);
    const login = await request(api.url).post('/v1/login').send({ username, password: PASSWORD });
    expect(login.status).toBe(200);
    auth = `Bearer ${login.body.token as string}`;
    await webhook('/alone');
    expect((await request(api.url).post('/v1/todos').set('Authorization', auth).send({ title: 'written while no worker runs' })).status).toBe(201);
    // a process running the worker would have delivered this at once (the in-process wake after the commit)
    await sleep(2000);
    expect(at('/alone')).toHaveLength(0);
    const text = await metrics(api);
    expect(sample(text, 'service_role_info{role="api"}')).toBe(1);
    expect(sample(text, 'webhook_delivery_attempts_total{outcome="delivered"}') ?? 0).toBe(0);
    expect(sample(text, 'webhook_listener_up')).toBeUndefined();
  }, 120_000);

  it('a worker-only process serves no API route (404) but the probes and /metrics; it delivers what the API wrote, promptly (NOTIFY) and exactly once', async () => {
    worker = await start('worker');
    // its first look at start-up delivers what the API wrote before
    await waitFor('the delivery written before the worker started', () => at('/alone').length === 1);
    await waitFor('the LISTEN connection', async () => (await ready(worker)).status === 200);
    const readiness = await ready(worker);
    expect(readiness.body).toEqual({
      status: 'ok',
      role: 'worker',
      checks: { database: expect.objectContaining({ status: 'up' }), webhook_listener: expect.objectContaining({ status: 'up' }) },
    });
    expect((await request(worker.url).get('/health/live')).status).toBe(200);
    for (const [method, target] of [
      ['get', '/v1/todos'],
      ['post', '/v1/users'],
      ['post', '/v1/login'],
      ['get', '/v2/todos?size=1'],
      ['get', '/docs'],
      ['get', '/'],
    ] as const) {
      const res = await request(worker.url)[method](target).set('Authorization', auth);
      expect({ target, status: res.status, code: res.body.code, error: res.body.error }).toEqual({
        target,
        status: 404,
        code: 'not_found',
        error: `no route for ${target.split('?')[0]}`,
      });
    }

    await webhook('/prompt');
    const latencies: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      latencies.push(await deliveredWithin('/prompt', `prompt ${i}`));
      await sleep(150 + i * 70);
    }
    expect(Math.max(...latencies)).toBeLessThan(PROMPT_MS);
    await sleep(1000);
    const ids = at('/prompt').map((entry) => entry.id);
    expect(ids).toHaveLength(5);
    expect(new Set(ids).size).toBe(5);

    const workerMetrics = await metrics(worker);
    expect(sample(workerMetrics, 'service_role_info{role="worker"}')).toBe(1);
    expect(sample(workerMetrics, 'webhook_listener_up')).toBe(1);
    // every delivery the receiver got (each write here reaches both webhooks) was made by the worker
    expect(sample(workerMetrics, 'webhook_delivery_attempts_total{outcome="delivered"}')).toBe(received.length);
    expect(new Set(received.map((entry) => `${entry.path} ${entry.id}`)).size).toBe(received.length);
    expect(sample(await metrics(api), 'webhook_delivery_attempts_total{outcome="delivered"}') ?? 0).toBe(0);
  }, 120_000);

  it('the LISTEN connection is made again when PostgreSQL drops it; deliveries are prompt again', async () => {
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    try {
      const killed = await admin.query(
        "SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE application_name = 'resource-api-listen' AND datname = current_database()",
      );
      expect(killed.rowCount).toBe(1);
    } finally {
      await admin.end();
    }
    await worker.waitForOutput('LISTEN connection lost', 10_000);
    await waitFor(
      'the LISTEN connection again',
      async () => /listening on resource_api_webhooks[\s\S]*LISTEN connection lost[\s\S]*listening on resource_api_webhooks/.test(worker.output()),
      15_000,
    );
    expect((await ready(worker)).status).toBe(200);
    expect(await deliveredWithin('/prompt', 'after the reconnection')).toBeLessThan(PROMPT_MS);
  }, 60_000);

  it('two workers and one API: each event delivered exactly once', async () => {
    const second = await start('worker');
    await waitFor('the second worker LISTENs', async () => (await ready(second)).status === 200);
    const hookId = await webhook('/slow');
    const writes = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        request(api.url)
          .post('/v1/todos')
          .set('Authorization', auth)
          .send({ title: `event ${i}` }),
      ),
    );
    expect(writes.map((res) => res.status)).toEqual(Array(30).fill(201));
    await waitFor('30 deliveries', () => at('/slow').length >= 30);
    await sleep(2000);
    const ids = at('/slow').map((entry) => entry.id);
    expect(ids).toHaveLength(30);
    expect(new Set(ids).size).toBe(30);
    const list = await request(api.url).get(`/v1/webhooks/${hookId}/deliveries?size=100`).set('Authorization', auth);
    expect(list.body.data.map((d: { status: string; attempts: number }) => [d.status, d.attempts])).toEqual(Array(30).fill(['delivered', 1]));
    const delivered = await Promise.all(
      [worker, second].map(async (server) => sample(await metrics(server), 'webhook_delivery_attempts_total{outcome="delivered"}') ?? 0),
    );
    // every delivery the receiver ever got was made by one of the workers, none twice
    expect(delivered[0] + delivered[1]).toBe(received.length);
    expect(new Set(received.map((entry) => `${entry.path} ${entry.id}`)).size).toBe(received.length);
    expect(sample(await metrics(api), 'webhook_delivery_attempts_total{outcome="delivered"}') ?? 0).toBe(0);
  }, 120_000);

  it('SIGTERM ends each role with exit status 0', async () => {
    for (const server of servers) if (server.child.exitCode === null) server.child.kill('SIGTERM');
    const exits = await Promise.all(servers.map((server) => server.exited));
    expect(exits).toEqual(servers.map(() => ({ code: 0, signal: null })));
  }, 60_000);
});
