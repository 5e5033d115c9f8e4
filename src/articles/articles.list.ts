import type { ListSpec } from '../common/list/list-query.js';
import { ARTICLE_STATUSES } from './article.entity.js';

/**
 * The articles list grammar (SPEC §6): filters `status`, `author`, `tag` (articles carrying any
 * of the named tags); sort `id`, `title`, `created_at`, `updated_at`, `published_at`. `tags` is no
 * column: the service loads the page's tags in one more query.
 */
export const ARTICLES_LIST: ListSpec = {
  resource: 'article',
  sortable: { id: 'a.id', title: 'a.title', created_at: 'a.created_at', updated_at: 'a.updated_at', published_at: 'a.published_at' },
  filters: {
    status: { type: 'enum', values: ARTICLE_STATUSES, column: 'a.status', description: 'Articles in this status.', example: 'published' },
    author: { type: 'int', column: 'a.author_id', description: 'Articles by this user id.', example: 1 },
    tag: {
      type: 'string',
      column: 'a.id',
      condition: (param) =>
        `EXISTS (SELECT 1 FROM article_tags atf INNER JOIN tags tgf ON tgf.id = atf.tag_id WHERE atf.article_id = a.id AND tgf.name IN (:...${param}))`,
      description: 'Articles carrying this tag (name, compared case-insensitively).',
      example: 'nestjs',
    },
  },
  fields: ['title', 'body', 'status', 'tags', 'author', 'published_at', 'created_at', 'updated_at'],
  alias: 'a',
  columns: {
    title: ['title'],
    body: ['body'],
    status: ['status'],
    tags: [],
    author: ['author_id'],
    published_at: ['published_at'],
    created_at: ['created_at'],
    updated_at: ['updated_at'],
  },
  always: ['author_id'],
};
