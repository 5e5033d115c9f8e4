import { Table, type MigrationInterface, type QueryRunner, type TableColumnOptions } from 'typeorm';

// Migrations are frozen history: nothing here is imported from another migration or from the
// project, so that what it does can never change (docs/extending.md). These helpers are copies.

/** Timestamp column type for the running driver: `timestamptz` on PostgreSQL, `datetime` on SQLite. */
function timestampType(queryRunner: QueryRunner): string {
  return queryRunner.connection.driver.options.type === 'postgres' ? 'timestamptz' : 'datetime';
}

/** The `id` primary key every table shares: sequential positive integers (docs/wire.md#ids). */
const idColumn: TableColumnOptions = { name: 'id', type: 'integer', isPrimary: true, isGenerated: true, generationStrategy: 'increment' };

/** `created_at`/`updated_at` columns in the driver's timestamp type. */
function timestampColumns(queryRunner: QueryRunner): TableColumnOptions[] {
  const type = timestampType(queryRunner);
  return [
    { name: 'created_at', type },
    { name: 'updated_at', type },
  ];
}

/**
 * Tags, articles (with the `article_tags` join table), comments, orders and order items (the
 * second migration). Driver-neutral Table API; every filterable and sortable column is indexed,
 * foreign keys cascade so a user's deletion removes what they own (docs/resources/users.md).
 */
export class ArticlesCommentsTagsOrders1763800000000 implements MigrationInterface {
  name = 'ArticlesCommentsTagsOrders1763800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const ts = timestampType(queryRunner);
    const cascade = (column: string, table: string) => ({
      columnNames: [column],
      referencedTableName: table,
      referencedColumnNames: ['id'],
      onDelete: 'CASCADE',
    });
    await queryRunner.createTable(
      new Table({
        name: 'tags',
        columns: [idColumn, { name: 'name', type: 'varchar', length: '50', isUnique: true }, ...timestampColumns(queryRunner)],
        indices: [{ name: 'idx_tags_created_at', columnNames: ['created_at'] }],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'articles',
        columns: [
          idColumn,
          { name: 'title', type: 'varchar', length: '200' },
          { name: 'body', type: 'text', default: "''" },
          { name: 'status', type: 'varchar', length: '16', default: "'draft'" },
          { name: 'author_id', type: 'integer' },
          { name: 'published_at', type: ts, isNullable: true },
          ...timestampColumns(queryRunner),
        ],
        foreignKeys: [cascade('author_id', 'users')],
        indices: [
          { name: 'idx_articles_author_id_id', columnNames: ['author_id', 'id'] },
          { name: 'idx_articles_title', columnNames: ['title'] },
          { name: 'idx_articles_status', columnNames: ['status'] },
          { name: 'idx_articles_published_at', columnNames: ['published_at'] },
          { name: 'idx_articles_created_at', columnNames: ['created_at'] },
          { name: 'idx_articles_updated_at', columnNames: ['updated_at'] },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'article_tags',
        columns: [
          { name: 'article_id', type: 'integer', isPrimary: true },
          { name: 'tag_id', type: 'integer', isPrimary: true },
        ],
        foreignKeys: [cascade('article_id', 'articles'), cascade('tag_id', 'tags')],
        indices: [{ name: 'idx_article_tags_tag_id', columnNames: ['tag_id'] }],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'comments',
        columns: [
          idColumn,
          { name: 'body', type: 'text' },
          { name: 'article_id', type: 'integer' },
          { name: 'author_id', type: 'integer' },
          ...timestampColumns(queryRunner),
        ],
        foreignKeys: [cascade('article_id', 'articles'), cascade('author_id', 'users')],
        indices: [
          { name: 'idx_comments_article_id_id', columnNames: ['article_id', 'id'] },
          { name: 'idx_comments_author_id', columnNames: ['author_id'] },
          { name: 'idx_comments_created_at', columnNames: ['created_at'] },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'orders',
        columns: [
          idColumn,
          { name: 'user_id', type: 'integer' },
          { name: 'currency', type: 'varchar', length: '3' },
          { name: 'status', type: 'varchar', length: '16', default: "'pending'" },
          { name: 'total_cents', type: 'bigint' },
          ...timestampColumns(queryRunner),
        ],
        foreignKeys: [cascade('user_id', 'users')],
        indices: [
          { name: 'idx_orders_user_id_id', columnNames: ['user_id', 'id'] },
          { name: 'idx_orders_currency', columnNames: ['currency'] },
          { name: 'idx_orders_status', columnNames: ['status'] },
          { name: 'idx_orders_total_cents', columnNames: ['total_cents'] },
          { name: 'idx_orders_created_at', columnNames: ['created_at'] },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'order_items',
        columns: [
          idColumn,
          { name: 'order_id', type: 'integer' },
          { name: 'position', type: 'integer' },
          { name: 'sku', type: 'varchar', length: '64' },
          { name: 'quantity', type: 'integer' },
          { name: 'unit_price_cents', type: 'bigint' },
        ],
        foreignKeys: [cascade('order_id', 'orders')],
        indices: [{ name: 'idx_order_items_order_id_position', columnNames: ['order_id', 'position'] }],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['order_items', 'orders', 'comments', 'article_tags', 'articles', 'tags']) await queryRunner.dropTable(table);
  }
}
