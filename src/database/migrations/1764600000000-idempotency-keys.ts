import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

// Migrations are frozen history: nothing here is imported from the project (docs/extending.md).

/**
 * Idempotency keys kept with the writes (docs/writes.md#retrying-safely-idempotency-key): one row
 * per keyed request whose transaction committed, inserted in that transaction. `key_hash` is a
 * SHA-256 of the caller and the key; `response` the sealed response; `expires_at` serves the
 * lookup's expiry check and the pruning of expired rows.
 */
export class IdempotencyKeys1764600000000 implements MigrationInterface {
  name = 'IdempotencyKeys1764600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const ts = queryRunner.connection.driver.options.type === 'postgres' ? 'timestamptz' : 'datetime';
    await queryRunner.createTable(
      new Table({
        name: 'idempotency_keys',
        columns: [
          { name: 'key_hash', type: 'varchar', length: '64', isPrimary: true },
          { name: 'fingerprint', type: 'varchar', length: '64' },
          { name: 'response', type: 'text' },
          { name: 'created_at', type: ts },
          { name: 'expires_at', type: ts },
        ],
        indices: [{ name: 'idx_idempotency_keys_expires_at', columnNames: ['expires_at'] }],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('idempotency_keys');
  }
}
