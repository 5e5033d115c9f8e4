import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Order, OrderItem, type Currency, type OrderStatus } from '../src/orders/order.entity.js';
import type { User } from '../src/users/user.entity.js';
import { bearer, createUser } from './factories/user.factory.js';
import { createTestApp, truncateAll } from './setup/test-app.js';
import { errorBody } from './setup/error-body.js';
import { ISO_MS } from './setup/formats.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Item {
  sku: string;
  quantity: number;
  unit_price_cents: number;
}

type Caller = { user: User; token: string };
type Body = Record<string, any>;

/** The response object of an order (docs/resources/orders.md), for exact comparisons. */
function orderShape(fields: { id: number; items: Item[]; currency: Currency; status: OrderStatus; total_cents: number; user: number }) {
  return {
    ...fields,
    created_at: expect.stringMatching(ISO_MS),
    updated_at: expect.stringMatching(ISO_MS),
    links: [
      { rel: 'self', href: `/v1/orders/${fields.id}` },
      { rel: 'user', href: `/v1/users/${fields.user}` },
    ],
  };
}

/** The ErrorResp body (docs/errors.md#the-body) without details. */

/** An envelope link's path and its query parameters (each name → all its values), order-insensitive. */
function parseHref(href: string): { path: string; query: Record<string, string[]> } {
  const url = new URL(href, 'http://localhost');
  const query: Record<string, string[]> = {};
  for (const [name, value] of url.searchParams) (query[name] ??= []).push(value);
  for (const values of Object.values(query)) values.sort();
  return { path: url.pathname, query };
}

const linkOf = (links: Array<{ rel: string; href: string }>, rel: string) => links.find((link) => link.rel === rel);

/** Two lines, deliberately not in sku order: 2 × 1999 + 1 × 500 = 4498 cents. */
const ITEMS: Item[] = [
  { sku: 'ZED-1', quantity: 2, unit_price_cents: 1999 },
  { sku: 'ALPHA-2', quantity: 1, unit_price_cents: 500 },
];
const ITEMS_TOTAL = 4498;

