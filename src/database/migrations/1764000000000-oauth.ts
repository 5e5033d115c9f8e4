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
 * OAuth 2.0 authorization server: clients, authorization codes, grants and their
 * refresh tokens. Codes and grants go with their user or client; refresh tokens with their grant.
 */
export class OAuth1764000000000 implements MigrationInterface {
  name = 'OAuth1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const ts = timestampType(queryRunner);
    const toUser = { columnNames: ['user_id'], referencedTableName: 'users', referencedColumnNames: ['id'], onDelete: 'CASCADE' };
    const toClient = { columnNames: ['oauth_client_id'], referencedTableName: 'oauth_clients', referencedColumnNames: ['id'], onDelete: 'CASCADE' };
    await queryRunner.createTable(
      new Table({
        name: 'oauth_clients',
        columns: [
          idColumn,
          { name: 'client_id', type: 'varchar', length: '64', isUnique: true },
          { name: 'name', type: 'varchar', length: '100' },
          { name: 'redirect_uris', type: 'text' },
          { name: 'scopes', type: 'text' },
          { name: 'confidential', type: 'boolean' },
          { name: 'secret_hash', type: 'varchar', length: '64', isNullable: true },
          { name: 'created_by', type: 'integer', isNullable: true },
          { name: 'created_at', type: ts },
          { name: 'updated_at', type: ts },
        ],
        foreignKeys: [{ columnNames: ['created_by'], referencedTableName: 'users', referencedColumnNames: ['id'], onDelete: 'SET NULL' }],
        indices: [{ name: 'idx_oauth_clients_created_at', columnNames: ['created_at'] }],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'oauth_grants',
        columns: [
          idColumn,
          { name: 'user_id', type: 'integer' },
          { name: 'oauth_client_id', type: 'integer' },
          { name: 'scopes', type: 'text' },
          { name: 'family_id', type: 'varchar', length: '36', isUnique: true },
          { name: 'created_at', type: ts },
          { name: 'last_used_at', type: ts },
        ],
        foreignKeys: [toUser, toClient],
        indices: [
          { name: 'idx_oauth_grants_user_id_id', columnNames: ['user_id', 'id'] },
          { name: 'idx_oauth_grants_oauth_client_id', columnNames: ['oauth_client_id'] },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'oauth_authorization_codes',
        columns: [
          idColumn,
          { name: 'code_hash', type: 'varchar', length: '64', isUnique: true },
          { name: 'oauth_client_id', type: 'integer' },
          { name: 'user_id', type: 'integer' },
          { name: 'redirect_uri', type: 'text' },
          { name: 'scopes', type: 'text' },
          { name: 'code_challenge', type: 'varchar', length: '128' },
          { name: 'code_challenge_method', type: 'varchar', length: '8' },
          { name: 'expires_at', type: ts },
          { name: 'used_at', type: ts, isNullable: true },
          { name: 'grant_id', type: 'integer', isNullable: true },
          { name: 'created_at', type: ts },
        ],
        foreignKeys: [
          toUser,
          toClient,
          { columnNames: ['grant_id'], referencedTableName: 'oauth_grants', referencedColumnNames: ['id'], onDelete: 'SET NULL' },
        ],
        indices: [
          { name: 'idx_oauth_codes_oauth_client_id', columnNames: ['oauth_client_id'] },
          { name: 'idx_oauth_codes_user_id', columnNames: ['user_id'] },
          { name: 'idx_oauth_codes_expires_at', columnNames: ['expires_at'] },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'oauth_refresh_tokens',
        columns: [
          idColumn,
          { name: 'grant_id', type: 'integer' },
          { name: 'token_hash', type: 'varchar', length: '64', isUnique: true },
          { name: 'scopes', type: 'text' },
          { name: 'access_jti', type: 'varchar', length: '36' },
          { name: 'access_expires_at', type: ts },
          { name: 'expires_at', type: ts },
          { name: 'rotated_at', type: ts, isNullable: true },
          { name: 'created_at', type: ts },
        ],
        foreignKeys: [{ columnNames: ['grant_id'], referencedTableName: 'oauth_grants', referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
        indices: [{ name: 'idx_oauth_refresh_tokens_grant_id', columnNames: ['grant_id'] }],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('oauth_refresh_tokens');
    await queryRunner.dropTable('oauth_authorization_codes');
    await queryRunner.dropTable('oauth_grants');
    await queryRunner.dropTable('oauth_clients');
  }
}
