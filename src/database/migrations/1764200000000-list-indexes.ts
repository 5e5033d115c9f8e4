import { type MigrationInterface, type QueryRunner, TableIndex } from 'typeorm';

/**
 * One index change: the single-column indexes `drop` are replaced by the composite `create` ones.
 * Index names are `idx_<table>_<columns joined by _>`.
 */
interface TableChange {
  table: string;
  drop: string[][];
  create: string[][];
}

/**
 * Indexes the list queries (docs/lists.md#performance) can be served from, on SQLite and PostgreSQL alike. A list
 * orders by its sort key and then `id` in the same direction, under equality conditions (the
 * caller's visibility and the filters), so the index for "filter columns, sort column, id" returns
 * a page in order by reading its first entries, forwards or backwards, and answers the exact
 * `COUNT(*)` from the index alone. Covered: every documented sort of every list with `id` last,
 * and combined with the most selective equality: the article `status` (published to everyone),
 * an article's comments, the author's articles by status and the owner's todos by status.
 */
const CHANGES: TableChange[] = [
  {
    table: 'articles',
    drop: [['title'], ['status'], ['published_at'], ['created_at'], ['updated_at'], ['author_id', 'id']],
    create: [
      ['title', 'id'],
      ['published_at', 'id'],
      ['created_at', 'id'],
      ['updated_at', 'id'],
      ['status', 'id'],
      ['status', 'title', 'id'],
      ['status', 'published_at', 'id'],
      ['status', 'created_at', 'id'],
      ['status', 'updated_at', 'id'],
      ['author_id', 'status', 'id'],
    ],
  },
  { table: 'comments', drop: [['created_at']], create: [['article_id', 'created_at', 'id']] },
  {
    table: 'todos',
    drop: [['title'], ['status'], ['created_at'], ['updated_at']],
    create: [
      ['title', 'id'],
      ['status', 'id'],
      ['created_at', 'id'],
      ['updated_at', 'id'],
      ['owner_id', 'status', 'id'],
    ],
  },
  {
    table: 'orders',
    drop: [['status'], ['total_cents'], ['created_at']],
    create: [
      ['status', 'id'],
      ['total_cents', 'id'],
      ['created_at', 'id'],
      ['user_id', 'created_at', 'id'],
    ],
  },
  {
    table: 'users',
    drop: [['name'], ['age'], ['role'], ['created_at']],
    create: [
      ['name', 'id'],
      ['age', 'id'],
      ['role', 'id'],
      ['created_at', 'id'],
    ],
  },
  { table: 'tags', drop: [['created_at']], create: [['created_at', 'id']] },
];

const indexName = (table: string, columns: string[]) => `idx_${table}_${columns.join('_')}`;

/**
 * Composite list indexes (see {@link CHANGES}); `down` restores the single-column ones. Creating
 * an index locks the table against writes while it builds, so on a large PostgreSQL table run the
 * migration in a quiet moment.
 */
export class ListIndexes1764200000000 implements MigrationInterface {
  name = 'ListIndexes1764200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const { table, drop, create } of CHANGES) {
      for (const columns of create) await queryRunner.createIndex(table, new TableIndex({ name: indexName(table, columns), columnNames: columns }));
      for (const columns of drop) await queryRunner.dropIndex(table, indexName(table, columns));
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const { table, drop, create } of [...CHANGES].reverse()) {
      for (const columns of drop) await queryRunner.createIndex(table, new TableIndex({ name: indexName(table, columns), columnNames: columns }));
      for (const columns of create) await queryRunner.dropIndex(table, indexName(table, columns));
    }
  }
}