describe('orders (docs/writes.md, docs/resources/orders.md)', () => {
  let app: NestExpressApplication;
  let dataSource: DataSource;
  let alice: Caller;
  let bob: Caller;
  let admin: Caller;

  const http = () => request(app.getHttpServer());
  const as = (caller: Caller) => ({
    get: (path: string) => http().get(path).set('Authorization', bearer(caller.token)),
    post: (body: object) => http().post('/v1/orders').set('Authorization', bearer(caller.token)).send(body),
    put: (id: number, body: object) => http().put(`/v1/orders/${id}`).set('Authorization', bearer(caller.token)).send(body),
    patch: (id: number, body: object) => http().patch(`/v1/orders/${id}`).set('Authorization', bearer(caller.token)).send(body),
    delete: (id: number) => http().delete(`/v1/orders/${id}`).set('Authorization', bearer(caller.token)),
  });

  /** Creates an order through the API; returns the response body. */
  async function postOrder(caller: Caller, body: object = { items: ITEMS, currency: 'EUR' }): Promise<Body> {
    const res = await as(caller).post(body);
    expect(res.status).toBe(201);
    return res.body;
  }

  /** Puts an order into `status` straight in the database (fixtures for the later states). */
  async function forceStatus(id: number, status: OrderStatus): Promise<void> {
    await dataSource.getRepository(Order).update({ id }, { status });
  }

  /** The order as stored now, read as its owner. */
  async function readAs(caller: Caller, id: number): Promise<Body> {
    const res = await as(caller).get(`/v1/orders/${id}`);
    expect(res.status).toBe(200);
    return res.body;
  }

  beforeAll(async () => {
    app = await createTestApp();
    dataSource = app.get(DataSource);
    alice = await createUser(app);
    bob = await createUser(app);
    admin = await createUser(app, { role: 'admin' });
  });
  afterAll(async () => {
    await app.close();
  });

  describe('POST /v1/orders', () => {
    it('creates a pending order of the caller: 201, Location, computed total, items in the order sent', async () => {
      const res = await as(alice).post({ items: ITEMS, currency: 'EUR' });
      expect(res.status).toBe(201);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body.id).toEqual(expect.any(Number));
      expect(res.body).toEqual(
        orderShape({ id: res.body.id, items: ITEMS, currency: 'EUR', status: 'pending', total_cents: ITEMS_TOTAL, user: alice.user.id }),
      );
      expect(typeof res.body.total_cents).toBe('number');
      expect(res.headers.location).toBe(`/v1/orders/${res.body.id}`);
      expect(res.body.created_at).toBe(res.body.updated_at);
      expect(Math.abs(Date.parse(res.body.created_at) - Date.now())).toBeLessThan(60_000);

      const read = await as(alice).get(res.headers.location);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(res.body);
    });

    it('keeps the order of many items', async () => {
      const items = Array.from({ length: 12 }, (_, i) => ({ sku: `SKU-${(12 - i) % 5}-${i}`, quantity: (i % 3) + 1, unit_price_cents: 100 * (12 - i) }));
      const body = await postOrder(alice, { items, currency: 'GBP' });
      expect(body.items).toEqual(items);
      expect(body.total_cents).toBe(items.reduce((sum, item) => sum + item.quantity * item.unit_price_cents, 0));
    });

    it('accepts 100 items, the largest quantity and price, and a price of 0; the total stays an exact number', async () => {
      const items = Array.from({ length: 100 }, (_, i) => ({ sku: `S${i}`, quantity: 1000, unit_price_cents: i === 0 ? 0 : 1_000_000_000 }));
      const body = await postOrder(alice, { items, currency: 'USD' });
      expect(body.items).toHaveLength(100);
      expect(body.items[0]).toEqual({ sku: 'S0', quantity: 1000, unit_price_cents: 0 });
      expect(body.total_cents).toBe(99 * 1000 * 1_000_000_000);
      expect(await readAs(alice, body.id)).toEqual(body);
    });

    it('accepts a sku of 64 characters and status "pending"', async () => {
      const items = [{ sku: 'k'.repeat(64), quantity: 1, unit_price_cents: 1 }];
      const body = await postOrder(alice, { items, currency: 'EUR', status: 'pending' });
      expect(body).toEqual(orderShape({ id: body.id, items, currency: 'EUR', status: 'pending', total_cents: 1, user: alice.user.id }));
    });

    it('ignores the read-only user, total_cents, id, timestamps and links', async () => {
      const res = await as(alice).post({
        id: 999,
        items: ITEMS,
        currency: 'USD',
        user: bob.user.id,
        total_cents: 1,
        created_at: '2000-01-01T00:00:00.000Z',
        updated_at: '2000-01-01T00:00:00.000Z',
        links: [],
      });
      expect(res.status).toBe(201);
      expect(res.body.id).not.toBe(999);
      expect(res.body).toEqual(
        orderShape({ id: res.body.id, items: ITEMS, currency: 'USD', status: 'pending', total_cents: ITEMS_TOTAL, user: alice.user.id }),
      );
      expect(res.body.created_at).not.toBe('2000-01-01T00:00:00.000Z');
    });

    it('answers a status other than pending with 422: orders start pending', async () => {
      for (const status of ['paid', 'shipped', 'finished']) {
        const res = await as(alice).post({ items: ITEMS, currency: 'EUR', status });
        expect(res.status).toBe(422);
        expect(res.body).toEqual({
          error: 'status must be pending: orders start pending',
          code: 'validation_failed',
          details: [{ field: 'status', message: 'status must be pending: orders start pending' }],
          request_id: expect.any(String),
        });
      }
    });

    it('answers status null with 400', async () => {
      const res = await as(alice).post({ items: ITEMS, currency: 'EUR', status: null });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'bad_request', details: [{ field: 'status', message: expect.any(String) }] });
    });

    it('answers missing items and currency with 400 naming both', async () => {
      const res = await as(alice).post({});
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: '2 fields are invalid',
        code: 'bad_request',
        details: expect.arrayContaining([
          { field: 'items', message: 'items is required' },
          { field: 'currency', message: 'currency is required' },
        ]),
        request_id: expect.any(String),
      });
      expect(res.body.details).toHaveLength(2);
    });

    it.each([
      ['items null', { items: null, currency: 'EUR' }, 'items', 'items is required'],
      ['items not an array', { items: 'ZED-1', currency: 'EUR' }, 'items', expect.any(String)],
      ['an object for items', { items: { sku: 'A', quantity: 1, unit_price_cents: 1 }, currency: 'EUR' }, 'items', expect.any(String)],
      ['currency empty', { items: ITEMS, currency: '' }, 'currency', 'currency is required'],
      ['currency of the wrong type', { items: ITEMS, currency: 978 }, 'currency', expect.any(String)],
    ])('answers %s with 400', async (_name, body, field, message) => {
      const res = await as(alice).post(body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('bad_request');
      expect(res.body.request_id).toEqual(expect.any(String));
      expect(res.body.details).toContainEqual({ field, message });
    });

    it('answers an item that is not an object with 400 naming its index', async () => {
      const res = await as(alice).post({ items: [ITEMS[0], 5, null], currency: 'EUR' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: '2 fields are invalid',
        code: 'bad_request',
        details: [
          { field: 'items[1]', message: 'items[1] must be an object' },
          { field: 'items[2]', message: 'items[2] must be an object' },
        ],
        request_id: expect.any(String),
      });
    });

    it.each([
      ['quantity', 1.5],
      ['quantity', '2'],
      ['quantity', null],
      ['unit_price_cents', 19.99],
      ['unit_price_cents', '1999'],
      ['unit_price_cents', true],
      ['sku', 42],
      ['sku', ''],
    ])('answers items[1].%s = %j (missing, null, empty or wrong type) with 400 naming the path', async (name, value) => {
      const items = [ITEMS[0], { ...ITEMS[1], [name]: value }];
      const res = await as(alice).post({ items, currency: 'EUR' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: expect.stringContaining(`items[1].${name}`),
        code: 'bad_request',
        details: [{ field: `items[1].${name}`, message: expect.stringContaining(`items[1].${name}`) }],
        request_id: expect.any(String),
      });
    });

    it.each(['sku', 'quantity', 'unit_price_cents'])('answers an item without %s with 400 "is required"', async (name) => {
      const item: Record<string, unknown> = { ...ITEMS[0] };
      delete item[name];
      const res = await as(alice).post({ items: [item], currency: 'EUR' });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'bad_request', details: [{ field: `items[0].${name}`, message: `items[0].${name} is required` }] });
    });

    it.each([
      ['quantity', 0],
      ['quantity', 1001],
      ['quantity', -3],
      ['unit_price_cents', -1],
      ['unit_price_cents', 1_000_000_001],
      ['sku', 'k'.repeat(65)],
    ])('answers items[1].%s = %j (out of range) with 422 naming the path', async (name, value) => {
      const items = [ITEMS[0], { ...ITEMS[1], [name]: value }];
      const res = await as(alice).post({ items, currency: 'EUR' });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        error: expect.any(String),
        code: 'validation_failed',
        details: [{ field: `items[1].${name}`, message: expect.stringContaining(name) }],
        request_id: expect.any(String),
      });
    });

    it('answers an empty items array and more than 100 items with 422', async () => {
      const empty = await as(alice).post({ items: [], currency: 'EUR' });
      expect(empty.status).toBe(422);
      expect(empty.body).toEqual({
        error: expect.any(String),
        code: 'validation_failed',
        details: [{ field: 'items', message: expect.stringContaining('items') }],
        request_id: expect.any(String),
      });
      const many = Array.from({ length: 101 }, (_, i) => ({ sku: `S${i}`, quantity: 1, unit_price_cents: 1 }));
      const tooMany = await as(alice).post({ items: many, currency: 'EUR' });
      expect(tooMany.status).toBe(422);
      expect(tooMany.body).toMatchObject({ code: 'validation_failed', details: [{ field: 'items', message: expect.stringContaining('items') }] });
    });

    it('answers a currency outside EUR, USD, GBP with 422', async () => {
      for (const currency of ['JPY', 'eur']) {
        const res = await as(alice).post({ items: ITEMS, currency });
        expect(res.status).toBe(422);
        expect(res.body).toEqual({
          error: expect.stringContaining('currency'),
          code: 'validation_failed',
          details: [{ field: 'currency', message: expect.stringContaining('currency') }],
          request_id: expect.any(String),
        });
      }
    });

    it('lists every rule-breaking field with 422', async () => {
      const items = [{ sku: 'A', quantity: 0, unit_price_cents: 1 }, ITEMS[0], { sku: 'B', quantity: 1, unit_price_cents: -5 }];
      const res = await as(alice).post({ items, currency: 'JPY' });
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.error).toBe('3 fields are invalid');
      expect(res.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['currency', 'items[0].quantity', 'items[2].unit_price_cents']);
    });

    it('makes it 400 when a well-formedness problem comes with rule-breaking ones, listing all', async () => {
      const items = [
        { sku: 'A', quantity: '1', unit_price_cents: 1 },
        { sku: 'B', quantity: 1, unit_price_cents: -5 },
      ];
      const res = await as(alice).post({ items, currency: 'JPY' });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('bad_request');
      expect(res.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['currency', 'items[0].quantity', 'items[1].unit_price_cents']);
    });

    it('answers an unknown property, top-level or in an item, with 400 naming it', async () => {
      const top = await as(alice).post({ items: ITEMS, currency: 'EUR', discount_cents: 100 });
      expect(top.status).toBe(400);
      expect(top.body).toEqual({
        error: 'discount_cents is not an accepted property',
        code: 'bad_request',
        details: [{ field: 'discount_cents', message: 'discount_cents is not an accepted property' }],
        request_id: expect.any(String),
      });
      const nested = await as(alice).post({ items: [ITEMS[0], { ...ITEMS[1], colour: 'red' }], currency: 'EUR' });
      expect(nested.status).toBe(400);
      expect(nested.body).toEqual({
        error: 'items[1].colour is not an accepted property',
        code: 'bad_request',
        details: [{ field: 'items[1].colour', message: 'items[1].colour is not an accepted property' }],
        request_id: expect.any(String),
      });
    });

    it('writes nothing on a refused body', async () => {
      const before = await dataSource.getRepository(Order).count();
      const res = await as(alice).post({ items: [{ sku: 'A', quantity: 0, unit_price_cents: 1 }], currency: 'EUR' });
      expect(res.status).toBe(422);
      expect(await dataSource.getRepository(Order).count()).toBe(before);
    });

    it('needs a credential', async () => {
      const res = await http().post('/v1/orders').send({ items: ITEMS, currency: 'EUR' });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(errorBody('unauthorized'));
      expect(res.headers['www-authenticate']).toBe('Bearer realm="api"');
    });
  });

  describe('GET /v1/orders/{id}', () => {
    let own: Body;

    beforeAll(async () => {
      own = await postOrder(alice);
    });

    it('returns the caller’s own order', async () => {
      const res = await as(alice).get(`/v1/orders/${own.id}`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body).toEqual(own);
    });

    it('refuses another user’s order with 403', async () => {
      const res = await as(bob).get(`/v1/orders/${own.id}`);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(errorBody('forbidden', `order ${own.id} belongs to another user`));
    });

    it('answers a missing order with 404 and a bad id with 400', async () => {
      const missing = await as(alice).get('/v1/orders/999999');
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual(errorBody('not_found', 'order 999999 not found'));
      const bad = await as(alice).get('/v1/orders/abc');
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ code: 'bad_request', details: [{ field: 'id', message: expect.any(String) }] });
    });

    it('lets an admin read anyone’s order', async () => {
      const res = await as(admin).get(`/v1/orders/${own.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(own);
    });

    it('returns id, the named fields and links with fields=total_cents,status, and items with fields=items', async () => {
      const res = await as(alice).get(`/v1/orders/${own.id}?fields=total_cents,status`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: own.id, total_cents: ITEMS_TOTAL, status: 'pending', links: own.links });
      const items = await as(alice).get(`/v1/orders/${own.id}?fields=items`);
      expect(items.status).toBe(200);
      expect(items.body).toEqual({ id: own.id, items: ITEMS, links: own.links });
    });

    it('answers an unknown field or query parameter with 400', async () => {
      const field = await as(alice).get(`/v1/orders/${own.id}?fields=total`);
      expect(field.status).toBe(400);
      expect(field.body).toMatchObject({ code: 'bad_request', details: [{ field: 'fields', message: expect.stringContaining('total') }] });
      const param = await as(alice).get(`/v1/orders/${own.id}?status=paid`);
      expect(param.status).toBe(400);
      expect(param.body).toMatchObject({ code: 'bad_request', details: [{ field: 'status', message: 'unknown query parameter status' }] });
    });
  });

  describe('status transitions (PATCH status)', () => {
    it('walks pending → paid (owner) → shipped (admin) → delivered (admin)', async () => {
      const order = await postOrder(alice);
      await sleep(5);
      const paid = await as(alice).patch(order.id, { status: 'paid' });
      expect(paid.status).toBe(200);
      expect(paid.body).toEqual({ ...order, status: 'paid', updated_at: expect.stringMatching(ISO_MS) });
      expect(Date.parse(paid.body.updated_at)).toBeGreaterThan(Date.parse(order.updated_at));

      const shipped = await as(admin).patch(order.id, { status: 'shipped' });
      expect(shipped.status).toBe(200);
      expect(shipped.body).toEqual({ ...order, status: 'shipped', updated_at: expect.stringMatching(ISO_MS) });

      const delivered = await as(admin).patch(order.id, { status: 'delivered' });
      expect(delivered.status).toBe(200);
      expect(delivered.body).toEqual({ ...order, status: 'delivered', user: alice.user.id, updated_at: expect.stringMatching(ISO_MS) });
      expect(await readAs(alice, order.id)).toEqual(delivered.body);
    });

    it('refuses the owner shipping or delivering with 403 and changes nothing', async () => {
      const order = await postOrder(alice);
      await forceStatus(order.id, 'paid');
      const ship = await as(alice).patch(order.id, { status: 'shipped' });
      expect(ship.status).toBe(403);
      expect(ship.body).toEqual(errorBody('forbidden', 'only an admin can change status from paid to shipped'));
      expect((await readAs(alice, order.id)).status).toBe('paid');

      await forceStatus(order.id, 'shipped');
      const deliver = await as(alice).patch(order.id, { status: 'delivered' });
      expect(deliver.status).toBe(403);
      expect(deliver.body).toEqual(errorBody('forbidden', 'only an admin can change status from shipped to delivered'));
      expect((await readAs(alice, order.id)).status).toBe('shipped');
    });

    it('lets the owner cancel a pending and a paid order', async () => {
      const pending = await postOrder(alice);
      const cancelled = await as(alice).patch(pending.id, { status: 'cancelled' });
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toEqual({ ...pending, status: 'cancelled', updated_at: expect.stringMatching(ISO_MS) });

      const paid = await postOrder(alice);
      expect((await as(alice).patch(paid.id, { status: 'paid' })).status).toBe(200);
      const res = await as(alice).patch(paid.id, { status: 'cancelled' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...paid, status: 'cancelled', updated_at: expect.stringMatching(ISO_MS) });
    });

    it('lets an admin pay and cancel another user’s order, keeping the user', async () => {
      const order = await postOrder(bob);
      const paid = await as(admin).patch(order.id, { status: 'paid' });
      expect(paid.status).toBe(200);
      expect(paid.body).toEqual({ ...order, status: 'paid', user: bob.user.id, updated_at: expect.stringMatching(ISO_MS) });
      const cancelled = await as(admin).patch(order.id, { status: 'cancelled' });
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.status).toBe('cancelled');
    });

    /** The transition table of docs/resources/orders.md#status: every pair of statuses, the five allowed moves → 200, every other pair (the same status included) → 409. */
    const STATUSES: OrderStatus[] = ['pending', 'paid', 'shipped', 'delivered', 'cancelled'];
    const ALLOWED = new Set(['pending>paid', 'pending>cancelled', 'paid>shipped', 'paid>cancelled', 'shipped>delivered']);
    const PAIRS = STATUSES.flatMap((from) => STATUSES.map((to) => [from, to] as [OrderStatus, OrderStatus]));

    it('covers all 25 pairs of the table, 5 allowed', () => {
      expect(PAIRS).toHaveLength(25);
      expect(PAIRS.filter(([from, to]) => ALLOWED.has(`${from}>${to}`))).toHaveLength(5);
    });

    it.each(PAIRS.filter(([from, to]) => ALLOWED.has(`${from}>${to}`)))('allows %s → %s (200, stored)', async (from, to) => {
      const order = await postOrder(alice);
      await forceStatus(order.id, from);
      const res = await as(admin).patch(order.id, { status: to });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...order, status: to, updated_at: expect.stringMatching(ISO_MS) });
      expect((await readAs(alice, order.id)).status).toBe(to);
    });

    it.each(PAIRS.filter(([from, to]) => !ALLOWED.has(`${from}>${to}`)))(
      'refuses %s → %s with 409 naming both states, for the owner and an admin, changing nothing',
      async (from, to) => {
        const order = await postOrder(alice);
        await forceStatus(order.id, from);
        const before = await readAs(alice, order.id);
        await sleep(2);
        for (const caller of [alice, admin]) {
          const res = await as(caller).patch(order.id, { status: to });
          expect(res.status).toBe(409);
          expect(res.body).toEqual(errorBody('conflict', `cannot change status from ${from} to ${to}`));
        }
        expect(await readAs(alice, order.id)).toEqual(before);
      },
    );

    it('refuses a PATCH to the current status with 409, keeping updated_at (a move to the same state is not in the table)', async () => {
      const order = await postOrder(alice);
      const same = await as(alice).patch(order.id, { status: 'pending' });
      expect(same.status).toBe(409);
      expect(same.body).toEqual(errorBody('conflict', 'cannot change status from pending to pending'));
      expect(await readAs(alice, order.id)).toEqual(order);
      expect((await as(alice).patch(order.id, { status: 'paid' })).status).toBe(200);
      const again = await as(alice).patch(order.id, { status: 'paid' });
      expect(again.status).toBe(409);
      expect(again.body).toEqual(errorBody('conflict', 'cannot change status from paid to paid'));
    });

    it('refuses another user with 403 before looking at the move, and answers a missing order with 404', async () => {
      const order = await postOrder(alice);
      for (const status of ['paid', 'shipped']) {
        const res = await as(bob).patch(order.id, { status });
        expect(res.status).toBe(403);
        expect(res.body).toEqual(errorBody('forbidden', `order ${order.id} belongs to another user`));
      }
      expect((await readAs(alice, order.id)).status).toBe('pending');
      const missing = await as(alice).patch(999999, { status: 'paid' });
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual(errorBody('not_found', 'order 999999 not found'));
    });

    it('answers a status outside the enumeration with 422, null with 400, an unknown property with 400', async () => {
      const order = await postOrder(alice);
      const bad = await as(alice).patch(order.id, { status: 'finished' });
      expect(bad.status).toBe(422);
      expect(bad.body).toMatchObject({ code: 'validation_failed', details: [{ field: 'status', message: expect.any(String) }] });
      const nul = await as(alice).patch(order.id, { status: null });
      expect(nul.status).toBe(400);
      expect(nul.body).toMatchObject({ code: 'bad_request', details: [{ field: 'status', message: expect.stringContaining('status') }] });
      const unknown = await as(alice).patch(order.id, { paid: true });
      expect(unknown.status).toBe(400);
      expect(unknown.body).toMatchObject({ code: 'bad_request', details: [{ field: 'paid', message: 'paid is not an accepted property' }] });
      expect(await readAs(alice, order.id)).toEqual(order);
    });

    it('accepts application/merge-patch+json', async () => {
      const order = await postOrder(alice);
      const res = await http()
        .patch(`/v1/orders/${order.id}`)
        .set('Authorization', bearer(alice.token))
        .set('Content-Type', 'application/merge-patch+json')
        .send(JSON.stringify({ status: 'paid' }));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...order, status: 'paid', updated_at: expect.stringMatching(ISO_MS) });
    });

    it('lets exactly one of two concurrent moves from the same status win; the other gets 409', async () => {
      // from paid, shipped and cancelled exclude each other: whichever lands second is refused
      const orders = await Promise.all([1, 2, 3, 4, 5].map(() => postOrder(alice)));
      for (const order of orders) await forceStatus(order.id, 'paid');
      const results = await Promise.all(
        orders.flatMap((order) =>
          (['shipped', 'cancelled'] as const).map(async (status) => ({ id: order.id, status, res: await as(admin).patch(order.id, { status }) })),
        ),
      );
      for (const order of orders) {
        const pair = results.filter((result) => result.id === order.id);
        const won = pair.filter((result) => result.res.status === 200);
        const lost = pair.filter((result) => result.res.status === 409);
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(1);
        expect(won[0].res.body.status).toBe(won[0].status);
        expect(lost[0].res.body).toEqual(errorBody('conflict', expect.stringContaining(`to ${lost[0].status}`)));
        expect((await readAs(alice, order.id)).status).toBe(won[0].status);
      }
    });
  });

  describe('items and currency (PATCH, PUT)', () => {
    const NEW_ITEMS: Item[] = [
      { sku: 'NEW-B', quantity: 3, unit_price_cents: 250 },
      { sku: 'NEW-A', quantity: 1, unit_price_cents: 1 },
    ];

    it('PATCH replaces the items of a pending order and recomputes the total', async () => {
      const order = await postOrder(alice);
      await sleep(5);
      const res = await as(alice).patch(order.id, { items: NEW_ITEMS });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...order, items: NEW_ITEMS, total_cents: 751, updated_at: expect.stringMatching(ISO_MS) });
      expect(Date.parse(res.body.updated_at)).toBeGreaterThan(Date.parse(order.updated_at));
      expect(await readAs(alice, order.id)).toEqual(res.body);
      expect(await dataSource.getRepository(OrderItem).countBy({ order_id: order.id })).toBe(2);
    });

    it('PATCH changes the currency of a pending order, keeping the items', async () => {
      const order = await postOrder(alice);
      const res = await as(alice).patch(order.id, { currency: 'GBP' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...order, currency: 'GBP', updated_at: expect.stringMatching(ISO_MS) });
    });

    it('PATCH ignores read-only user and total_cents', async () => {
      const order = await postOrder(alice);
      const res = await as(alice).patch(order.id, { user: bob.user.id, total_cents: 5, currency: 'USD' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...order, currency: 'USD', updated_at: expect.stringMatching(ISO_MS) });
    });

    it('PATCH items and status together: items first, then the move, in one write', async () => {
      const order = await postOrder(alice);
      const res = await as(alice).patch(order.id, { items: NEW_ITEMS, status: 'paid' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...order, items: NEW_ITEMS, total_cents: 751, status: 'paid', updated_at: expect.stringMatching(ISO_MS) });
      expect(await readAs(alice, order.id)).toEqual(res.body);
    });

    it('PATCH items with a refused move changes nothing (409 or 403)', async () => {
      const order = await postOrder(alice);
      const refused = await as(alice).patch(order.id, { items: NEW_ITEMS, status: 'delivered' });
      expect(refused.status).toBe(409);
      expect(refused.body).toEqual(errorBody('conflict', 'cannot change status from pending to delivered'));
      expect(await readAs(alice, order.id)).toEqual(order);
    });

    it.each(['paid', 'shipped', 'delivered', 'cancelled'] as OrderStatus[])(
      'refuses new items or currency on a %s order with 409 naming the status',
      async (status) => {
        const order = await postOrder(alice);
        await forceStatus(order.id, status);
        const before = await readAs(alice, order.id);
        const message = `items and currency can change only while an order is pending; order ${order.id} is ${status}`;
        for (const caller of [alice, admin]) {
          const items = await as(caller).patch(order.id, { items: NEW_ITEMS });
          expect(items.status).toBe(409);
          expect(items.body).toEqual(errorBody('conflict', message));
          const currency = await as(caller).patch(order.id, { currency: 'USD' });
          expect(currency.status).toBe(409);
          expect(currency.body).toEqual(errorBody('conflict', message));
          const put = await as(caller).put(order.id, { items: NEW_ITEMS, currency: 'EUR', status });
          expect(put.status).toBe(409);
          expect(put.body).toEqual(errorBody('conflict', message));
        }
        expect(await readAs(alice, order.id)).toEqual(before);
        const rows = await dataSource.getRepository(OrderItem).find({ where: { order_id: order.id }, order: { position: 'ASC' } });
        expect(rows.map((row) => row.sku)).toEqual(ITEMS.map((item) => item.sku));
      },
    );

    it('refuses new items together with a cancel on a paid order: items come first, so 409', async () => {
      const order = await postOrder(alice);
      await forceStatus(order.id, 'paid');
      const res = await as(alice).patch(order.id, { items: NEW_ITEMS, status: 'cancelled' });
      expect(res.status).toBe(409);
      expect(res.body).toEqual(errorBody('conflict', `items and currency can change only while an order is pending; order ${order.id} is paid`));
      expect((await readAs(alice, order.id)).status).toBe('paid');
    });

    it('accepts the unchanged items and currency of a paid order (GET → edit → PATCH)', async () => {
      const order = await postOrder(alice);
      expect((await as(alice).patch(order.id, { status: 'paid' })).status).toBe(200);
      const read = await readAs(alice, order.id);
      const res = await as(alice).patch(order.id, { ...read, status: 'cancelled' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...read, status: 'cancelled', updated_at: expect.stringMatching(ISO_MS) });
    });

    it('answers bad items on PATCH with 400/422 naming the path, and null items with 400', async () => {
      const order = await postOrder(alice);
      const range = await as(alice).patch(order.id, { items: [{ sku: 'A', quantity: 1001, unit_price_cents: 1 }] });
      expect(range.status).toBe(422);
      expect(range.body).toMatchObject({ code: 'validation_failed', details: [{ field: 'items[0].quantity', message: expect.any(String) }] });
      const empty = await as(alice).patch(order.id, { items: [] });
      expect(empty.status).toBe(422);
      expect(empty.body).toMatchObject({ code: 'validation_failed', details: [{ field: 'items', message: expect.any(String) }] });
      const nul = await as(alice).patch(order.id, { items: null });
      expect(nul.status).toBe(400);
      expect(nul.body).toMatchObject({ code: 'bad_request', details: [{ field: 'items', message: 'items is required' }] });
      expect(await readAs(alice, order.id)).toEqual(order);
    });

    it('PUT replaces items and currency; an omitted status stays pending', async () => {
      const order = await postOrder(alice);
      await sleep(5);
      const res = await as(alice).put(order.id, { items: NEW_ITEMS, currency: 'USD' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...order, items: NEW_ITEMS, currency: 'USD', total_cents: 751, updated_at: expect.stringMatching(ISO_MS) });
      expect(Date.parse(res.body.updated_at)).toBeGreaterThan(Date.parse(order.updated_at));
      expect(await readAs(alice, order.id)).toEqual(res.body);
    });

    it('PUT accepts what a GET returned (GET → edit → PUT), read-only fields ignored', async () => {
      const order = await postOrder(alice);
      const res = await as(alice).put(order.id, { ...order, items: [NEW_ITEMS[0]], total_cents: 1, user: bob.user.id });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...order, items: [NEW_ITEMS[0]], total_cents: 750, updated_at: expect.stringMatching(ISO_MS) });
    });

    it('PUT with a status follows the transition rules', async () => {
      const order = await postOrder(alice);
      const paid = await as(alice).put(order.id, { items: NEW_ITEMS, currency: 'EUR', status: 'paid' });
      expect(paid.status).toBe(200);
      expect(paid.body).toEqual({ ...order, items: NEW_ITEMS, total_cents: 751, status: 'paid', updated_at: expect.stringMatching(ISO_MS) });

      const body = { items: NEW_ITEMS, currency: 'EUR' };
      const ownerShips = await as(alice).put(order.id, { ...body, status: 'shipped' });
      expect(ownerShips.status).toBe(403);
      expect(ownerShips.body).toEqual(errorBody('forbidden', 'only an admin can change status from paid to shipped'));
      const adminShips = await as(admin).put(order.id, { ...body, status: 'shipped' });
      expect(adminShips.status).toBe(200);
      expect(adminShips.body).toEqual({ ...paid.body, status: 'shipped', updated_at: expect.stringMatching(ISO_MS) });

      // an omitted status means the initial one (docs/writes.md#put-replace), which a shipped order cannot go back to
      const back = await as(admin).put(order.id, body);
      expect(back.status).toBe(409);
      expect(back.body).toEqual(errorBody('conflict', 'cannot change status from shipped to pending'));
      expect((await readAs(alice, order.id)).status).toBe('shipped');
    });

    it('PUT answers missing items or currency with 400, another user with 403, a missing order with 404', async () => {
      const order = await postOrder(alice);
      const noItems = await as(alice).put(order.id, { currency: 'EUR' });
      expect(noItems.status).toBe(400);
      expect(noItems.body).toMatchObject({ code: 'bad_request', details: [{ field: 'items', message: 'items is required' }] });
      const noCurrency = await as(alice).put(order.id, { items: ITEMS });
      expect(noCurrency.status).toBe(400);
      expect(noCurrency.body).toMatchObject({ code: 'bad_request', details: [{ field: 'currency', message: 'currency is required' }] });
      const other = await as(bob).put(order.id, { items: NEW_ITEMS, currency: 'EUR' });
      expect(other.status).toBe(403);
      expect(other.body).toEqual(errorBody('forbidden', `order ${order.id} belongs to another user`));
      const otherPatch = await as(bob).patch(order.id, { items: NEW_ITEMS });
      expect(otherPatch.status).toBe(403);
      expect(otherPatch.body).toEqual(errorBody('forbidden', `order ${order.id} belongs to another user`));
      const missing = await as(alice).put(999999, { items: NEW_ITEMS, currency: 'EUR' });
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual(errorBody('not_found', 'order 999999 not found'));
      expect(await readAs(alice, order.id)).toEqual(order);
    });

    it('lets an admin replace another user’s pending order, keeping the user', async () => {
      const order = await postOrder(bob);
      const res = await as(admin).put(order.id, { items: NEW_ITEMS, currency: 'GBP' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...order, items: NEW_ITEMS, currency: 'GBP', total_cents: 751, user: bob.user.id, updated_at: expect.stringMatching(ISO_MS) });
    });
  });

  describe('DELETE /v1/orders/{id}', () => {
    it.each(['pending', 'cancelled'] as OrderStatus[])('deletes a %s order and its items: 204 without a body, then 404', async (status) => {
      const order = await postOrder(alice);
      await forceStatus(order.id, status);
      const res = await as(alice).delete(order.id);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(res.headers['content-type']).toBeUndefined();
      const read = await as(alice).get(`/v1/orders/${order.id}`);
      expect(read.status).toBe(404);
      expect(read.body).toEqual(errorBody('not_found', `order ${order.id} not found`));
      expect(await dataSource.getRepository(OrderItem).countBy({ order_id: order.id })).toBe(0);
      const again = await as(alice).delete(order.id);
      expect(again.status).toBe(404);
      expect(again.body).toEqual(errorBody('not_found', `order ${order.id} not found`));
    });

    it.each(['paid', 'shipped', 'delivered'] as OrderStatus[])('refuses to delete a %s order with 409 naming the status', async (status) => {
      const order = await postOrder(alice);
      await forceStatus(order.id, status);
      for (const caller of [alice, admin]) {
        const res = await as(caller).delete(order.id);
        expect(res.status).toBe(409);
        expect(res.body).toEqual(errorBody('conflict', `order ${order.id} is ${status}; only pending or cancelled orders can be deleted`));
      }
      expect((await readAs(alice, order.id)).status).toBe(status);
      expect(await dataSource.getRepository(OrderItem).countBy({ order_id: order.id })).toBe(2);
    });

    it('refuses another user with 403 and lets an admin delete', async () => {
      const order = await postOrder(alice);
      const other = await as(bob).delete(order.id);
      expect(other.status).toBe(403);
      expect(other.body).toEqual(errorBody('forbidden', `order ${order.id} belongs to another user`));
      expect(await readAs(alice, order.id)).toEqual(order);
      const res = await as(admin).delete(order.id);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect((await as(alice).get(`/v1/orders/${order.id}`)).status).toBe(404);
    });
  });

  describe('transactions', () => {
    const isPostgres = () => dataSource.options.type === 'postgres';

    async function addFailingTrigger(): Promise<void> {
      if (isPostgres()) {
        await dataSource.query(`CREATE OR REPLACE FUNCTION orders_e2e_boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'boom'; END $$`);
        await dataSource.query('CREATE TRIGGER orders_e2e_boom BEFORE INSERT ON order_items FOR EACH ROW EXECUTE FUNCTION orders_e2e_boom()');
      } else {
        await dataSource.query(`CREATE TRIGGER orders_e2e_boom BEFORE INSERT ON order_items BEGIN SELECT RAISE(ABORT, 'boom'); END`);
      }
    }

    async function dropFailingTrigger(): Promise<void> {
      if (isPostgres()) {
        await dataSource.query('DROP TRIGGER IF EXISTS orders_e2e_boom ON order_items');
        await dataSource.query('DROP FUNCTION IF EXISTS orders_e2e_boom()');
      } else {
        await dataSource.query('DROP TRIGGER IF EXISTS orders_e2e_boom');
      }
    }

    afterEach(dropFailingTrigger);

    it('leaves nothing behind when inserting the items of a new order fails: 500 without internals', async () => {
      const orders = await dataSource.getRepository(Order).count();
      const items = await dataSource.getRepository(OrderItem).count();
      await addFailingTrigger();
      const res = await as(alice).post({ items: ITEMS, currency: 'EUR' });
      expect(res.status).toBe(500);
      expect(res.body).toEqual(errorBody('internal', 'internal server error'));
      expect(res.text).not.toContain('boom');
      expect(res.headers.location).toBeUndefined();
      await dropFailingTrigger();
      expect(await dataSource.getRepository(Order).count()).toBe(orders);
      expect(await dataSource.getRepository(OrderItem).count()).toBe(items);
    });

    it('keeps the old items and total when replacing them fails (PUT and PATCH)', async () => {
      const order = await postOrder(alice);
      await addFailingTrigger();
      const put = await as(alice).put(order.id, { items: [{ sku: 'X', quantity: 9, unit_price_cents: 9 }], currency: 'USD', status: 'paid' });
      expect(put.status).toBe(500);
      expect(put.body).toEqual(errorBody('internal', 'internal server error'));
      const patch = await as(alice).patch(order.id, { items: [{ sku: 'X', quantity: 9, unit_price_cents: 9 }] });
      expect(patch.status).toBe(500);
      expect(patch.body).toEqual(errorBody('internal', 'internal server error'));
      await dropFailingTrigger();
      expect(await readAs(alice, order.id)).toEqual(order);
      const rows = await dataSource.getRepository(OrderItem).find({ where: { order_id: order.id }, order: { position: 'ASC' } });
      expect(rows.map((row) => ({ sku: row.sku, quantity: row.quantity, unit_price_cents: Number(row.unit_price_cents) }))).toEqual(ITEMS);
    });
  });

  describe('deleting a user', () => {
    it('removes their orders and order items', async () => {
      const eve = await createUser(app);
      const first = await postOrder(eve);
      const second = await postOrder(eve, { items: [ITEMS[0]], currency: 'USD' });
      const kept = await postOrder(alice);
      const res = await http().delete(`/v1/users/${eve.user.id}`).set('Authorization', bearer(admin.token));
      expect(res.status).toBe(204);
      expect(await dataSource.getRepository(Order).countBy({ user_id: eve.user.id })).toBe(0);
      for (const id of [first.id, second.id]) expect(await dataSource.getRepository(OrderItem).countBy({ order_id: id })).toBe(0);
      for (const id of [first.id, second.id]) expect((await as(admin).get(`/v1/orders/${id}`)).status).toBe(404);
      expect(await readAs(alice, kept.id)).toEqual(kept);
    });
  });

  describe('GET /v1/orders (docs/lists.md)', () => {
    let carol: Caller;
    let dave: Caller;
    let boss: Caller;
    /** Carol's orders, in insertion (= id) order. */
    let c: number[];
    /** Dave's orders. */
    let d: number[];

    const list = (caller: Caller, query: Record<string, string | string[]> | string = {}) => as(caller).get('/v1/orders').query(query);
    const ids = (body: { data: Array<{ id: number }> }) => body.data.map((item) => item.id);

    /** Two lines summing to `total` (≥ 100), the second sku sorting first. */
    const itemsFor = (total: number): Item[] => [
      { sku: 'ZZ', quantity: 1, unit_price_cents: total - 100 },
      { sku: 'AA', quantity: 2, unit_price_cents: 50 },
    ];

    beforeAll(async () => {
      // a known data set: empty tables, rows inserted with chosen totals and timestamps (including ties)
      await truncateAll(app);
      carol = await createUser(app);
      dave = await createUser(app);
      boss = await createUser(app, { role: 'admin' });
      const t0 = Date.parse('2026-01-01T10:00:00.000Z');
      const insert = async (user: number, total: number, currency: Currency, status: OrderStatus, offsetMs: number) => {
        const at = new Date(t0 + offsetMs);
        const result = await dataSource.getRepository(Order).insert({ user_id: user, total_cents: total, currency, status, created_at: at, updated_at: at });
        const id = Number(result.identifiers[0].id);
        await dataSource.getRepository(OrderItem).insert(itemsFor(total).map((item, position) => ({ ...item, order_id: id, position })));
        return id;
      };
      c = [];
      c.push(await insert(carol.user.id, 5000, 'EUR', 'pending', 0));
      c.push(await insert(carol.user.id, 1000, 'USD', 'paid', 1000));
      c.push(await insert(carol.user.id, 5000, 'EUR', 'shipped', 1000)); // same created_at as c[1], same total as c[0]
      c.push(await insert(carol.user.id, 250, 'GBP', 'cancelled', 2000));
      c.push(await insert(carol.user.id, 1000, 'EUR', 'delivered', 3000)); // same total as c[1]
      c.push(await insert(carol.user.id, 99_999, 'USD', 'pending', 500));
      d = [];
      d.push(await insert(dave.user.id, 700, 'EUR', 'pending', 100));
      d.push(await insert(dave.user.id, 300, 'USD', 'paid', 200));
    });

    it('returns the envelope with the caller’s orders only, id ascending by default', async () => {
      const res = await list(carol);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(Object.keys(res.body).sort()).toEqual(['data', 'links', 'page', 'size', 'total']);
      expect(res.body).toMatchObject({ page: 1, size: 20, total: 6 });
      expect(ids(res.body)).toEqual(c);
      expect(res.body.data.every((item: { user: number }) => item.user === carol.user.id)).toBe(true);
    });

    it('returns each element of data exactly as the single GET of that id, totals as numbers', async () => {
      const res = await list(carol);
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(6);
      for (const item of res.body.data) {
        const one = await as(carol).get(`/v1/orders/${item.id}`);
        expect(one.status).toBe(200);
        expect(item).toEqual(one.body);
      }
      expect(res.body.data[5]).toEqual(
        orderShape({ id: c[5], items: itemsFor(99_999), currency: 'USD', status: 'pending', total_cents: 99_999, user: carol.user.id }),
      );
      expect(res.body.data[0].created_at).toBe('2026-01-01T10:00:00.000Z');
    });

    it('loads the items of the whole page with one extra query, and none without items in fields', async () => {
      const runner = dataSource.createQueryRunner();
      const spy = jest.spyOn(Object.getPrototypeOf(runner) as { query: (sql: string) => Promise<unknown> }, 'query');
      try {
        const res = await list(carol);
        expect(res.status).toBe(200);
        expect(res.body.data).toHaveLength(6);
        const itemQueries = () => spy.mock.calls.filter(([sql]) => /order_items/.test(String(sql)));
        expect(itemQueries()).toHaveLength(1);
        spy.mockClear();
        const picked = await list(carol, { fields: 'total_cents,status' });
        expect(picked.status).toBe(200);
        expect(itemQueries()).toHaveLength(0);
      } finally {
        spy.mockRestore();
        await runner.release();
      }
    });

    it('shows an admin every order', async () => {
      const res = await list(boss);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ page: 1, size: 20, total: 8 });
      expect(ids(res.body)).toEqual([...c, ...d]);
    });

    it('lets an admin filter by user', async () => {
      const res = await list(boss, { user: String(dave.user.id) });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ total: 2 });
      expect(ids(res.body)).toEqual(d);
    });

    it('never widens visibility: user=<another user> as a non-admin returns nothing', async () => {
      const res = await list(carol, { user: String(dave.user.id) });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ data: [], page: 1, size: 20, total: 0 });
      const both = await list(carol, `user=${dave.user.id}&user=${carol.user.id}`);
      expect(both.status).toBe(200);
      expect(both.body.total).toBe(6);
      expect(ids(both.body)).toEqual(c);
    });

    it('filters by status, a repeated status meaning "any of"', async () => {
      const one = await list(carol, { status: 'pending' });
      expect(one.status).toBe(200);
      expect(one.body).toMatchObject({ total: 2 });
      expect(ids(one.body)).toEqual([c[0], c[5]]);
      const many = await list(carol, 'status=paid&status=shipped');
      expect(many.status).toBe(200);
      expect(many.body).toMatchObject({ total: 2 });
      expect(ids(many.body)).toEqual([c[1], c[2]]);
      const admin = await list(boss, 'status=paid&status=pending');
      expect(admin.status).toBe(200);
      expect(ids(admin.body)).toEqual([c[0], c[1], c[5], d[0], d[1]]);
    });

    it('filters by currency, combined with status', async () => {
      const eur = await list(carol, { currency: 'EUR' });
      expect(eur.status).toBe(200);
      expect(eur.body).toMatchObject({ total: 3 });
      expect(ids(eur.body)).toEqual([c[0], c[2], c[4]]);
      const usdPending = await list(carol, { currency: 'USD', status: 'pending' });
      expect(usdPending.status).toBe(200);
      expect(ids(usdPending.body)).toEqual([c[5]]);
      const gbpOrUsd = await list(boss, 'currency=GBP&currency=USD');
      expect(ids(gbpOrUsd.body)).toEqual([c[1], c[3], c[5], d[1]]);
    });

    it('answers a bad filter value with 400 naming it', async () => {
      for (const [name, value] of [
        ['status', 'finished'],
        ['currency', 'JPY'],
        ['user', 'abc'],
        ['user', '-1'],
      ]) {
        const res = await list(carol, { [name]: value });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          error: expect.any(String),
          code: 'bad_request',
          details: [{ field: name, message: expect.stringContaining(name) }],
          request_id: expect.any(String),
        });
      }
    });

    it.each([
      ['-total_cents,created_at', [5, 0, 2, 1, 4, 3]],
      ['total_cents', [3, 1, 4, 0, 2, 5]],
      ['-total_cents', [5, 2, 0, 4, 1, 3]],
      ['total_cents,-created_at', [3, 4, 1, 2, 0, 5]],
      ['created_at', [0, 5, 1, 2, 3, 4]],
      ['-created_at', [4, 3, 2, 1, 5, 0]],
      ['created_at,-id', [0, 5, 2, 1, 3, 4]],
      ['-id', [5, 4, 3, 2, 1, 0]],
    ])('sorts by %s with id last, in the direction of the first key', async (sort, order) => {
      const res = await list(carol, { sort: sort as string });
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(6);
      expect(ids(res.body)).toEqual((order as number[]).map((i) => c[i]));
    });

    it('answers a sort by an unsortable field with 400', async () => {
      for (const sort of ['status', 'currency', '-total_cents,user']) {
        const res = await list(carol, { sort });
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({
          code: 'bad_request',
          details: [{ field: 'sort', message: expect.stringContaining('sortable: id, created_at, updated_at, total_cents') }],
        });
      }
    });

    it('pages with page/size, links keeping filters and sort', async () => {
      const res = await list(carol, { sort: '-total_cents,created_at', size: '2', page: '2' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ page: 2, size: 2, total: 6 });
      expect(ids(res.body)).toEqual([c[2], c[1]]);
      expect(res.body.links.map((link: { rel: string }) => link.rel)).toEqual(['self', 'first', 'prev', 'next', 'last']);
      const common = { sort: ['-total_cents,created_at'], size: ['2'] };
      expect(parseHref(linkOf(res.body.links, 'self')!.href)).toEqual({ path: '/v1/orders', query: { ...common, page: ['2'] } });
      expect(parseHref(linkOf(res.body.links, 'prev')!.href)).toEqual({ path: '/v1/orders', query: { ...common, page: ['1'] } });
      expect(parseHref(linkOf(res.body.links, 'next')!.href)).toEqual({ path: '/v1/orders', query: { ...common, page: ['3'] } });
      expect(parseHref(linkOf(res.body.links, 'last')!.href)).toEqual({ path: '/v1/orders', query: { ...common, page: ['3'] } });

      const pages = await Promise.all(['1', '2', '3'].map((page) => list(carol, { sort: '-total_cents,created_at', size: '2', page })));
      expect(pages.flatMap((page) => ids(page.body))).toEqual([5, 0, 2, 1, 4, 3].map((i) => c[i]));

      const filtered = await list(boss, { status: ['paid', 'pending'], size: '2' });
      expect(filtered.status).toBe(200);
      expect(filtered.body).toMatchObject({ page: 1, size: 2, total: 5 });
      expect(parseHref(linkOf(filtered.body.links, 'next')!.href).query).toEqual({ status: ['paid', 'pending'], size: ['2'], page: ['2'] });
    });

    it('pages with offset/limit: the envelope carries offset, limit, page and size', async () => {
      const res = await list(carol, { offset: '1', limit: '3' });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['data', 'limit', 'links', 'next_cursor', 'offset', 'page', 'prev_cursor', 'size', 'total']);
      expect(res.body).toMatchObject({ offset: 1, limit: 3, page: 1, size: 3, total: 6 });
      expect(ids(res.body)).toEqual([c[1], c[2], c[3]]);
      expect(parseHref(linkOf(res.body.links, 'next')!.href).query).toEqual({ offset: ['4'], limit: ['3'] });
      expect(parseHref(linkOf(res.body.links, 'prev')!.href).query).toEqual({ offset: ['0'], limit: ['3'] });
    });

    it('answers mixed paging styles and bad paging values with 400', async () => {
      const mixed = await list(carol, { page: '1', limit: '2' });
      expect(mixed.status).toBe(400);
      expect(mixed.body).toMatchObject({ code: 'bad_request', details: [{ field: 'offset', message: expect.stringContaining('offset/limit') }] });
      const size = await list(carol, { size: '101' });
      expect(size.status).toBe(400);
      expect(size.body).toMatchObject({ code: 'bad_request', details: [{ field: 'size', message: expect.stringContaining('size') }] });
    });

    it('answers a page past the end with 200, empty data and the true total', async () => {
      const res = await list(carol, { page: '5', size: '2' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ data: [], page: 5, size: 2, total: 6 });
    });

    it('returns exactly id, the named fields and links with fields=total_cents,status', async () => {
      const res = await list(carol, { fields: 'total_cents,status' });
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(6);
      for (const item of res.body.data) expect(Object.keys(item).sort()).toEqual(['id', 'links', 'status', 'total_cents']);
      expect(res.body.data[5]).toEqual({
        id: c[5],
        total_cents: 99_999,
        status: 'pending',
        links: [
          { rel: 'self', href: `/v1/orders/${c[5]}` },
          { rel: 'user', href: `/v1/users/${carol.user.id}` },
        ],
      });
      expect(parseHref(linkOf(res.body.links, 'self')!.href).query.fields).toEqual(['total_cents,status']);
    });

    it('returns the items with fields=items,user', async () => {
      const res = await list(carol, { fields: 'items,user', size: '1' });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([{ id: c[0], items: itemsFor(5000), user: carol.user.id, links: expect.any(Array) }]);
    });

    it('answers an unknown field in fields= or an unknown parameter with 400', async () => {
      const field = await list(carol, { fields: 'status,price' });
      expect(field.status).toBe(400);
      expect(field.body).toMatchObject({ code: 'bad_request', details: [{ field: 'fields', message: expect.stringContaining('price') }] });
      const param = await list(carol, { owner: String(carol.user.id) });
      expect(param.status).toBe(400);
      expect(param.body).toEqual({
        error: 'unknown query parameter owner',
        code: 'bad_request',
        details: [{ field: 'owner', message: 'unknown query parameter owner' }],
        request_id: expect.any(String),
      });
    });

    it('returns an empty first page for a caller without orders', async () => {
      const res = await list(boss, { user: String(boss.user.id) });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ data: [], page: 1, size: 20, total: 0 });
      expect(res.body.links.map((link: { rel: string }) => link.rel)).toEqual(['self', 'first', 'last']);
    });

    it('needs a credential', async () => {
      const res = await http().get('/v1/orders');
      expect(res.status).toBe(401);
      expect(res.body).toEqual(errorBody('unauthorized'));
    });
  });
});
