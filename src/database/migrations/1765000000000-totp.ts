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
 * Two-factor authentication (docs/authentication.md#two-factor-authentication-totp): one encrypted
 * TOTP secret per user (keyed by the user, pending until `enabled_at`, with the time step of the
 * last accepted code), and the recovery codes, stored as SHA-256 (unique), found by user; both go
 * with their user.
 */
export class Totp1765000000000 implements MigrationInterface {
  name = 'Totp1765000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const ts = timestampType(queryRunner);
    const userForeignKey = { columnNames: ['user_id'], referencedTableName: 'users', referencedColumnNames: ['id'], onDelete: 'CASCADE' };
    await queryRunner.createTable(
      new Table({
        name: 'totp_secrets',
        columns: [
          { name: 'user_id', type: 'integer', isPrimary: true },
          { name: 'secret_encrypted', type: 'varchar', length: '255' },
          { name: 'enabled_at', type: ts, isNullable: true },
          { name: 'last_step', type: 'integer', isNullable: true },
          { name: 'created_at', type: ts },
        ],
        foreignKeys: [userForeignKey],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'totp_recovery_codes',
        columns: [
          idColumn,
          { name: 'user_id', type: 'integer' },
          { name: 'code_hash', type: 'varchar', length: '64', isUnique: true },
          { name: 'created_at', type: ts },
        ],
        foreignKeys: [userForeignKey],
        indices: [{ name: 'idx_totp_recovery_codes_user_id', columnNames: ['user_id'] }],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('totp_recovery_codes');
    await queryRunner.dropTable('totp_secrets');
  }
}
