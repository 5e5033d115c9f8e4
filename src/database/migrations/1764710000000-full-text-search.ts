import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A searched table: its name and its text columns, the first weighing most in the rank. */
interface Searched {
  table: string;
  columns: string[];
}

/** The tables `q` searches and their columns (docs/lists.md#full-text-search-q). */
const SEARCHED: Searched[] = [
  { table: 'articles', columns: ['title', 'body'] },
  { table: 'todos', columns: ['title', 'content'] },
  { table: 'comments', columns: ['body'] },
  { table: 'tags', columns: ['name'] },
  { table: 'users', columns: ['name', 'username'] },
];

const quote = (name: string) => `"${name}"`;

/**
 * Full-text search with `q`:
 * - PostgreSQL: a GIN index (`idx_<table>_search_vector`) on each searched table's `tsvector` —
 *   `setweight(to_tsvector('simple', coalesce(first, '')), 'A') || setweight(…other…, 'B')…`, the
 *   `simple` configuration (lower-cased words, no stemming, no stop words, any language). The list
 *   query writes the same expression, so the index serves it; an index on the expression rather
 *   than a generated column keeps the tables as the entities describe them (TypeORM's schema builder
 *   and `migration:generate` see nothing to change). Building it locks the table against writes.
 * - SQLite: an FTS5 external-content table `<table>_fts` over the same columns (the `unicode61`
 *   tokenizer, diacritics kept, as PostgreSQL keeps them), kept in step by triggers after each
 *   insert, delete and update of those columns, and filled from the existing rows.
 * `down` drops them.
 */
export class FullTextSearch1764710000000 implements MigrationInterface {
  name = 'FullTextSearch1764710000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const postgres = queryRunner.connection.options.type === 'postgres';
    for (const { table, columns } of SEARCHED) {
      if (postgres) {
        const vector = columns
          .map((column, i) => `setweight(to_tsvector('simple'::regconfig, coalesce(${quote(column)}, '')), '${i === 0 ? 'A' : 'B'}')`)
          .join(' || ');
        await queryRunner.query(`CREATE INDEX ${quote(`idx_${table}_search_vector`)} ON ${quote(table)} USING gin ((${vector}))`);
        continue;
      }
      const fts = `${table}_fts`;
      const list = columns.map(quote).join(', ');
      const values = (row: 'new' | 'old') => columns.map((column) => `${row}.${quote(column)}`).join(', ');
      await queryRunner.query(
        `CREATE VIRTUAL TABLE ${quote(fts)} USING fts5(${list}, content='${table}', content_rowid='id', tokenize='unicode61 remove_diacritics 0')`,
      );
      const insert = `INSERT INTO ${quote(fts)} (rowid, ${list}) VALUES (new."id", ${values('new')});`;
      const remove = `INSERT INTO ${quote(fts)} (${quote(fts)}, rowid, ${list}) VALUES ('delete', old."id", ${values('old')});`;
      await queryRunner.query(`CREATE TRIGGER ${quote(`${fts}_insert`)} AFTER INSERT ON ${quote(table)} BEGIN ${insert} END`);
      await queryRunner.query(`CREATE TRIGGER ${quote(`${fts}_delete`)} AFTER DELETE ON ${quote(table)} BEGIN ${remove} END`);
      await queryRunner.query(`CREATE TRIGGER ${quote(`${fts}_update`)} AFTER UPDATE OF ${list} ON ${quote(table)} BEGIN ${remove} ${insert} END`);
      await queryRunner.query(`INSERT INTO ${quote(fts)} (${quote(fts)}) VALUES ('rebuild')`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const postgres = queryRunner.connection.options.type === 'postgres';
    for (const { table } of [...SEARCHED].reverse()) {
      if (postgres) {
        await queryRunner.query(`DROP INDEX ${quote(`idx_${table}_search_vector`)}`);
        continue;
      }
      const fts = `${table}_fts`;
      for (const trigger of ['insert', 'delete', 'update']) await queryRunner.query(`DROP TRIGGER ${quote(`${fts}_${trigger}`)}`);
      await queryRunner.query(`DROP TABLE ${quote(fts)}`);
    }
  }
}
