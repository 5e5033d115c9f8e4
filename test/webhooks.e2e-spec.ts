import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import type { DataSource as DataSourceType } from 'typeorm';
import type { CreatedUser } from './factories/user.factory.js';
import { bearer } from './factories/user.factory.js';
import { errorBody } from './setup/error-body.js';
import { parseSamples, type Sample, total } from './setup/prometheus-text.js';
import { type FreshApp, loadFreshApp } from './setup/fresh-app.js';
import { ISO_MS } from './setup/formats.js';

/**
 * Webhooks end to end (docs/webhooks.md), with a real receiver: a node:http server on 127.0.0.1 (so the
 * app runs with WEBHOOK_ALLOW_HTTP=true and WEBHOOK_ALLOW_PRIVATE_NETWORKS=true) that answers each
 * path its own way; every delivery it gets is verified with the `standardwebhooks` library as a
 * real receiver would. The retry schedule is `1,1,1` (four attempts over about three seconds) and
 * the timeout 300 ms, so a whole schedule runs in seconds. The SSRF rules are checked on a second
 * application with the defaults (https only, no private networks).
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One request the receiver got. */
interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The status it answered (null: never answered). */
  answered: number | null;
}

/** A receiver on 127.0.0.1: `/ok` 204, `/flaky` 500 twice then 200, `/gone` 410, `/slow` never answers, `/redirect` 302 to `/ok`, `/fail` 500. */
class Receiver {
  readonly received: Received[] = [];
  private readonly hits = new Map<string, number>();
  private server!: http.Server;
  port = 0;

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const path = (req.url ?? '/').split('?')[0];
        const hit = (this.hits.get(path) ?? 0) + 1;
        this.hits.set(path, hit);
        const entry: Received = { path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), answered: null };
        this.received.push(entry);
        const answer = (status: number, headers: Record<string, string> = {}) => {
          entry.answered = status;
          res.writeHead(status, headers).end();
        };
        if (path.startsWith('/ok')) answer(204);
        else if (path.startsWith('/flaky')) answer(hit <= 2 ? 500 : 200);
        else if (path.startsWith('/gone')) answer(410);
        else if (path.startsWith('/redirect')) answer(302, { Location: `http://127.0.0.1:${this.port}/ok-redirected` });
        else if (path.startsWith('/slow'))
          return; // never answers: the sender's timeout ends it
        else answer(500);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  to(path: string): Received[] {
    return this.received.filter((entry) => entry.path === path);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Polls `check` every 50 ms until it returns true; fails after `timeoutMs` with `what`. */
async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const receiver = new Receiver();
let fresh: FreshApp & { restoreEnv: () => void };
let app: NestExpressApplication;
let dataSource: DataSourceType;
let alice: CreatedUser;
let bob: CreatedUser;
let admin: CreatedUser;
const api = () => request(app.getHttpServer());

beforeAll(async () => {
  await receiver.start();
});

afterAll(async () => {
  await receiver.stop();
});

describe('with WEBHOOK_ALLOW_HTTP and WEBHOOK_ALLOW_PRIVATE_NETWORKS (a receiver on loopback)', () => {
  beforeAll(async () => {
    fresh = await loadFreshApp({
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1,1,1',
      WEBHOOK_TIMEOUT_MS: '300',
      WEBHOOK_POLL_INTERVAL_MS: '100',
      WEBHOOK_SECRET_GRACE_SECONDS: '3600',
      WEBHOOK_DISABLE_AFTER_FAILURES: '2',
    });
    app = await fresh.createTestApp();
    dataSource = app.get(fresh.DataSource);
    const { WebhookWorker } = await import('../src/webhooks/webhook-worker.js');
    app.get(WebhookWorker).start();
    alice = await fresh.createUser(app);
    bob = await fresh.createUser(app);
    admin = await fresh.createUser(app, { role: 'admin' });
  });

  afterAll(async () => {
    await app?.close();
    fresh?.restoreEnv();
  });

  /** Subscribes `owner` to `events` at the receiver's `path`; returns the 201 body. */
  async function subscribe(owner: CreatedUser, path: string, events: string[] = ['*'], extra: Record<string, unknown> = {}) {
    const res = await api()
      .post('/v1/webhooks')
      .set('Authorization', bearer(owner.token))
      .send({ url: receiver.url(path), events, ...extra });
    expect(res.status).toBe(201);
    return res.body as { id: number; secret: string } & Record<string, unknown>;
  }

  /** Creates a todo as `owner` (a `todo.created` event); returns its id. */
  async function createTodo(owner: CreatedUser, title = 'Buy milk'): Promise<number> {
    const res = await api().post('/v1/todos').set('Authorization', bearer(owner.token)).send({ title });
    expect(res.status).toBe(201);
    return res.body.id as number;
  }

  /** The deliveries of webhook `id` as its owner lists them. */
  async function deliveries(owner: CreatedUser, id: number): Promise<Array<Record<string, any>>> {
    const res = await api().get(`/v1/webhooks/${id}/deliveries`).set('Authorization', bearer(owner.token));
    expect(res.status).toBe(200);
    return res.body.data;
  }

  /** Verifies a received request with `standardwebhooks` and `secret`; returns the parsed payload. */
  function verified(entry: Received, secret: string): Record<string, any> {
    const headers = {
      'webhook-id': String(entry.headers['webhook-id']),
      'webhook-timestamp': String(entry.headers['webhook-timestamp']),
      'webhook-signature': String(entry.headers['webhook-signature']),
    };
    return new Webhook(secret).verify(entry.body, headers) as Record<string, any>;
  }

  describe('subscriptions: /v1/webhooks', () => {
    it('POST → 201 with Location and the whsec_ secret once; GET one and list never show it', async () => {
      const res = await api()
        .post('/v1/webhooks')
        .set('Authorization', bearer(alice.token))
        .send({ url: receiver.url('/ok-a'), events: ['todo.created', 'todo.updated'], description: 'mine' });
      expect(res.status).toBe(201);
      expect(res.headers.location).toBe(`/v1/webhooks/${res.body.id}`);
      expect(res.body).toEqual({
        id: expect.any(Number),
        url: receiver.url('/ok-a'),
        events: ['todo.created', 'todo.updated'],
        description: 'mine',
        api_version: '1',
        enabled: true,
        disabled_reason: null,
        consecutive_failures: 0,
        previous_secret_expires_at: null,
        owner: alice.user.id,
        created_at: expect.stringMatching(ISO_MS),
        updated_at: expect.stringMatching(ISO_MS),
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/),
        links: [
          { rel: 'self', href: `/v1/webhooks/${res.body.id}` },
          { rel: 'owner', href: `/v1/users/${alice.user.id}` },
          { rel: 'deliveries', href: `/v1/webhooks/${res.body.id}/deliveries` },
        ],
      });
      const secret = res.body.secret as string;
      const one = await api().get(`/v1/webhooks/${res.body.id}`).set('Authorization', bearer(alice.token));
      expect(one.status).toBe(200);
      expect(one.headers.etag).toMatch(/^"/);
      expect(one.body).not.toHaveProperty('secret');
      expect(one.text).not.toContain(secret.slice(6));
      const list = await api().get('/v1/webhooks').set('Authorization', bearer(alice.token));
      expect(list.status).toBe(200);
      expect(list.text).not.toContain(secret.slice(6));
      expect(list.body.data.map((w: { id: number }) => w.id)).toContain(res.body.id);
      const v2 = await api().get(`/v2/webhooks/${res.body.id}`).set('Authorization', bearer(alice.token));
      expect(v2.status).toBe(200);
      expect(v2.body.links[0]).toEqual({ rel: 'self', href: `/v2/webhooks/${res.body.id}` });
    });

    it("another user's webhook does not exist for them (404 on GET, PATCH, DELETE, deliveries, rotation); lists show only their own; admins see all", async () => {
      const hook = await subscribe(alice, '/ok-private');
      for (const send of [
        () => api().get(`/v1/webhooks/${hook.id}`),
        () => api().patch(`/v1/webhooks/${hook.id}`).send({ enabled: false }),
        () => api().delete(`/v1/webhooks/${hook.id}`),
        () => api().get(`/v1/webhooks/${hook.id}/deliveries`),
        () => api().post(`/v1/webhooks/${hook.id}/secret-rotations`),
      ]) {
        const res = await send().set('Authorization', bearer(bob.token));
        expect([res.status, res.body]).toEqual([404, errorBody('not_found', `webhook ${hook.id} not found`)]);
      }
      const bobs = await api().get('/v1/webhooks').set('Authorization', bearer(bob.token));
      expect(bobs.body.data.every((w: { owner: number }) => w.owner === bob.user.id)).toBe(true);
      const all = await api().get('/v1/webhooks').set('Authorization', bearer(admin.token));
      expect(all.body.data.map((w: { id: number }) => w.id)).toContain(hook.id);
      const still = await api().get(`/v1/webhooks/${hook.id}`).set('Authorization', bearer(alice.token));
      expect(still.body.enabled).toBe(true);
    });

    it('PATCH changes url, events, description and enabled; DELETE → 204 then 404', async () => {
      const hook = await subscribe(alice, '/ok-patch', ['todo.created']);
      const res = await api()
        .patch(`/v1/webhooks/${hook.id}`)
        .set('Authorization', bearer(alice.token))
        .send({ url: receiver.url('/ok-patched'), events: ['todo.deleted', '*'], description: null, enabled: false });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ url: receiver.url('/ok-patched'), events: ['*'], description: null, enabled: false });
      const gone = await api().delete(`/v1/webhooks/${hook.id}`).set('Authorization', bearer(alice.token));
      expect(gone.status).toBe(204);
      const again = await api().get(`/v1/webhooks/${hook.id}`).set('Authorization', bearer(alice.token));
      expect(again.status).toBe(404);
    });

    it('hostile input: huge url → 422, NUL → 400, prototype keys → 400, unknown or no event types → 422, secret in the body → 400', async () => {
      const post = (body: unknown) =>
        api()
          .post('/v1/webhooks')
          .set('Authorization', bearer(alice.token))
          .send(body as object);
      const huge = await post({ url: `https://example.com/${'a'.repeat(3000)}`, events: ['*'] });
      expect([huge.status, huge.body.details?.[0]?.field]).toEqual([422, 'url']);
      const nul = await post({ url: 'https://example.com/\u0000', events: ['*'] });
      expect(nul.status).toBe(400);
      const proto = await api()
        .post('/v1/webhooks')
        .set('Authorization', bearer(alice.token))
        .set('Content-Type', 'application/json')
        .send('{"url":"https://example.com/","events":["*"],"__proto__":{"enabled":false}}');
      expect(proto.status).toBe(400);
      const unknown = await post({ url: receiver.url('/ok'), events: ['todo.exploded'] });
      expect([unknown.status, unknown.body.details?.[0]?.field]).toEqual([422, 'events']);
      const none = await post({ url: receiver.url('/ok'), events: [] });
      expect(none.status).toBe(422);
      const notArray = await post({ url: receiver.url('/ok'), events: 'todo.created' });
      expect(notArray.status).toBe(400);
      const withSecret = await post({ url: receiver.url('/ok'), events: ['*'], secret: 'whsec_chosen' });
      expect([withSecret.status, withSecret.body.details?.[0]?.field]).toEqual([400, 'secret']);
      const creds = await post({ url: 'http://user:pw@127.0.0.1/', events: ['*'] });
      expect([creds.status, creds.body.details]).toEqual([422, [{ field: 'url', message: 'url must not contain credentials' }]]);
      const wrongVersion = await post({ url: receiver.url('/ok'), events: ['*'], api_version: '3' });
      expect(wrongVersion.status).toBe(422);
    });

    it('API keys need webhooks:read to read and webhooks:write to change (403 otherwise)', async () => {
      const key = async (scopes: string[]) => {
        const res = await api().post('/v1/api-keys').set('Authorization', bearer(alice.token)).send({ name: 'hooks', scopes });
        expect(res.status).toBe(201);
        return res.body.key as string;
      };
      const reader = await key(['webhooks:read']);
      const writer = await key(['webhooks:write']);
      const other = await key(['todos:read', 'todos:write']);
      const body = { url: receiver.url('/ok-key'), events: ['todo.created'] };
      expect((await api().get('/v1/webhooks').set('X-API-Key', reader)).status).toBe(200);
      expect((await api().post('/v1/webhooks').set('X-API-Key', reader).send(body)).status).toBe(403);
      expect((await api().get('/v1/webhooks').set('X-API-Key', other)).status).toBe(403);
      const created = await api().post('/v1/webhooks').set('X-API-Key', writer).send(body);
      expect(created.status).toBe(201);
      expect((await api().post(`/v1/webhooks/${created.body.id}/secret-rotations`).set('X-API-Key', reader)).status).toBe(403);
    });
  });

  describe('delivery', () => {
    beforeEach(async () => {
      // each test starts without subscriptions of earlier ones
      await dataSource.query('DELETE FROM webhook_deliveries');
      await dataSource.query('DELETE FROM webhook_subscriptions');
    });

    it('a committed change is delivered signed (standardwebhooks verifies it), to the owner and admins only', async () => {
      const mine = await subscribe(alice, '/ok-alice', ['todo.created']);
      const bobs = await subscribe(bob, '/ok-bob', ['*']);
      const admins = await subscribe(admin, '/ok-admin', ['todo.created']);
      const todoId = await createTodo(alice, 'Signed');
      await waitFor('deliveries to alice and the admin', () => receiver.to('/ok-alice').length === 1 && receiver.to('/ok-admin').length === 1);
      await sleep(300);
      expect(receiver.to('/ok-bob')).toHaveLength(0);
      const entry = receiver.to('/ok-alice')[0];
      const payload = verified(entry, mine.secret);
      expect(payload).toEqual({
        id: entry.headers['webhook-id'],
        type: 'todo.created',
        timestamp: expect.stringMatching(ISO_MS),
        data: expect.objectContaining({ id: todoId, title: 'Signed', owner: alice.user.id }),
      });
      expect(entry.headers['webhook-id']).toMatch(/^evt_[0-9a-f]{32}$/);
      expect(entry.headers['content-type']).toBe('application/json');
      expect(entry.headers['user-agent']).toMatch(/^resource-api-webhooks\/\d+\.\d+\.\d+/);
      expect(Math.abs(Number(entry.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
      expect(() => verified(entry, bobs.secret)).toThrow();
      const adminEntry = receiver.to('/ok-admin')[0];
      expect(verified(adminEntry, admins.secret).id).toBe(entry.headers['webhook-id']);
      await waitFor('the delivery recorded as delivered', async () => (await deliveries(alice, mine.id))[0]?.status === 'delivered');
      const [delivery] = await deliveries(alice, mine.id);
      expect(delivery).toEqual({
        id: expect.any(Number),
        webhook: mine.id,
        event_id: entry.headers['webhook-id'],
        event_type: 'todo.created',
        status: 'delivered',
        attempts: 1,
        next_attempt_at: null,
        last_attempt_at: expect.stringMatching(ISO_MS),
        last_status_code: 204,
        last_error: null,
        delivered_at: expect.stringMatching(ISO_MS),
        created_at: expect.stringMatching(ISO_MS),
        links: [
          { rel: 'self', href: `/v1/webhooks/${mine.id}/deliveries/${delivery.id}` },
          { rel: 'webhook', href: `/v1/webhooks/${mine.id}` },
        ],
      });
      const one = await api().get(`/v1/webhooks/${mine.id}/deliveries/${delivery.id}`).set('Authorization', bearer(alice.token));
      expect([one.status, one.body.id]).toEqual([200, delivery.id]);
      const notOfBob = await api().get(`/v1/webhooks/${bobs.id}/deliveries/${delivery.id}`).set('Authorization', bearer(bob.token));
      expect(notOfBob.status).toBe(404);
    });

    it('api_version 2 subscriptions receive the v2 shape of the resource', async () => {
      const v2 = await subscribe(alice, '/ok-v2', ['todo.created'], { api_version: '2' });
      const todoId = await createTodo(alice, 'Shape');
      await waitFor('the v2 delivery', () => receiver.to('/ok-v2').length === 1);
      const payload = verified(receiver.to('/ok-v2')[0], v2.secret);
      expect(payload.data.id).toBe(todoId);
      expect(JSON.stringify(payload.data)).toContain(`/v2/todos/${todoId}`);
    });

    it('a receiver failing twice then succeeding gets three attempts under one webhook-id', async () => {
      const hook = await subscribe(alice, '/flaky', ['todo.created']);
      await createTodo(alice, 'Retry me');
      await waitFor('three attempts', () => receiver.to('/flaky').length >= 3, 20_000);
      await sleep(1500);
      const got = receiver.to('/flaky');
      expect(got.map((entry) => entry.answered)).toEqual([500, 500, 200]);
      expect(new Set(got.map((entry) => entry.headers['webhook-id'])).size).toBe(1);
      for (const entry of got) verified(entry, hook.secret);
      await waitFor('delivered', async () => (await deliveries(alice, hook.id))[0]?.status === 'delivered');
      expect((await deliveries(alice, hook.id))[0]).toMatchObject({ status: 'delivered', attempts: 3, last_status_code: 200, last_error: null });
    });

    it('/metrics counts attempts by outcome (retry, delivered, gone) and reports the outbox backlog and the age of its oldest due delivery', async () => {
      const scrape = async () => {
        const res = await api().get('/metrics');
        expect(res.status).toBe(200);
        return parseSamples(res.text);
      };
      const attempts = (samples: Sample[], outcome: string) => total(samples, 'webhook_delivery_attempts_total', { outcome });
      const before = await scrape();
      expect(before.some((sample) => sample.name === 'webhook_delivery_attempts_total')).toBe(true);
      const flaky = await subscribe(bob, '/flaky-metrics', ['todo.created']);
      const gone = await subscribe(bob, '/gone-metrics', ['todo.created']);
      await createTodo(bob, 'Counted');
      await waitFor('delivered on the third attempt', async () => (await deliveries(bob, flaky.id))[0]?.status === 'delivered', 20_000);
      await waitFor('the 410 recorded', async () => (await deliveries(bob, gone.id))[0]?.status === 'failed');
      const after = await scrape();
      // other tests' retries may run meanwhile: at least this test's attempts
      expect(attempts(after, 'retry')).toBeGreaterThanOrEqual(attempts(before, 'retry') + 2);
      expect(attempts(after, 'delivered')).toBeGreaterThanOrEqual(attempts(before, 'delivered') + 1);
      expect(attempts(after, 'gone')).toBe(attempts(before, 'gone') + 1);

      // a delivery scheduled 10 min ahead (pending) and one claimed by a live lease (delivering): the worker leaves both alone
      const { readOutboxBacklog } = await import('../src/webhooks/webhook-metrics.js');
      const [{ event_id: eventId }] = (await dataSource.query(`SELECT event_id FROM webhook_deliveries WHERE subscription_id = ${flaky.id}`)) as {
        event_id: string;
      }[];
      const scheduled = new Date(Date.now() + 600_000);
      const rows = [
        {
          subscription_id: flaky.id,
          event_id: eventId,
          event_type: 'todo.created',
          status: 'pending',
          attempts: 1,
          next_attempt_at: scheduled,
          created_at: new Date(),
        },
        {
          subscription_id: flaky.id,
          event_id: eventId,
          event_type: 'todo.created',
          status: 'delivering',
          attempts: 2,
          next_attempt_at: scheduled,
          lease_expires_at: scheduled,
          claim_token: 'metrics-test-claim',
          created_at: new Date(),
        },
      ];
      const inserted = await dataSource.createQueryBuilder().insert().into('webhook_deliveries').values(rows).execute();
      try {
        const samples = await scrape();
        expect(total(samples, 'webhook_outbox_backlog', { state: 'pending' })).toBeGreaterThanOrEqual(1);
        expect(total(samples, 'webhook_outbox_backlog', { state: 'delivering' })).toBeGreaterThanOrEqual(1);
        const age = total(samples, 'webhook_outbox_oldest_due_age_seconds');
        expect(age).toBeGreaterThanOrEqual(0);
        expect(age).toBeLessThan(60); // the worker keeps up: nothing long overdue
        // seen 30 s after it is due, the scheduled delivery is (at least) 30 s overdue
        const later = await readOutboxBacklog(dataSource, new Date(scheduled.getTime() + 30_000));
        expect(later.pending).toBeGreaterThanOrEqual(1);
        expect(later.delivering).toBeGreaterThanOrEqual(1);
        expect(later.oldestDueAgeSeconds).toBeGreaterThanOrEqual(30);
        // a disabled webhook's deliveries are not work: they leave the backlog
        const counted = await readOutboxBacklog(dataSource);
        await api().patch(`/v1/webhooks/${flaky.id}`).set('Authorization', bearer(bob.token)).send({ enabled: false }).expect(200);
        const disabled = await readOutboxBacklog(dataSource);
        expect(disabled.delivering).toBe(counted.delivering - 1);
      } finally {
        const ids = inserted.identifiers.map((row) => Number(row.id));
        await dataSource.query(`DELETE FROM webhook_deliveries WHERE id IN (${ids.join(', ')})`);
      }
    });

    it('410 Gone disables the subscription at once; later events are not delivered', async () => {
      const hook = await subscribe(alice, '/gone', ['todo.created']);
      await createTodo(alice);
      await waitFor('the 410', () => receiver.to('/gone').length === 1);
      await waitFor(
        'the webhook disabled',
        async () => (await api().get(`/v1/webhooks/${hook.id}`).set('Authorization', bearer(alice.token))).body.enabled === false,
      );
      const read = await api().get(`/v1/webhooks/${hook.id}`).set('Authorization', bearer(alice.token));
      expect(read.body).toMatchObject({ enabled: false, disabled_reason: 'the endpoint answered 410 Gone' });
      expect((await deliveries(alice, hook.id))[0]).toMatchObject({ status: 'failed', attempts: 1, last_status_code: 410 });
      await createTodo(alice);
      await sleep(1500);
      expect(receiver.to('/gone')).toHaveLength(1);
    });

    it('a receiver that never answers times out (WEBHOOK_TIMEOUT_MS) and is retried; after the last attempt the delivery fails', async () => {
      const hook = await subscribe(alice, '/slow', ['todo.created']);
      await createTodo(alice);
      await waitFor('four attempts', () => receiver.to('/slow').length === 4, 20_000);
      await waitFor('failed', async () => (await deliveries(alice, hook.id))[0]?.status === 'failed');
      expect((await deliveries(alice, hook.id))[0]).toMatchObject({
        status: 'failed',
        attempts: 4,
        last_status_code: null,
        last_error: 'timeout after 300 ms',
      });
      const read = await api().get(`/v1/webhooks/${hook.id}`).set('Authorization', bearer(alice.token));
      expect(read.body).toMatchObject({ enabled: true, consecutive_failures: 1 });
    });

    it('a 302 is not followed: a failure, retried, the redirect target never called; two failed deliveries in a row disable the webhook', async () => {
      const hook = await subscribe(alice, '/redirect', ['todo.created']);
      await createTodo(alice);
      await createTodo(alice);
      await waitFor('both deliveries failed', async () => (await deliveries(alice, hook.id)).filter((d) => d.status === 'failed').length === 2, 20_000);
      expect(receiver.to('/ok-redirected')).toHaveLength(0);
      expect(receiver.to('/redirect').length).toBe(8);
      expect((await deliveries(alice, hook.id))[0]).toMatchObject({ last_status_code: 302, last_error: 'HTTP 302 (redirects are not followed)' });
      const read = await api().get(`/v1/webhooks/${hook.id}`).set('Authorization', bearer(alice.token));
      expect(read.body).toMatchObject({ enabled: false, consecutive_failures: 2, disabled_reason: '2 deliveries in a row failed after their last attempt' });
      // enabling again clears the reason and the count
      const enabled = await api().patch(`/v1/webhooks/${hook.id}`).set('Authorization', bearer(alice.token)).send({ enabled: true });
      expect(enabled.body).toMatchObject({ enabled: true, consecutive_failures: 0, disabled_reason: null });
    });

    it('secret rotation: 201 with a new secret; during the grace period every delivery carries both signatures, each verifies', async () => {
      const hook = await subscribe(alice, '/ok-rotate', ['todo.created']);
      const rotated = await api().post(`/v1/webhooks/${hook.id}/secret-rotations`).set('Authorization', bearer(alice.token));
      expect(rotated.status).toBe(201);
      expect(rotated.body.secret).toMatch(/^whsec_/);
      expect(rotated.body.secret).not.toBe(hook.secret);
      expect(new Date(rotated.body.previous_secret_expires_at).getTime()).toBeGreaterThan(Date.now() + 3500_000);
      await createTodo(alice);
      await waitFor('the delivery', () => receiver.to('/ok-rotate').length === 1);
      const entry = receiver.to('/ok-rotate')[0];
      expect(String(entry.headers['webhook-signature']).split(' ')).toHaveLength(2);
      expect(verified(entry, rotated.body.secret).type).toBe('todo.created');
      expect(verified(entry, hook.secret).type).toBe('todo.created');
    });
    it('secret rotation honours If-Match as its documents say: a stale tag → 412 and the secret stays; the current tag → 201 with the next tag', async () => {
      const hook = await subscribe(alice, '/ok-rotate-if-match', ['todo.created']);
      const read = await api().get(`/v1/webhooks/${hook.id}`).set('Authorization', bearer(alice.token));
      const tag = read.headers.etag as string;
      expect(tag).toMatch(/^"\d+\.v1"$/);
      const stale = await api().post(`/v1/webhooks/${hook.id}/secret-rotations`).set('Authorization', bearer(alice.token)).set('If-Match', '"999.v1"');
      expect(stale.status).toBe(412);
      expect(stale.body).toMatchObject({ code: 'precondition_failed' });
      expect((await api().get(`/v1/webhooks/${hook.id}`).set('Authorization', bearer(alice.token))).headers.etag).toBe(tag);
      const rotated = await api().post(`/v1/webhooks/${hook.id}/secret-rotations`).set('Authorization', bearer(alice.token)).set('If-Match', tag);
      expect(rotated.status).toBe(201);
      expect(rotated.body.secret).not.toBe(hook.secret);
      expect(rotated.headers.etag).toBe(`"${Number(tag.slice(1).split('.')[0]) + 1}.v1"`);
    });

    it('redelivery: 202, a new delivery of the same event under the same webhook-id; 409 while one is pending; 404 for a delivery of another webhook', async () => {
      const hook = await subscribe(alice, '/ok-redeliver', ['todo.created']);
      const other = await subscribe(alice, '/ok-other', ['todo.updated']);
      await createTodo(alice);
      await waitFor('first delivery recorded', async () => (await deliveries(alice, hook.id))[0]?.status === 'delivered');
      const [first] = await deliveries(alice, hook.id);
      const res = await api().post(`/v1/webhooks/${hook.id}/redeliveries`).set('Authorization', bearer(alice.token)).send({ delivery_id: first.id });
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ webhook: hook.id, event_id: first.event_id, status: 'pending', attempts: 0 });
      expect(res.body.id).not.toBe(first.id);
      await waitFor('the redelivery', () => receiver.to('/ok-redeliver').length === 2);
      const ids = receiver.to('/ok-redeliver').map((entry) => entry.headers['webhook-id']);
      expect(ids).toEqual([first.event_id, first.event_id]);
      const wrong = await api().post(`/v1/webhooks/${other.id}/redeliveries`).set('Authorization', bearer(alice.token)).send({ delivery_id: first.id });
      expect(wrong.status).toBe(404);
      const bad = await api().post(`/v1/webhooks/${hook.id}/redeliveries`).set('Authorization', bearer(alice.token)).send({ delivery_id: 'one' });
      expect(bad.status).toBe(400);
      // a redelivery while one of the event is still pending: 409
      await dataSource.query(`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = NULL WHERE id = ${Number(res.body.id)}`);
      const busy = await api().post(`/v1/webhooks/${hook.id}/redeliveries`).set('Authorization', bearer(alice.token)).send({ delivery_id: first.id });
      expect([busy.status, busy.body.code]).toEqual([409, 'conflict']);
    });

    it('a rolled-back write emits nothing: no delivery row, nothing received; the same write committed is delivered', async () => {
      const { EventOutbox } = await import('../src/events/event-outbox.js');
      const outbox = app.get(EventOutbox);
      await subscribe(alice, '/ok-tx', ['todo.created']);
      const event = { type: 'todo.created' as const, ownerId: alice.user.id, resourceId: 999, data: { v1: { id: 999 }, v2: { id: 999 } } };
      await expect(
        dataSource.transaction(async (manager) => {
          await outbox.append(manager, event);
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      await sleep(800);
      expect(receiver.to('/ok-tx')).toHaveLength(0);
      expect(await dataSource.query('SELECT id FROM webhook_deliveries')).toEqual([]);
      await dataSource.transaction(async (manager) => {
        await outbox.append(manager, event);
      });
      await waitFor('the committed event', () => receiver.to('/ok-tx').length === 1);
    });

    it('the due query and the deliveries list are served by their indexes (EXPLAIN on 6,000 deliveries)', async () => {
      const { EventOutbox } = await import('../src/events/event-outbox.js');
      const { dueDeliveriesSql } = await import('../src/webhooks/webhook-worker.js');
      const outbox = app.get(EventOutbox);
      const hook = await subscribe(alice, '/ok-explain', ['todo.deleted']);
      // disabled: the worker leaves the rows alone while they are explained
      await api().patch(`/v1/webhooks/${hook.id}`).set('Authorization', bearer(alice.token)).send({ enabled: false });
      const stored = await dataSource.transaction((manager) =>
        outbox.append(manager, { type: 'todo.created', ownerId: null, resourceId: null, data: { v1: {}, v2: {} } }),
      );
      const postgres = dataSource.options.type === 'postgres';
      const rows = Array.from({ length: 6000 }, (_, i) => ({
        subscription_id: hook.id,
        event_id: stored.id,
        event_type: 'todo.created',
        status: i % 100 === 0 ? 'pending' : 'delivered',
        attempts: 1,
        next_attempt_at: i % 100 === 0 ? new Date(Date.now() + 3600_000) : null,
        created_at: new Date(),
      }));
      for (let i = 0; i < rows.length; i += 500)
        await dataSource
          .createQueryBuilder()
          .insert()
          .into('webhook_deliveries')
          .values(rows.slice(i, i + 500))
          .execute();
      const { OUTBOX_BACKLOG_SQL } = await import('../src/webhooks/webhook-metrics.js');
      const due = dueDeliveriesSql(postgres, 8);
      const list = "SELECT d.id FROM webhook_deliveries d WHERE d.subscription_id = 1 AND d.status = 'failed' ORDER BY d.id LIMIT 21";
      if (postgres) {
        await dataSource.query('ANALYZE webhook_deliveries');
        type Node = { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; Plans?: Node[] };
        const nodes = (node: Node): Node[] => [node, ...(node.Plans ?? []).flatMap(nodes)];
        const plan = async (sql: string, params: unknown[] = []) => {
          const [row] = (await dataSource.query(`EXPLAIN (FORMAT JSON) ${sql}`, params)) as Array<{ 'QUERY PLAN': Array<{ Plan: Node }> }>;
          return nodes(row['QUERY PLAN'][0].Plan);
        };
        for (const [sql, params, index] of [
          [due, [new Date()], 'idx_webhook_deliveries_status_next_attempt_at'],
          [list, [], 'idx_webhook_deliveries_subscription_id_status_id'],
          [OUTBOX_BACKLOG_SQL, [], 'idx_webhook_deliveries_status_next_attempt_at'],
        ] as const) {
          const scans = await plan(sql, [...params]);
          expect(scans.filter((node) => node['Relation Name'] === 'webhook_deliveries').map((node) => node['Node Type'])).not.toContain('Seq Scan');
          expect(scans.map((node) => node['Index Name'])).toContain(index);
        }
      } else {
        const plan = async (sql: string, params: unknown[] = []) => JSON.stringify(await dataSource.query(`EXPLAIN QUERY PLAN ${sql}`, params));
        const duePlan = (await dataSource.query(`EXPLAIN QUERY PLAN ${due}`, ['2026-01-01 00:00:00.000'])) as Array<{ detail: string }>;
        // one ordered range per status, cut at the limit; only the outer sort of those few rows uses a temporary B-tree
        expect(duePlan.filter((row) => row.detail.includes('idx_webhook_deliveries_status_next_attempt_at'))).toHaveLength(2);
        expect(duePlan.filter((row) => row.detail.includes('TEMP B-TREE')).map((row) => row.detail)).toEqual(['USE TEMP B-TREE FOR ORDER BY']);
        expect(duePlan.at(-1)?.detail).toBe('USE TEMP B-TREE FOR ORDER BY');
        expect(await plan(list)).toContain('idx_webhook_deliveries_subscription_id_status_id');
        expect(await plan(OUTBOX_BACKLOG_SQL)).toContain('idx_webhook_deliveries_status_next_attempt_at');
      }
    });

    it('30 concurrent writes: each event delivered exactly once', async () => {
      await subscribe(alice, '/ok-burst', ['todo.created']);
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          api()
            .post('/v1/todos')
            .set('Authorization', bearer(alice.token))
            .send({ title: `burst ${i}` }),
        ),
      );
      expect(results.map((res) => res.status)).toEqual(Array(30).fill(201));
      await waitFor('30 deliveries', () => receiver.to('/ok-burst').length >= 30, 20_000);
      await sleep(500);
      const ids = receiver.to('/ok-burst').map((entry) => entry.headers['webhook-id']);
      expect(ids).toHaveLength(30);
      expect(new Set(ids).size).toBe(30);
    });
  });
});

describe('SSRF rules with the defaults (https only, no private networks)', () => {
  let strict: NestExpressApplication;
  let strictFresh: FreshApp & { restoreEnv: () => void };
  let owner: CreatedUser;
  const strictApi = () => request(strict.getHttpServer());

  beforeAll(async () => {
    strictFresh = await loadFreshApp({
      WEBHOOK_ALLOW_HTTP: undefined,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: undefined,
      WEBHOOK_RETRY_SCHEDULE: '1',
      WEBHOOK_TIMEOUT_MS: '300',
      WEBHOOK_POLL_INTERVAL_MS: '100',
    });
    strict = await strictFresh.createTestApp();
    const { WebhookWorker } = await import('../src/webhooks/webhook-worker.js');
    strict.get(WebhookWorker).start();
    owner = await strictFresh.createUser(strict);
  });
  afterAll(async () => {
    await strict?.close();
    strictFresh?.restoreEnv();
  });

  it('refuses loopback, private, link-local, IPv6 loopback, a name resolving to loopback and http: → 422 naming url', async () => {
    const cases: Array<[string, string]> = [
      ['https://127.0.0.1/hook', 'non-public'],
      ['https://10.0.0.1/hook', 'non-public'],
      ['https://[::1]/hook', 'non-public'],
      ['https://169.254.169.254/latest/meta-data', 'non-public'],
      ['https://[::ffff:127.0.0.1]/hook', 'non-public'],
      ['https://localhost/hook', 'non-public'],
      ['https://100.64.0.1/hook', 'non-public'],
      [`http://example.com/hook`, 'url must use https'],
    ];
    for (const [url, reason] of cases) {
      const res = await strictApi()
        .post('/v1/webhooks')
        .set('Authorization', bearer(owner.token))
        .send({ url, events: ['*'] });
      expect([url, res.status, res.body.code, res.body.details?.[0]?.field]).toEqual([url, 422, 'validation_failed', 'url']);
      expect(res.body.details[0].message).toContain(reason);
    }
    const list = await strictApi().get('/v1/webhooks').set('Authorization', bearer(owner.token));
    expect(list.body.data).toEqual([]);
  });

  it('checks again at delivery time: a stored URL that now resolves to loopback is refused, the receiver never called', async () => {
    const strictData = strict.get(strictFresh.DataSource);
    const now = new Date();
    await strictData.getRepository('WebhookSubscription').insert({
      owner_id: owner.user.id,
      url: `https://127.0.0.1:${receiver.port}/ok-rebound`,
      events: '["*"]',
      description: null,
      enabled: true,
      api_version: '1',
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      consecutive_failures: 0,
      created_at: now,
      updated_at: now,
    });
    const todo = await strictApi().post('/v1/todos').set('Authorization', bearer(owner.token)).send({ title: 'rebound' });
    expect(todo.status).toBe(201);
    await waitFor('the refused attempts', async () => {
      const rows: Array<{ status: string; last_error: string | null }> = await strictData.query('SELECT status, last_error FROM webhook_deliveries');
      return rows.length === 1 && rows[0].status === 'failed';
    });
    const [row]: Array<{ last_error: string; attempts: number }> = await strictData.query('SELECT last_error, attempts FROM webhook_deliveries');
    expect(row.last_error).toMatch(/^refused: url must not resolve to a loopback/);
    expect(Number(row.attempts)).toBe(2);
    expect(receiver.to('/ok-rebound')).toHaveLength(0);
  });
});
