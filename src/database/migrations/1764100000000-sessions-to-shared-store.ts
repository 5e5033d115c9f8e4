import { type MigrationInterface, type QueryRunner, Table } from 'typeorm';

// Migrations are frozen history: nothing here is imported from another migration or from the
// project, so that what it does can never change (docs/extending.md). These helpers are copies.

/** Timestamp column type for the running driver: `timestamptz` on PostgreSQL, `datetime` on SQLite. */
function timestampType(queryRunner: QueryRunner): string {
  return queryRunner.connection.driver.options.type === 'postgres' ? 'timestamptz' : 'datetime';
}

/**
 * Sessions move from the database to the shared store (in process, or Redis with REDIS_URL —
 * docs/operations.md#several-instances-and-redis): the `sessions` table goes. Open sessions end, so users sign in again once after the
 * upgrade. `down` recreates the empty table.
 */
export class SessionsToSharedStore1764100000000 implements MigrationInterface {
  name = 'SessionsToSharedStore1764100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('sessions');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const ts = timestampType(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'sessions',
        columns: [
          { name: 'id_hash', type: 'varchar', length: '64', isPrimary: true },
          { name: 'user_id', type: 'integer' },
          { name: 'csrf_token', type: 'varchar', length: '64' },
          { name: 'created_at', type: ts },
          { name: 'last_seen_at', type: ts },
          { name: 'expires_at', type: ts },
        ],
        foreignKeys: [{ columnNames: ['user_id'], referencedTableName: 'users', referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
        indices: [
          { name: 'idx_sessions_user_id', columnNames: ['user_id'] },
          { name: 'idx_sessions_expires_at', columnNames: ['expires_at'] },
        ],
      }),
    );
  }
}
