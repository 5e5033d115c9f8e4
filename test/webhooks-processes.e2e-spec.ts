import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { ensureBuilt, startServer, type ServerProcess } from './setup/server-process.js';

/**
 * Webhook delivery across processes (docs/webhooks.md#several-instances: several instances, deliveries survive a
 * restart), with real server processes (`node dist/src/main.js`, their worker started once they
 * listen) and a receiver on loopback:
 * - a process killed (SIGKILL) in the middle of a retry schedule; a new process on the same
 *   database finishes it: delivered once, under the same webhook-id; the secret never appears in
 *   either process's log (LOG_LEVEL=info);
 * - SIGTERM in the middle of an attempt: the worker releases the delivery before the database
 *   closes (exit 0), and the next process attempts it again at once;
 * - on PostgreSQL, two processes on one database: every event delivered exactly once (claiming
 *   with FOR UPDATE SKIP LOCKED). Skipped on SQLite: one process per database file there (the
 *   documented deployment; SQLite has no row locks to claim with).
 */
const onPostgres = /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '');
const PASSWORD = 'webhook-processes-pw';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Received {
  path: string;
  id: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  answered: number;
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe('webhook delivery across processes', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'resource-api-webhooks-'));
  const received: Received[] = [];
  const hits = new Map<string, number>();
  let receiver: http.Server;
  let port = 0;
  const servers: ServerProcess[] = [];
  const env = () => ({
    ...(onPostgres ? { DATABASE_URL: process.env.DATABASE_URL! } : {}),
    JWT_SECRET: 'webhook-processes-secret-that-is-at-least-32-bytes',
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_SCHEDULE: '2,2,2',
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_POLL_INTERVAL_MS: '200',
  });
  const start = async (extra: Record<string, string> = {}) => {
    const server = await startServer(dir, { ...env(), ...extra });
    servers.push(server);
    return server;
  };

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const at = (req.url ?? '/').split('?')[0];
        const hit = (hits.get(at) ?? 0) + 1;
        hits.set(at, hit);
        // `/fail-once` answers 500 the first time; `/slow-ok` answers 200 after 100 ms (widens the race of two workers)
        const status = at === '/fail-once' && hit === 1 ? 500 : 200;
        const answer = () => {
          received.push({
            path: at,
            id: String(req.headers['webhook-id']),
            headers: req.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            answered: status,
          });
          res.writeHead(status).end();
        };
        if (at === '/slow-ok') setTimeout(answer, 100);
        else if (at === '/hang') received.push({ path: at, id: String(req.headers['webhook-id']), headers: req.headers, body: '', answered: 0 });
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

  /** Registers and logs in a fresh user on `server`; returns its bearer token. */
  const user = async (server: ServerProcess, name: string) => {
    const username = `${name}_${process.pid}`.slice(0, 32);
    const created = await request(server.url).post('/v1/users').send({ username, password: PASSWORD, name });
    expect(created.status).toBe(201);
    const login = await request(server.url).post('/v1/login').send({ username, password: PASSWORD });
    expect(login.status).toBe(200);
    return `Bearer ${login.body.token as string}`;
  };

  it('a process killed mid-schedule: the restarted one delivers the event once, same webhook-id; the secret is never logged', async () => {
    const first = await start();
    const auth = await user(first, 'killed');
    const hook = await request(first.url)
      .post('/v1/webhooks')
      .set('Authorization', auth)
      .send({ url: `http://127.0.0.1:${port}/fail-once`, events: ['todo.created'] });
    expect(hook.status).toBe(201);
    const secret = hook.body.secret as string;
    expect((await request(first.url).post('/v1/todos').set('Authorization', auth).send({ title: 'survives' })).status).toBe(201);
    await waitFor('the first, failed attempt', () => received.some((entry) => entry.path === '/fail-once'));
    first.child.kill('SIGKILL');
    await first.exited;
    expect(received.filter((entry) => entry.path === '/fail-once')).toHaveLength(1);

    const second = await start();
    await waitFor('the retry by the new process', () => received.filter((entry) => entry.path === '/fail-once').length === 2);
    await sleep(2500);
    const got = received.filter((entry) => entry.path === '/fail-once');
    expect(got.map((entry) => entry.answered)).toEqual([500, 200]);
    expect(got[0].id).toBe(got[1].id);
    const payload = new Webhook(secret).verify(got[1].body, {
      'webhook-id': got[1].id,
      'webhook-timestamp': String(got[1].headers['webhook-timestamp']),
      'webhook-signature': String(got[1].headers['webhook-signature']),
    }) as { type: string; data: { title: string } };
    expect([payload.type, payload.data.title]).toEqual(['todo.created', 'survives']);
    const list = await request(second.url).get(`/v1/webhooks/${hook.body.id}/deliveries`).set('Authorization', auth);
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([expect.objectContaining({ status: 'delivered', attempts: 2, last_status_code: 200 })]);
    for (const server of [first, second]) {
      expect(server.output()).not.toContain(secret);
      expect(server.output()).not.toContain(secret.slice(6));
    }
    await second.kill();
  }, 120_000);

  it('SIGTERM during an attempt: the process exits 0 after SHUTDOWN_TIMEOUT_MS and puts the delivery back to pending; the next process retries it', async () => {
    const first = await start({ WEBHOOK_TIMEOUT_MS: '30000', SHUTDOWN_TIMEOUT_MS: '500' });
    const auth = await user(first, 'sigterm');
    const hook = await request(first.url)
      .post('/v1/webhooks')
      .set('Authorization', auth)
      .send({ url: `http://127.0.0.1:${port}/hang`, events: ['todo.created'] });
    expect(hook.status).toBe(201);
    expect((await request(first.url).post('/v1/todos').set('Authorization', auth).send({ title: 'in flight' })).status).toBe(201);
    await waitFor('the attempt in flight', () => received.some((entry) => entry.path === '/hang'));
    first.child.kill('SIGTERM');
    expect(await first.exited).toEqual({ code: 0, signal: null });
    const second = await start({ WEBHOOK_TIMEOUT_MS: '30000' });
    await waitFor('the retry of the released delivery', () => received.filter((entry) => entry.path === '/hang').length === 2);
    const ids = received.filter((entry) => entry.path === '/hang').map((entry) => entry.id);
    expect(ids[1]).toBe(ids[0]);
    const list = await request(second.url).get(`/v1/webhooks/${hook.body.id}/deliveries`).set('Authorization', auth);
    expect(list.body.data).toEqual([expect.objectContaining({ status: 'delivering', attempts: 2 })]);
    await second.kill();
  }, 120_000);

  (onPostgres ? it : it.skip)(
    'two processes on one PostgreSQL database: each event delivered exactly once',
    async () => {
      const [a, b] = await Promise.all([start(), start()]);
      const auth = await user(a, 'two_procs');
      const hook = await request(b.url)
        .post('/v1/webhooks')
        .set('Authorization', auth)
        .send({ url: `http://127.0.0.1:${port}/slow-ok`, events: ['todo.created'] });
      expect(hook.status).toBe(201);
      const writes = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          request((i % 2 === 0 ? a : b).url)
            .post('/v1/todos')
            .set('Authorization', auth)
            .send({ title: `event ${i}` }),
        ),
      );
      expect(writes.map((res) => res.status)).toEqual(Array(30).fill(201));
      await waitFor('30 deliveries', () => received.filter((entry) => entry.path === '/slow-ok').length >= 30);
      await sleep(3000);
      const ids = received.filter((entry) => entry.path === '/slow-ok').map((entry) => entry.id);
      expect(ids).toHaveLength(30);
      expect(new Set(ids).size).toBe(30);
      const list = await request(a.url).get(`/v1/webhooks/${hook.body.id}/deliveries?size=100`).set('Authorization', auth);
      expect(list.body.data.map((d: { status: string; attempts: number }) => [d.status, d.attempts])).toEqual(Array(30).fill(['delivered', 1]));
    },
    120_000,
  );
});
