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
 * Indexes for change sync on every list that has `updated_at` (`updated_at[gt]=T&sort=updated_at`
 * with cursor paging): the keyset predicate `(updated_at, id) > (:t, :id)` and the range bound are
 * one range of an index `(equality columns…, updated_at, id)` that returns the page in order, on
 * SQLite and PostgreSQL alike. Per list shape: every row (users, tags, OAuth clients, orders and
 * todos for admins), the caller's own rows (orders by `user_id`, todos by `owner_id`) and the
 * comments of one article. The OAuth clients' single-column `created_at` index becomes
 * `(created_at, id)` like every other list's, so `sort=created_at` ends with `id` from the index too.
 */
const CHANGES: TableChange[] = [
  { table: 'users', drop: [], create: [['updated_at', 'id']] },
  { table: 'tags', drop: [], create: [['updated_at', 'id']] },
  { table: 'comments', drop: [], create: [['article_id', 'updated_at', 'id']] },
  {
    table: 'orders',
    drop: [],
    create: [
      ['updated_at', 'id'],
      ['user_id', 'updated_at', 'id'],
    ],
  },
  { table: 'todos', drop: [], create: [['owner_id', 'updated_at', 'id']] },
  {
    table: 'oauth_clients',
    drop: [['created_at']],
    create: [
      ['created_at', 'id'],
      ['updated_at', 'id'],
    ],
  },
];

const indexName = (table: string, columns: string[]) => `idx_${table}_${columns.join('_')}`;

/**
 * Change-sync indexes (see {@link CHANGES}); `down` drops them and restores the replaced ones.
 * Creating an index locks the table against writes while it builds, so on a large PostgreSQL
 * table run the migration in a quiet moment.
 */
export class SyncIndexes1764420000000 implements MigrationInterface {
  name = 'SyncIndexes1764420000000';

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
