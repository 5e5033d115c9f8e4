import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

// Migrations are frozen history: nothing here is imported from the project (docs/extending.md).

/**
 * The event log (the transactional outbox): one row per change of a resource, written in the
 * change's own transaction. `id` is the position (insertion order); `event_id` (`evt_` + 32 hex)
 * is the public id; `owner_id` is the user who may see it (NULL: admins only); `data_v1`/`data_v2`
 * are the resource as `GET /v1|v2/…` showed it, as JSON text. No foreign keys: an event outlives
 * the resource and the user it names (a deletion is an event too). Indexes serve `GET /events`
 * in `(created_at, id)` order for admins (every row), for a user (`owner_id = ?`) and by type,
 * in `id` order (the default sort) for a user (admins: the primary key), and the retention job's
 * `created_at < ?` deletes.
 */
export class Events1764500000000 implements MigrationInterface {
  name = 'Events1764500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const ts = queryRunner.connection.driver.options.type === 'postgres' ? 'timestamptz' : 'datetime';
    await queryRunner.createTable(
      new Table({
        name: 'events',
        columns: [
          { name: 'id', type: 'integer', isPrimary: true, isGenerated: true, generationStrategy: 'increment' },
          { name: 'event_id', type: 'varchar', length: '40', isUnique: true },
          { name: 'type', type: 'varchar', length: '64' },
          { name: 'owner_id', type: 'integer', isNullable: true },
          { name: 'resource_id', type: 'integer', isNullable: true },
          { name: 'created_at', type: ts },
          { name: 'data_v1', type: 'text' },
          { name: 'data_v2', type: 'text' },
        ],
        indices: [
          { name: 'idx_events_created_at_id', columnNames: ['created_at', 'id'] },
          { name: 'idx_events_owner_id_created_at_id', columnNames: ['owner_id', 'created_at', 'id'] },
          { name: 'idx_events_owner_id_id', columnNames: ['owner_id', 'id'] },
          { name: 'idx_events_type_created_at_id', columnNames: ['type', 'created_at', 'id'] },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('events');
  }
}
