import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import type { AuthUser } from '../../src/common/caller/auth-user.js';
import { parseListQuery } from '../../src/common/list/list-query.js';
import type { OrderStatus } from '../../src/orders/order.entity.js';
import { ORDERS_FIELDS } from '../../src/orders/orders.resource.js';
import { openTestDataSource, truncateDataSource } from '../setup/database.js';
import { rejection } from '../setup/refusal.js';
import { insertCaller, type Services, servicesOn } from './services.js';

/**
 * Service tier (no HTTP): the order rules of docs/resources/orders.md through OrdersService on the real database —
 * status transitions and who may make them (403 vs 409), ownership (404 vs 403), list visibility
 * and deletion by status.
 */
describe('OrdersService on the database (docs/resources/orders.md)', () => {
  let dataSource: DataSource;
  let orders: Services['orders'];
  let alice: AuthUser;
  let bob: AuthUser;
  let admin: AuthUser;
  const items = [{ sku: 'SKU-1', quantity: 2, unit_price_cents: 250 }];

  beforeAll(async () => {
    dataSource = await openTestDataSource();
    orders = servicesOn(dataSource).orders;
  });
  afterAll(() => dataSource.destroy());
  beforeEach(async () => {
    await truncateDataSource(dataSource);
    [alice, bob, admin] = [await insertCaller(dataSource), await insertCaller(dataSource), await insertCaller(dataSource, 'admin')];
  });

  /** A new order of `owner` moved to `status` along the allowed path (by an admin where needed). */
  async function orderIn(status: OrderStatus, owner = alice): Promise<number> {
    const { id } = (await orders.create({ items, currency: 'EUR' }, owner)).body;
    const path: Record<OrderStatus, OrderStatus[]> = {
      pending: [],
      paid: ['paid'],
      shipped: ['paid', 'shipped'],
      delivered: ['paid', 'shipped', 'delivered'],
      cancelled: ['cancelled'],
    };
    for (const next of path[status]) await orders.update(id, { status: next }, admin);
    return id;
  }

  it('creates a pending order of the caller with the computed total', async () => {
    const order = (await orders.create({ items, currency: 'EUR' }, alice)).body;
    expect(order).toMatchObject({ status: 'pending', user: alice.id, total_cents: 500, currency: 'EUR', items });
  });

  it('the owner pays and cancels; only an admin ships and delivers (403 for the owner, nothing changed)', async () => {
    const id = await orderIn('pending');
    expect((await orders.update(id, { status: 'paid' }, alice)).body.status).toBe('paid');
    expect(await rejection(orders.update(id, { status: 'shipped' }, alice))).toEqual({
      status: 403,
      code: 'forbidden',
      message: 'only an admin can change status from paid to shipped',
    });
    expect((await orders.findOne(id, alice)).body.status).toBe('paid');
    expect((await orders.update(id, { status: 'shipped' }, admin)).body.status).toBe('shipped');
    expect(await rejection(orders.update(id, { status: 'delivered' }, alice))).toMatchObject({ status: 403 });
    expect((await orders.update(id, { status: 'delivered' }, admin)).body.status).toBe('delivered');
  });

  it.each([
    ['delivered', 'cancelled'],
    ['cancelled', 'pending'],
    ['shipped', 'cancelled'],
    ['pending', 'shipped'],
    ['paid', 'paid'],
  ] as [OrderStatus, OrderStatus][])('%s → %s is a 409 for everyone, admins included', async (from, to) => {
    const id = await orderIn(from);
    for (const caller of [alice, admin]) {
      expect(await rejection(orders.update(id, { status: to }, caller))).toEqual({
        status: 409,
        code: 'conflict',
        message: `cannot change status from ${from} to ${to}`,
      });
    }
    expect((await orders.findOne(id, admin)).body.status).toBe(from);
  });

  it('PUT without status means pending: a paid order refuses it (409); items change only while pending (409)', async () => {
    const id = await orderIn('paid');
    expect(await rejection(orders.replace(id, { items, currency: 'EUR' }, alice))).toEqual({
      status: 409,
      code: 'conflict',
      message: 'cannot change status from paid to pending',
    });
    expect(await rejection(orders.update(id, { items: [{ sku: 'SKU-2', quantity: 1, unit_price_cents: 1 }] }, admin))).toEqual({
      status: 409,
      code: 'conflict',
      message: `items and currency can change only while an order is pending; order ${id} is paid`,
    });
  });

  it("another user's order is 403 for every operation, a missing one 404 (even for an admin)", async () => {
    const id = await orderIn('pending');
    const forbidden = { status: 403, code: 'forbidden', message: `order ${id} belongs to another user` };
    expect(await rejection(orders.findOne(id, bob))).toEqual(forbidden);
    expect(await rejection(orders.update(id, { status: 'cancelled' }, bob))).toEqual(forbidden);
    expect(await rejection(orders.remove(id, bob))).toEqual(forbidden);
    expect((await orders.findOne(id, admin)).body.id).toBe(id);
    expect(await rejection(orders.findOne(id + 1000, admin))).toEqual({ status: 404, code: 'not_found', message: `order ${id + 1000} not found` });
  });

  it('lists a user’s own orders only, every order for an admin', async () => {
    const [mine, theirs] = [await orderIn('pending', alice), await orderIn('paid', bob)];
    const query = parseListQuery({}, ORDERS_FIELDS);
    expect((await orders.list(query, alice)).items.map((order) => order.id)).toEqual([mine]);
    expect((await orders.list(query, bob)).items.map((order) => order.id)).toEqual([theirs]);
    expect((await orders.list(query, admin)).items.map((order) => order.id).sort()).toEqual([mine, theirs].sort());
  });

  it('deletes only pending or cancelled orders (409 naming the status otherwise); a deleted order is 404', async () => {
    const paid = await orderIn('paid');
    expect(await rejection(orders.remove(paid, admin))).toEqual({
      status: 409,
      code: 'conflict',
      message: `order ${paid} is paid; only pending or cancelled orders can be deleted`,
    });
    const cancelled = await orderIn('cancelled');
    await orders.remove(cancelled, alice);
    expect(await rejection(orders.findOne(cancelled, alice))).toMatchObject({ status: 404 });
  });
});
