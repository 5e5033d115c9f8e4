import { Table, type MigrationInterface, type QueryRunner, type TableColumnOptions } from 'typeorm';

// Migrations are frozen history: nothing here is imported from another migration or from the
// project, so that what it does can never change (docs/extending.md). These helpers are copies.

/** Timestamp column type for the running driver: `timestamptz` on PostgreSQL, `datetime` on SQLite. */
function timestampType(queryRunner: QueryRunner): string {
  return queryRunner.connection.driver.options.type === 'postgres' ? 'timestamptz' : 'datetime';
}

/** The `id` primary key every table shares: sequential positive integers (docs/wire.md#ids). */
const idColumn: TableColumnOptions = { name: 'id', type: 'integer', isPrimary: true, isGenerated: true, generationStrategy: 'increment' };

/**
 * Webhook subscriptions (go with their owner) and their deliveries (go with their subscription
 * and with their event, by its public `event_id`). Indexes: a user's subscriptions in id order;
 * the enabled subscriptions of one owner (the fan-out of an event); the worker's due query
 * (`status`, `next_attempt_at`); a subscription's deliveries in id order (with `status` for the
 * filter); the deliveries of an event (its cascade).
 */
export class Webhooks1764510000000 implements MigrationInterface {
  name = 'Webhooks1764510000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const ts = timestampType(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'webhook_subscriptions',
        columns: [
          idColumn,
          { name: 'owner_id', type: 'integer' },
          { name: 'url', type: 'varchar', length: '2048' },
          { name: 'events', type: 'text' },
          { name: 'description', type: 'varchar', length: '500', isNullable: true },
          { name: 'enabled', type: 'boolean' },
          { name: 'api_version', type: 'varchar', length: '8', default: "'1'" },
          { name: 'secret', type: 'varchar', length: '64' },
          { name: 'previous_secret', type: 'varchar', length: '64', isNullable: true },
          { name: 'previous_secret_expires_at', type: ts, isNullable: true },
          { name: 'consecutive_failures', type: 'integer', default: 0 },
          { name: 'disabled_reason', type: 'varchar', length: '200', isNullable: true },
          { name: 'created_at', type: ts },
          { name: 'updated_at', type: ts },
          { name: 'version', type: 'integer', default: 1 },
        ],
        foreignKeys: [{ columnNames: ['owner_id'], referencedTableName: 'users', referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
        indices: [
          { name: 'idx_webhook_subscriptions_owner_id_id', columnNames: ['owner_id', 'id'] },
          { name: 'idx_webhook_subscriptions_enabled_owner_id', columnNames: ['enabled', 'owner_id'] },
          { name: 'idx_webhook_subscriptions_created_at_id', columnNames: ['created_at', 'id'] },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'webhook_deliveries',
        columns: [
          idColumn,
          { name: 'subscription_id', type: 'integer' },
          { name: 'event_id', type: 'varchar', length: '40' },
          { name: 'event_type', type: 'varchar', length: '64' },
          { name: 'status', type: 'varchar', length: '16', default: "'pending'" },
          { name: 'attempts', type: 'integer', default: 0 },
          { name: 'next_attempt_at', type: ts, isNullable: true },
          { name: 'lease_expires_at', type: ts, isNullable: true },
          { name: 'claim_token', type: 'varchar', length: '36', isNullable: true },
          { name: 'last_status_code', type: 'integer', isNullable: true },
          { name: 'last_error', type: 'varchar', length: '200', isNullable: true },
          { name: 'last_attempt_at', type: ts, isNullable: true },
          { name: 'delivered_at', type: ts, isNullable: true },
          { name: 'created_at', type: ts },
        ],
        foreignKeys: [
          { columnNames: ['subscription_id'], referencedTableName: 'webhook_subscriptions', referencedColumnNames: ['id'], onDelete: 'CASCADE' },
          { columnNames: ['event_id'], referencedTableName: 'events', referencedColumnNames: ['event_id'], onDelete: 'CASCADE' },
        ],
        indices: [
          { name: 'idx_webhook_deliveries_status_next_attempt_at', columnNames: ['status', 'next_attempt_at'] },
          { name: 'idx_webhook_deliveries_subscription_id_id', columnNames: ['subscription_id', 'id'] },
          { name: 'idx_webhook_deliveries_subscription_id_status_id', columnNames: ['subscription_id', 'status', 'id'] },
          { name: 'idx_webhook_deliveries_subscription_id_created_at_id', columnNames: ['subscription_id', 'created_at', 'id'] },
          { name: 'idx_webhook_deliveries_event_id', columnNames: ['event_id'] },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('webhook_deliveries');
    await queryRunner.dropTable('webhook_subscriptions');
  }
}
