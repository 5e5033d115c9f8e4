import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { AuthUser } from '../common/caller/auth-user.js';
import { authorize, authorizeTransition } from '../common/access/access-policy.js';
import { conflict, notFound, preconditionFailed } from '../common/errors/api-exception.js';
import { findPage } from '../common/list/find-page.js';
import type { ListQuery } from '../common/list/list-query.js';
import { Page } from '../common/list/page.js';
import { requireAffected } from '../common/writes/conditional-write.js';
import { type Tagged, tagged, versionCondition, type WritePreconditions } from '../common/writes/preconditions.js';
import type { CreateOrderDto, ReplaceOrderDto, UpdateOrderDto } from './dto/create-order.dto.js';
import type { OrderItemDto } from './dto/order-item.dto.js';
import { Order, OrderItem, type Currency, type OrderStatus } from './order.entity.js';
import { toOrderResponse, type OrderResponse } from './order.response.js';
import { ORDERS_FIELDS } from './orders.resource.js';
import { ORDERS_POLICY } from './orders.policy.js';
import { inBothVersions } from '../events/event-data.js';
import { EventOutbox } from '../events/event-outbox.js';
import type { EventType } from '../events/event-types.js';

/** Statuses in which an order may be deleted (docs/resources/orders.md#operations). */
const DELETABLE: readonly OrderStatus[] = ['pending', 'cancelled'];

/** The wanted state of an order after a PUT or PATCH; absent fields stay as they are. */
interface OrderChange {
  items?: OrderItemDto[];
  currency?: Currency;
  status?: OrderStatus;
}

/** Σ quantity × unit_price_cents, in cents (at most 100 × 1000 × 10⁹ = 10¹⁴: an exact integer). */
export function totalCents(items: readonly OrderItemDto[]): number {
  return items.reduce((sum, item) => sum + item.quantity * item.unit_price_cents, 0);
}

function sameItems(wanted: readonly OrderItemDto[], current: readonly OrderItem[]): boolean {
  return (
    wanted.length === current.length &&
    wanted.every(
      (item, i) =>
        item.sku === current[i].sku && item.quantity === Number(current[i].quantity) && item.unit_price_cents === Number(current[i].unit_price_cents),
    )
  );
}

/**
 * Orders (docs/resources/orders.md): private to their user, admins see and act on all. Every write that
 * touches the order and its items runs in one transaction; status changes and deletes are
 * conditional statements (`WHERE id = ? AND status = <expected>`), so of N concurrent moves from the
 * same status exactly one wins, and each loser is re-read: gone → 404, else 409 naming both states.
 * Each write appends its events in its transaction (docs/events.md): `order.created`,
 * `order.updated` (items or currency), `order.<new status>` for a status move, `order.deleted`.
 */
