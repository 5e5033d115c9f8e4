import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A searched table and its text columns, the first weighing most in the rank. */
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
 * The full-text search's vectors stored, on PostgreSQL: the previous migration's GIN indexes on
 * each table's `tsvector` expression made PostgreSQL compute the vector again for every row it
 * rechecks or ranks (a phrase, a rank: seconds over a large table), so each searched table now has
 * a side table `<table>_search (id, vector)` — the row's id (its primary key, deleted with the row)
 * and its `tsvector` (`setweight(to_tsvector('simple', coalesce(first, '')), 'A') || … 'B'`) —
 * with a GIN index on `vector`, written by a trigger after every insert and every update of the
 * searched columns, and filled from the existing rows. Like SQLite's FTS5 tables it is no entity's:
 * the tables stay as the entities describe them. SQLite is unchanged. `down` restores the
 * expression indexes.
 */
export class SearchTables1764950000000 implements MigrationInterface {
  name = 'SearchTables1764950000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.options.type !== 'postgres') return;
    for (const { table, columns } of SEARCHED) {
      const search = `${table}_search`;
      const vector = (row: string) =>
        columns.map((column, i) => `setweight(to_tsvector('simple'::regconfig, coalesce(${row}${quote(column)}, '')), '${i === 0 ? 'A' : 'B'}')`).join(' || ');
      await queryRunner.query(`DROP INDEX ${quote(`idx_${table}_search_vector`)}`);
      await queryRunner.query(
        `CREATE TABLE ${quote(search)} ("id" integer PRIMARY KEY REFERENCES ${quote(table)} ("id") ON DELETE CASCADE, "vector" tsvector NOT NULL)`,
      );
      await queryRunner.query(`CREATE INDEX ${quote(`idx_${search}_vector`)} ON ${quote(search)} USING gin ("vector")`);
      await queryRunner.query(`INSERT INTO ${quote(search)} ("id", "vector") SELECT "id", ${vector('')} FROM ${quote(table)}`);
      await queryRunner.query(
        `CREATE FUNCTION ${quote(`${search}_write`)}() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
           INSERT INTO ${quote(search)} ("id", "vector") VALUES (NEW."id", ${vector('NEW.')})
             ON CONFLICT ("id") DO UPDATE SET "vector" = EXCLUDED."vector";
           RETURN NULL;
         END $$`,
      );
      await queryRunner.query(
        `CREATE TRIGGER ${quote(`${search}_write`)} AFTER INSERT OR UPDATE OF ${columns.map(quote).join(', ')} ON ${quote(table)} FOR EACH ROW EXECUTE FUNCTION ${quote(`${search}_write`)}()`,
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.options.type !== 'postgres') return;
    for (const { table, columns } of [...SEARCHED].reverse()) {
      const search = `${table}_search`;
      await queryRunner.query(`DROP TRIGGER ${quote(`${search}_write`)} ON ${quote(table)}`);
      await queryRunner.query(`DROP FUNCTION ${quote(`${search}_write`)}()`);
      await queryRunner.query(`DROP TABLE ${quote(search)}`);
      const vector = columns
        .map((column, i) => `setweight(to_tsvector('simple'::regconfig, coalesce(${quote(column)}, '')), '${i === 0 ? 'A' : 'B'}')`)
        .join(' || ');
      await queryRunner.query(`CREATE INDEX ${quote(`idx_${table}_search_vector`)} ON ${quote(table)} USING gin ((${vector}))`);
    }
  }
}
