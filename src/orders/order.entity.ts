import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { VersionedEntity } from '../database/versioned-entity.js';
import { User } from '../users/user.entity.js';

/** Order statuses (docs/resources/orders.md#status); who may make which move is in the orders service. */
export const ORDER_STATUSES = ['pending', 'paid', 'shipped', 'delivered', 'cancelled'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** ISO 4217 currencies the API accepts (docs/resources/orders.md). */
export const CURRENCIES = ['EUR', 'USD', 'GBP'] as const;
export type Currency = (typeof CURRENCIES)[number];

/**
 * An order (docs/resources/orders.md), private to its user. Money is in integer minor units (cents);
 * `total_cents` = Σ quantity × unit_price_cents, computed by the service and stored for sorting.
 * 64-bit columns: PostgreSQL returns them as strings, so mappers convert with Number().
 */
@Entity('orders')
@Index('idx_orders_user_id_id', ['user_id', 'id'])
@Index('idx_orders_user_id_created_at_id', ['user_id', 'created_at', 'id'])
@Index('idx_orders_currency', ['currency'])
@Index('idx_orders_status_id', ['status', 'id'])
@Index('idx_orders_total_cents_id', ['total_cents', 'id'])
@Index('idx_orders_created_at_id', ['created_at', 'id'])
@Index('idx_orders_updated_at_id', ['updated_at', 'id'])
@Index('idx_orders_user_id_updated_at_id', ['user_id', 'updated_at', 'id'])
export class Order extends VersionedEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'integer' })
  user_id: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  @Column({ type: 'varchar', length: 3 })
  currency: Currency;

  @Column({ type: 'varchar', length: 16, default: 'pending' })
  status: OrderStatus;

  @Column({ type: 'bigint' })
  total_cents: string | number;
}

/** One line of an order; `position` keeps the order the client sent the items in. */
@Entity('order_items')
@Index('idx_order_items_order_id_position', ['order_id', 'position'])
export class OrderItem {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'integer' })
  order_id: number;

  @ManyToOne(() => Order, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'order_id' })
  order?: Relation<Order>;

  @Column({ type: 'integer' })
  position: number;

  @Column({ type: 'varchar', length: 64 })
  sku: string;

  @Column({ type: 'integer' })
  quantity: number;

  @Column({ type: 'bigint' })
  unit_price_cents: string | number;
}
