import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The resource tables whose rows carry a version (RFC 9110 §8.8.3 entity tags, conditional writes). */
const TABLES = ['users', 'todos', 'tags', 'articles', 'comments', 'orders'];

/**
 * A `version` column on every resource table: 1 for existing and new rows, incremented by every
 * write of the row. The entity tag of a representation is derived from it, and `If-Match` writes
 * are one `UPDATE … WHERE id = ? AND version = ?` (src/common/writes/preconditions.ts).
 */
export class ResourceVersions1764300000000 implements MigrationInterface {
  name = 'ResourceVersions1764300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const table of TABLES) await queryRunner.query(`ALTER TABLE "${table}" ADD COLUMN "version" integer NOT NULL DEFAULT 1`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of [...TABLES].reverse()) await queryRunner.dropColumn(table, 'version');
  }
}
