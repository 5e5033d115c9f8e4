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
 * E-mail verification (docs/authentication.md#e-mail-verification): `users.email_verified_at`
 * (null for every existing user: no address was verified before) and `users.email_changed_at`
 * (null: the address of every existing user counts as given at registration); the verification
 * tokens, stored as SHA-256 with the address they verify, going with their user, found by hash
 * (unique), by user (deleted at a verification or a change of address) and by expiry.
 */
export class EmailVerification1764800000000 implements MigrationInterface {
  name = 'EmailVerification1764800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const ts = timestampType(queryRunner);
    await queryRunner.query(`ALTER TABLE "users" ADD COLUMN "email_verified_at" ${ts}`);
    await queryRunner.query(`ALTER TABLE "users" ADD COLUMN "email_changed_at" ${ts}`);
    await queryRunner.createTable(
      new Table({
        name: 'email_verification_tokens',
        columns: [
          idColumn,
          { name: 'token_hash', type: 'varchar', length: '64', isUnique: true },
          { name: 'user_id', type: 'integer' },
          { name: 'email', type: 'varchar', length: '254' },
          { name: 'expires_at', type: ts },
          { name: 'created_at', type: ts },
        ],
        foreignKeys: [{ columnNames: ['user_id'], referencedTableName: 'users', referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
        indices: [
          { name: 'idx_email_verification_tokens_user_id', columnNames: ['user_id'] },
          { name: 'idx_email_verification_tokens_expires_at', columnNames: ['expires_at'] },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('email_verification_tokens');
    await queryRunner.query('ALTER TABLE "users" DROP COLUMN "email_changed_at"');
    await queryRunner.query('ALTER TABLE "users" DROP COLUMN "email_verified_at"');
  }
}
