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
 * The logins a user can see and end (docs/authentication.md#your-logins): one row per token family
 * or cookie session, going with its user, listed per user (`user_id`, `id`), found by what it
 * stands for (`kind`, `handle`: unique).
 */
export class Logins1764900000000 implements MigrationInterface {
  name = 'Logins1764900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const ts = timestampType(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'logins',
        columns: [
          idColumn,
          { name: 'user_id', type: 'integer' },
          { name: 'kind', type: 'varchar', length: '16' },
          { name: 'handle', type: 'varchar', length: '64' },
          { name: 'address', type: 'varchar', length: '64' },
          { name: 'user_agent', type: 'varchar', length: '256' },
          { name: 'created_at', type: ts },
          { name: 'last_used_at', type: ts },
          { name: 'expires_at', type: ts },
        ],
        foreignKeys: [{ columnNames: ['user_id'], referencedTableName: 'users', referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
        indices: [
          { name: 'idx_logins_user_id_id', columnNames: ['user_id', 'id'] },
          { name: 'idx_logins_kind_handle', columnNames: ['kind', 'handle'], isUnique: true },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('logins');
  }
}
