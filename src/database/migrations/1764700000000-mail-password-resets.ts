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
 * The mail outbox (docs/operations.md#mail) with the worker's due index (`status`,
 * `next_attempt_at`); password-reset tokens (docs/authentication.md#password-reset), stored as
 * SHA-256, going with their user, found by hash (unique), by user (the deletion at a password
 * change) and by expiry; `users.password_changed_at`, before which sessions end.
 */
export class MailPasswordResets1764700000000 implements MigrationInterface {
  name = 'MailPasswordResets1764700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const ts = timestampType(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'mail_outbox',
        columns: [
          idColumn,
          { name: 'message_id', type: 'varchar', length: '255' },
          { name: 'recipient', type: 'varchar', length: '254' },
          { name: 'subject', type: 'varchar', length: '200' },
          { name: 'text_body', type: 'text', isNullable: true },
          { name: 'status', type: 'varchar', length: '16', default: "'pending'" },
          { name: 'attempts', type: 'integer', default: 0 },
          { name: 'next_attempt_at', type: ts, isNullable: true },
          { name: 'claim_token', type: 'varchar', length: '36', isNullable: true },
          { name: 'last_error', type: 'varchar', length: '200', isNullable: true },
          { name: 'discard_after', type: ts, isNullable: true },
          { name: 'sent_at', type: ts, isNullable: true },
          { name: 'created_at', type: ts },
        ],
        indices: [{ name: 'idx_mail_outbox_status_next_attempt_at', columnNames: ['status', 'next_attempt_at'] }],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'password_reset_tokens',
        columns: [
          idColumn,
          { name: 'token_hash', type: 'varchar', length: '64', isUnique: true },
          { name: 'user_id', type: 'integer' },
          { name: 'expires_at', type: ts },
          { name: 'created_at', type: ts },
        ],
        foreignKeys: [{ columnNames: ['user_id'], referencedTableName: 'users', referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
        indices: [
          { name: 'idx_password_reset_tokens_user_id', columnNames: ['user_id'] },
          { name: 'idx_password_reset_tokens_expires_at', columnNames: ['expires_at'] },
        ],
      }),
    );
    await queryRunner.query(`ALTER TABLE "users" ADD COLUMN "password_changed_at" ${ts}`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "users" DROP COLUMN "password_changed_at"');
    await queryRunner.dropTable('password_reset_tokens');
    await queryRunner.dropTable('mail_outbox');
  }
}
