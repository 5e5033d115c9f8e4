import { defineFields } from '../common/list/field-table.js';
import type { ArticlesService } from '../articles/articles.service.js';
import { defineResource } from '../common/resources/define-resource.js';
import { Comment } from './comment.entity.js';
import { CommentsService } from './comments.service.js';
import { COMMENT_ARTICLE } from './comment-article.expansion.js';
import { userReference } from '../users/user-summary.response.js';

/** The comments field table (docs/lists.md#fields-filters-and-sorts-per-collection), within one article: filter `author` (and `author[ne|in]`, `body[contains]`); sort `id`, `created_at`, `updated_at`. */
export const COMMENTS_FIELDS = defineFields<Comment>()({
  alias: 'c',
  fields: {
    body: { column: 'body', operators: ['contains'] },
    article: { column: 'article_id' },
    author: { column: 'author_id', operators: ['ne', 'in'], filter: { type: 'int', description: 'Comments by this user id.', example: 2 } },
    created_at: { column: 'created_at', range: 'timestamp', sort: true },
    updated_at: { column: 'updated_at', range: 'timestamp', sort: true },
  },
  links: ['article_id', 'author_id'],
  search: { table: 'comments', fields: ['body'] },
  expand: { author: userReference('author'), article: COMMENT_ARTICLE },
});

/** Comments (docs/resources/comments.md): `/v1/articles/{id}/comments`, scopes `comments:read` and `comments:write`. */
export const COMMENTS = defineResource({
  name: 'comments',
  description: 'Comments on readable articles, nested under their article: `…/articles/{id}/comments`.',
  scopes: true,
  entities: [Comment],
  module: () => import('./comments.module.js').then((file) => file.CommentsModule),
  events: {
    'comment.created': 'a comment is created',
    'comment.updated': 'a comment is edited',
    'comment.deleted': 'a comment is deleted (by anyone allowed)',
  },
  versioned: ['Comment', 'CommentV2'],
  fields: COMMENTS_FIELDS,
  listPlans: [
    {
      name: "an article's comments",
      caller: 'user',
      visible: 'c.article_id = :parent',
      index: 'idx_comments_article_id_updated_at_id',
      list: (app, query, caller, parent) => app.get(CommentsService).list(parent, query, caller),
    },
  ],
  serviceTier: (tier) => new CommentsService(tier.dataSource.getRepository(Comment), tier.service<ArticlesService>('articles'), tier.outbox),
});
