import { Table, type MigrationInterface, type QueryRunner, type TableColumnOptions } from 'typeorm';

// Migrations are frozen history: nothing here is imported by another migration, and this file
// imports nothing of the project, so that what it does can never change (docs/extending.md).

/** Timestamp column type for the running driver: `timestamptz` on PostgreSQL, `datetime` on SQLite. */
function timestampType(queryRunner: QueryRunner): string {
  return queryRunner.connection.driver.options.type === 'postgres' ? 'timestamptz' : 'datetime';
}

/** The `id` primary key every table shares: sequential positive integers (docs/wire.md#ids). */
const idColumn: TableColumnOptions = { name: 'id', type: 'integer', isPrimary: true, isGenerated: true, generationStrategy: 'increment' };

/** `created_at`/`updated_at` columns in the driver's timestamp type. */
function timestampColumns(queryRunner: QueryRunner): TableColumnOptions[] {
  const type = timestampType(queryRunner);
  return [
    { name: 'created_at', type },
    { name: 'updated_at', type },
  ];
}

/**
 * Users, todos and refresh tokens (the first migration). Written with TypeORM's driver-neutral
 * Table API so that one migration serves SQLite and PostgreSQL. Every filterable and sortable
 * column is indexed (docs/lists.md#performance).
 */
export class InitialSchema1763700000000 implements MigrationInterface {
  name = 'InitialSchema1763700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const ts = timestampType(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'users',
        columns: [
          idColumn,
          { name: 'username', type: 'varchar', length: '32', isUnique: true },
          { name: 'password_hash', type: 'varchar', length: '255' },
          { name: 'name', type: 'varchar', length: '100' },
          { name: 'age', type: 'integer', isNullable: true },
          { name: 'email', type: 'varchar', length: '254', isNullable: true, isUnique: true },
          { name: 'role', type: 'varchar', length: '16', default: "'user'" },
          ...timestampColumns(queryRunner),
        ],
        indices: [
          { name: 'idx_users_name', columnNames: ['name'] },
          { name: 'idx_users_age', columnNames: ['age'] },
          { name: 'idx_users_role', columnNames: ['role'] },
          { name: 'idx_users_created_at', columnNames: ['created_at'] },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'todos',
        columns: [
          idColumn,
          { name: 'title', type: 'varchar', length: '200' },
          { name: 'content', type: 'text', isNullable: true },
          { name: 'status', type: 'varchar', length: '16', default: "'pending'" },
          { name: 'owner_id', type: 'integer' },
          ...timestampColumns(queryRunner),
        ],
        foreignKeys: [{ columnNames: ['owner_id'], referencedTableName: 'users', referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
        indices: [
          { name: 'idx_todos_owner_id_id', columnNames: ['owner_id', 'id'] },
          { name: 'idx_todos_title', columnNames: ['title'] },
          { name: 'idx_todos_status', columnNames: ['status'] },
          { name: 'idx_todos_created_at', columnNames: ['created_at'] },
          { name: 'idx_todos_updated_at', columnNames: ['updated_at'] },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'refresh_tokens',
        columns: [
          idColumn,
          { name: 'token_hash', type: 'varchar', length: '64', isUnique: true },
          { name: 'family_id', type: 'varchar', length: '36' },
          { name: 'user_id', type: 'integer' },
          { name: 'expires_at', type: ts },
          { name: 'revoked_at', type: ts, isNullable: true },
          { name: 'created_at', type: ts },
        ],
        foreignKeys: [{ columnNames: ['user_id'], referencedTableName: 'users', referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
        indices: [
          { name: 'idx_refresh_tokens_family_id', columnNames: ['family_id'] },
          { name: 'idx_refresh_tokens_user_id', columnNames: ['user_id'] },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('refresh_tokens');
    await queryRunner.dropTable('todos');
    await queryRunner.dropTable('users');
  }
}
