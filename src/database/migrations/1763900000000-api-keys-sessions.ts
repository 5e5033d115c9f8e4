import { Table, type MigrationInterface, type QueryRunner, type TableColumnOptions } from 'typeorm';

// Migrations are frozen history: nothing here is imported from another migration or from the
// project, so that what it does can never change (docs/extending.md). These helpers are copies.

/** Timestamp column type for the running driver: `timestamptz` on PostgreSQL, `datetime` on SQLite. */
function timestampType(queryRunner: QueryRunner): string {
  return queryRunner.connection.driver.options.type === 'postgres' ? 'timestamptz' : 'datetime';
}

/** The `id` primary key every table shares: sequential positive integers (docs/wire.md#ids). */
const idColumn: TableColumnOptions = { name: 'id', type: 'integer', isPrimary: true, isGenerated: true, generationStrategy: 'increment' };

/** API keys and server-side sessions. Both cascade with their user. */
export class ApiKeysSessions1763900000000 implements MigrationInterface {
  name = 'ApiKeysSessions1763900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const ts = timestampType(queryRunner);
    const toUser = { columnNames: ['user_id'], referencedTableName: 'users', referencedColumnNames: ['id'], onDelete: 'CASCADE' };
    await queryRunner.createTable(
      new Table({
        name: 'api_keys',
        columns: [
          idColumn,
          { name: 'user_id', type: 'integer' },
          { name: 'name', type: 'varchar', length: '100' },
          { name: 'prefix', type: 'varchar', length: '16' },
          { name: 'key_hash', type: 'varchar', length: '64', isUnique: true },
          { name: 'scopes', type: 'text' },
          { name: 'expires_at', type: ts, isNullable: true },
          { name: 'last_used_at', type: ts, isNullable: true },
          { name: 'created_at', type: ts },
        ],
        foreignKeys: [toUser],
        indices: [{ name: 'idx_api_keys_user_id_id', columnNames: ['user_id', 'id'] }],
      }),
    );
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
        foreignKeys: [toUser],
        indices: [
          { name: 'idx_sessions_user_id', columnNames: ['user_id'] },
          { name: 'idx_sessions_expires_at', columnNames: ['expires_at'] },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('sessions');
    await queryRunner.dropTable('api_keys');
  }
}
