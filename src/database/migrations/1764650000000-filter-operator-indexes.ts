import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One index of the filter operators (`[prefix]` and `[contains]`): its name, table, and the
 * PostgreSQL and SQLite definitions (the columns in parentheses, or `USING gin (…)`); an index
 * without a SQLite definition exists on PostgreSQL only.
 */
interface OperatorIndex {
  name: string;
  table: string;
  postgres: string;
  sqlite?: string;
}

/** The trigram operator class, qualified by the schema pg_trgm lives in (`$trgm`). */
const TRGM = '$trgm.gin_trgm_ops';

/**
 * `field[prefix]` reads a range in code point order: on PostgreSQL `column COLLATE "C" >= :p AND
 * column COLLATE "C" < :end`, served by an index on `(… , column COLLATE "C")` whatever the
 * database's collation; on SQLite the same range on the column (BINARY is code point order), served
 * by the existing `(column, id)` and unique indexes, and by the two new ones for a user's own rows.
 * `field[contains]` is `lower(column) LIKE lower('%…%')` on PostgreSQL, served by a trigram GIN index
 * (pg_trgm) on `lower(column)` — on the expression, so that the planner never takes it for an
 * equality on the column, which the B-tree indexes answer far better; SQLite has no such index and
 * filters the rows the other conditions leave.
 */
const INDEXES: OperatorIndex[] = [
  { name: 'idx_todos_owner_id_title_c', table: 'todos', postgres: '(owner_id, title COLLATE "C")', sqlite: '(owner_id, title)' },
  { name: 'idx_todos_title_c', table: 'todos', postgres: '(title COLLATE "C")' },
  { name: 'idx_todos_title_trgm', table: 'todos', postgres: `USING gin (lower(title) ${TRGM})` },
  { name: 'idx_todos_content_trgm', table: 'todos', postgres: `USING gin (lower(content) ${TRGM})` },
  { name: 'idx_articles_title_c', table: 'articles', postgres: '(title COLLATE "C")' },
  { name: 'idx_articles_status_title_c', table: 'articles', postgres: '(status, title COLLATE "C")' },
  { name: 'idx_articles_author_id_title_c', table: 'articles', postgres: '(author_id, title COLLATE "C")', sqlite: '(author_id, title)' },
  { name: 'idx_articles_title_trgm', table: 'articles', postgres: `USING gin (lower(title) ${TRGM})` },
  { name: 'idx_users_name_c', table: 'users', postgres: '(name COLLATE "C")' },
  { name: 'idx_users_username_c', table: 'users', postgres: '(username COLLATE "C")' },
  { name: 'idx_users_name_trgm', table: 'users', postgres: `USING gin (lower(name) ${TRGM})` },
  { name: 'idx_tags_name_c', table: 'tags', postgres: '(name COLLATE "C")' },
  { name: 'idx_tags_name_trgm', table: 'tags', postgres: `USING gin (lower(name) ${TRGM})` },
];

/**
 * Indexes of the filter operators `[prefix]` and `[contains]` (see {@link INDEXES}). On PostgreSQL
 * it creates the pg_trgm extension when the database lacks it (a trusted extension: the role needs
 * the CREATE privilege on the database) and names its operator class by the extension's schema.
 * `down` drops the indexes and leaves the extension. Creating an index locks the table against
 * writes while it builds, so on a large PostgreSQL table run the migration in a quiet moment.
 */
export class FilterOperatorIndexes1764650000000 implements MigrationInterface {
  name = 'FilterOperatorIndexes1764650000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const postgres = queryRunner.connection.options.type === 'postgres';
    let trgm = '';
    if (postgres) {
      await queryRunner.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
      const [row] = (await queryRunner.query(
        `SELECT n.nspname AS schema FROM pg_extension e INNER JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`,
      )) as Array<{ schema: string }>;
      trgm = `"${row.schema.replace(/"/g, '""')}"`;
    }
    for (const index of INDEXES) {
      const definition = postgres ? index.postgres.replace('$trgm', trgm) : index.sqlite;
      if (definition === undefined) continue;
      await queryRunner.query(`CREATE INDEX "${index.name}" ON "${index.table}" ${definition}`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const postgres = queryRunner.connection.options.type === 'postgres';
    for (const index of [...INDEXES].reverse()) {
      if (postgres || index.sqlite !== undefined) await queryRunner.query(`DROP INDEX "${index.name}"`);
    }
  }
}
