/**
 * The indexes that exist on PostgreSQL only (docs/lists.md#filter-operators): the `COLLATE "C"`
 * indexes a `[prefix]` range reads where SQLite's `BINARY` order serves from an existing index,
 * the trigram (pg_trgm) indexes of `[contains]`, which SQLite has no equivalent of.
 */
export const POSTGRES_ONLY_INDEXES: ReadonlySet<string> = new Set([
  'idx_todos_title_c',
  'idx_todos_title_trgm',
  'idx_todos_content_trgm',
  'idx_articles_title_c',
  'idx_articles_status_title_c',
  'idx_articles_title_trgm',
  'idx_users_name_c',
  'idx_users_username_c',
  'idx_users_name_trgm',
  'idx_tags_name_c',
  'idx_tags_name_trgm',
]);
