import type { ListSpec } from '../common/list/list-query.js';

/** The comments list grammar (SPEC §6), within one article: filter `author`; sort `id`, `created_at`. */
export const COMMENTS_LIST: ListSpec = {
  resource: 'comment',
  sortable: { id: 'c.id', created_at: 'c.created_at' },
  filters: {
    author: { type: 'int', column: 'c.author_id', description: 'Comments by this user id.', example: 2 },
  },
  fields: ['body', 'article', 'author', 'created_at', 'updated_at'],
  alias: 'c',
  columns: { body: ['body'], article: ['article_id'], author: ['author_id'], created_at: ['created_at'], updated_at: ['updated_at'] },
  always: ['article_id', 'author_id'],
};