@Injectable()
export class OrdersService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly outbox: EventOutbox,
  ) {}

  /** Creates a `pending` order of the caller with its items (positions in the order sent) and computed total. */
  create(dto: CreateOrderDto, caller: AuthUser): Promise<Tagged<OrderResponse>> {
    return this.dataSource.transaction(async (manager) => {
      const now = new Date();
      const result = await manager.insert(Order, {
        user_id: caller.id,
        currency: dto.currency,
        status: 'pending',
        total_cents: totalCents(dto.items),
        created_at: now,
        updated_at: now,
      });
      const id = Number(result.identifiers[0].id);
      await this.insertItems(manager, id, dto.items);
      await this.emit(manager, id, ['order.created']);
      return this.read(manager, id, caller);
    });
  }

  /**
   * One page of the caller's orders (all orders for an admin); filters apply within that. The
   * items of the whole page come from one extra query, and only when `items` is wanted.
   */
  async list(query: ListQuery, caller: AuthUser): Promise<Page<OrderResponse>> {
    const page = await findPage(this.dataSource.getRepository(Order), query, ORDERS_FIELDS, (row) => row, ORDERS_POLICY.visible(caller));
    const ids = page.items.map((row) => Number(row.id));
    const items = !query.fields || query.fields.includes('items') ? await this.itemsOf(this.dataSource.manager, ids) : new Map<number, OrderItem[]>();
    return page.map((row) => toOrderResponse(row, items.get(Number(row.id))));
  }

  /**
   * Reads one order with its items.
   * @throws 404 when missing; 403 when another user's (and the caller is no admin).
   */
  findOne(id: number, caller: AuthUser): Promise<Tagged<OrderResponse>> {
    return this.read(this.dataSource.manager, id, caller);
  }

  /**
   * PUT: the whole order (docs/writes.md#put-replace); an omitted `status` means `pending`, the initial status.
   * @throws 403, 404, 409, 412/428 (see {@link update}).
   */
  replace(id: number, dto: ReplaceOrderDto, caller: AuthUser, preconditions?: WritePreconditions): Promise<Tagged<OrderResponse>> {
    return this.change(id, { items: dto.items, currency: dto.currency, status: dto.status ?? 'pending' }, caller, preconditions);
  }

  /**
   * PATCH: changes only the fields sent; items and currency first, then the status move. Items
   * and currency equal to the stored ones change nothing; a `status` sent is always a move, so the
   * current status is a 409 like every move `ORDER_TRANSITIONS` (orders.policy.ts) does not list.
   * @throws 404 (also when deleted meanwhile); 403 for another user's order or an admin-only move;
   *   409 when items or currency change on an order that is not `pending`, or for a move
   *   `ORDER_TRANSITIONS` (orders.policy.ts) does not allow (including one a concurrent move made stale);
   *   412/428 for the request's `If-Match` (`preconditions`).
   */
  update(id: number, dto: UpdateOrderDto, caller: AuthUser, preconditions?: WritePreconditions): Promise<Tagged<OrderResponse>> {
    return this.change(id, { items: dto.items, currency: dto.currency, status: dto.status }, caller, preconditions, true);
  }

  /**
   * Deletes an order and its items, only while `pending` or `cancelled`, in one conditional DELETE
   * (`WHERE id = ? AND status IN (pending, cancelled)`): of concurrent deletes exactly one succeeds.
   * @throws 403; 404 when missing or deleted meanwhile; 409 naming the status otherwise; 412/428 (`If-Match`).
   */
  async remove(id: number, caller: AuthUser, preconditions?: WritePreconditions): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const order = await this.load(manager, id, caller);
      const gone = await this.eventData(manager, order);
      const { version } = versionCondition(preconditions, 'order', id, order.version);
      const result = await manager
        .createQueryBuilder()
        .delete()
        .from(Order)
        .where(`id = :id AND status IN (:...deletable)${version === undefined ? '' : ' AND version = :version'}`, { id, deletable: DELETABLE, version })
        .execute();
      if (!result.affected) {
        const now = await manager.findOne(Order, { where: { id }, select: { id: true, status: true, version: true } });
        // with If-Match: a row changed (or gone) since it was loaded is 412; the row as loaded (same version) but not deletable is 409
        if (version !== undefined && now?.version !== version) throw preconditionFailed('order', id);
        throw now === null ? notFound('order', id) : conflict(`order ${id} is ${now.status}; only pending or cancelled orders can be deleted`);
      }
      await this.outbox.append(manager, { type: 'order.deleted', ownerId: order.user_id, resourceId: id, data: gone });
    });
  }

  /**
   * PUT and PATCH. `statusIsMove`: a `status` equal to the stored one is a move too (PATCH, where
   * sending `status` asks for a move); for PUT, the whole representation, it only says "keep".
   */
  private change(
    id: number,
    wanted: OrderChange,
    caller: AuthUser,
    preconditions: WritePreconditions | undefined,
    statusIsMove = false,
  ): Promise<Tagged<OrderResponse>> {
    return this.dataSource.transaction(async (manager) => {
      const order = await this.load(manager, id, caller);
      // If-Match before the content is checked (RFC 9110 §13.2.1): each UPDATE below also requires
      // the version it expects (the loaded one, then one more)
      let { version } = versionCondition(preconditions, 'order', id, order.version);
      const items = wanted.items !== undefined && !sameItems(wanted.items, (await this.itemsOf(manager, [id])).get(id) ?? []) ? wanted.items : undefined;
      const currency = wanted.currency !== undefined && wanted.currency !== order.currency ? wanted.currency : undefined;
      const status = wanted.status !== undefined && (statusIsMove || wanted.status !== order.status) ? wanted.status : undefined;
      if ((items || currency) && order.status !== 'pending') {
        throw conflict(`items and currency can change only while an order is pending; order ${id} is ${order.status}`);
      }
      if (status) authorizeTransition(ORDERS_POLICY, caller, order.status, status);

      const now = new Date();
      if (items || currency) {
        const set: Partial<Order> = { updated_at: now };
        if (currency) set.currency = currency;
        if (items) set.total_cents = totalCents(items);
        await this.updateIfStatus(
          manager,
          id,
          'pending',
          set,
          (now) => `items and currency can change only while an order is pending; order ${id} is ${now}`,
          version,
        );
        if (version !== undefined) version++;
        if (items) {
          await manager.delete(OrderItem, { order_id: id });
          await this.insertItems(manager, id, items);
        }
      }
      if (status) {
        await this.updateIfStatus(
          manager,
          id,
          order.status,
          { status, updated_at: now },
          (current) => `cannot change status from ${current} to ${status}`,
          version,
        );
      }
      if (version !== undefined && !items && !currency && !status) {
        // nothing to write, so no conditional UPDATE checked the tag: the version is read again. The
        // items compared above were read after the order, so a concurrent change they reflect has
        // committed its version too (one transaction) and is seen here → 412, not a second 200
        const latest = await manager.findOne(Order, { where: { id }, select: { id: true, version: true } });
        if (latest?.version !== version) throw preconditionFailed('order', id);
      }
      const events: EventType[] = [];
      if (items || currency) events.push('order.updated');
      if (status) events.push(`order.${status as Exclude<OrderStatus, 'pending'>}`);
      await this.emit(manager, id, events);
      return this.read(manager, id, caller);
    });
  }

  /**
   * UPDATE … WHERE id = ? AND status = `expected` [AND version = `version`, with If-Match]; the
   * version column is incremented by the same statement. 0 rows means a concurrent write won: 412
   * with If-Match, else the order is re-read to tell a deletion (404) from a status move (409
   * `message(current status)`).
   */
  private async updateIfStatus(
    manager: EntityManager,
    id: number,
    expected: OrderStatus,
    set: Partial<Order>,
    message: (current: OrderStatus) => string,
    version?: number,
  ): Promise<void> {
    const where = `id = :id AND status = :expected${version === undefined ? '' : ' AND version = :version'}`;
    const result = await manager.createQueryBuilder().update(Order).set(set).where(where, { id, expected, version }).execute();
    if (result.affected) return;
    if (version !== undefined) throw preconditionFailed('order', id);
    const current = await this.statusOf(manager, id);
    requireAffected(result, () => (current === null ? notFound('order', id) : conflict(message(current))));
  }

  /** The stored status of order `id`, or null when it does not exist (any owner). */
  private async statusOf(manager: EntityManager, id: number): Promise<OrderStatus | null> {
    const row = await manager.findOne(Order, { where: { id }, select: { id: true, status: true } });
    return row?.status ?? null;
  }

  private async insertItems(manager: EntityManager, orderId: number, items: readonly OrderItemDto[]): Promise<void> {
    await manager.insert(
      OrderItem,
      items.map((item, position) => ({ order_id: orderId, position, sku: item.sku, quantity: item.quantity, unit_price_cents: item.unit_price_cents })),
    );
  }

  /** The items of several orders in one query, by order id, each list in position order. */
  private async itemsOf(manager: EntityManager, orderIds: number[]): Promise<Map<number, OrderItem[]>> {
    const byOrder = new Map<number, OrderItem[]>();
    if (orderIds.length === 0) return byOrder;
    const rows = await manager
      .getRepository(OrderItem)
      .createQueryBuilder('i')
      .where('i.order_id IN (:...orderIds)', { orderIds })
      .orderBy('i.order_id', 'ASC')
      .addOrderBy('i.position', 'ASC')
      .getMany();
    for (const row of rows) {
      const list = byOrder.get(row.order_id) ?? [];
      list.push(row);
      byOrder.set(row.order_id, list);
    }
    return byOrder;
  }

  /** Appends `types`, in order, for order `id` as `manager` reads it now (owned by its user). */
  private async emit(manager: EntityManager, id: number, types: readonly EventType[]): Promise<void> {
    if (types.length === 0) return;
    const order = await manager.findOneOrFail(Order, { where: { id } });
    const data = await this.eventData(manager, order);
    for (const type of types) await this.outbox.append(manager, { type, ownerId: order.user_id, resourceId: id, data });
  }

  /** The order with its items as `GET /v1` and `GET /v2` show it (the same shape, each version's links). */
  private async eventData(manager: EntityManager, order: Order): Promise<{ v1: OrderResponse; v2: OrderResponse }> {
    const items = (await this.itemsOf(manager, [order.id])).get(order.id) ?? [];
    return inBothVersions(() => toOrderResponse(order, items));
  }

  /** The order `id` with its items, read through `manager`, tagged with its version. @throws 404, 403 */
  private async read(manager: EntityManager, id: number, caller: AuthUser): Promise<Tagged<OrderResponse>> {
    const order = await this.load(manager, id, caller, 'read');
    return tagged(toOrderResponse(order, (await this.itemsOf(manager, [id])).get(id) ?? []), order.version);
  }

  /** The order `id` if the caller may `action` it ({@link ORDERS_POLICY}). @throws 404, 403 */
  private async load(manager: EntityManager, id: number, caller: AuthUser, action: 'read' | 'write' = 'write'): Promise<Order> {
    return authorize(ORDERS_POLICY, action, caller, await manager.findOne(Order, { where: { id } }), id);
  }
}
