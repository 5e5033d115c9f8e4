import { defineFields } from '../common/list/field-table.js';
import { defineResource } from '../common/resources/define-resource.js';
import type { TagsService } from '../tags/tags.service.js';
import { Article, ARTICLE_STATUSES, ArticleTag } from './article.entity.js';
import { ArticlesService } from './articles.service.js';
import { ARTICLE_COMMENTS } from './article-comments.expansion.js';
import { TAG_OBJECTS } from '../tags/tag.response.js';
import { userReference } from '../users/user-summary.response.js';

/**
 * The articles field table (docs/lists.md#fields-filters-and-sorts-per-collection): filters `status`, `author`, `tag` (articles carrying any of
 * the named tags), with the operators `title[prefix|contains]`, `status[ne|in]`, `author[ne|in]`, `tag[in]`,
 * `published_at[null]`; sort `id`, `title`, `created_at`, `updated_at`, `published_at`. `tags` is no
 * column: the service loads the page's tags in one more query.
 */
export const ARTICLES_FIELDS = defineFields<Article>()({
  alias: 'a',
  fields: {
    title: { column: 'title', sort: true, operators: ['prefix', 'contains'] },
    body: { column: 'body' },
    status: {
      column: 'status',
      operators: ['ne', 'in'],
      filter: { type: 'enum', values: ARTICLE_STATUSES, description: 'Articles in this status.', example: 'published' },
    },
    tags: { column: null },
    // filled only by expand=comments (the first comments, their count and link)
    comments: { column: null },
    author: { column: 'author_id', operators: ['ne', 'in'], filter: { type: 'int', description: 'Articles by this user id.', example: 1 } },
    tag: {
      column: null,
      select: false,
      operators: ['in'],
      filter: {
        type: 'string',
        condition: (param) =>
          `EXISTS (SELECT 1 FROM article_tags atf INNER JOIN tags tgf ON tgf.id = atf.tag_id WHERE atf.article_id = a.id AND tgf.name IN (:...${param}))`,
        description: 'Articles carrying this tag (name, compared case-insensitively).',
        example: 'nestjs',
      },
    },
    published_at: { column: 'published_at', range: 'timestamp', sort: true, operators: ['null'] },
    created_at: { column: 'created_at', range: 'timestamp', sort: true },
    updated_at: { column: 'updated_at', range: 'timestamp', sort: true },
  },
  links: ['author_id'],
  search: { table: 'articles', fields: ['title', 'body'] },
  expand: { author: userReference('author'), tags: TAG_OBJECTS, comments: ARTICLE_COMMENTS },
  order: { sort: ['title', 'created_at', 'updated_at', 'published_at'] },
});

/** Articles (docs/resources/articles.md): `/v1/articles`, scopes `articles:read` and `articles:write`. */
export const ARTICLES = defineResource({
  name: 'articles',
  description: 'Articles with a draft → published → archived life cycle.',
  scopes: true,
  entities: [Article, ArticleTag],
  module: () => import('./articles.module.js').then((file) => file.ArticlesModule),
  events: {
    'article.created': 'an article is created (created as published: followed by article.published)',
    'article.updated': 'an article is changed by PUT or PATCH (any change, status moves included)',
    'article.published': 'its status moves to published; always after the article.updated of the same write',
    'article.deleted': 'an article is deleted',
  },
  versioned: ['Article', 'ArticleV2'],
  fields: ARTICLES_FIELDS,
  serviceTier: (tier) => new ArticlesService(tier.dataSource.getRepository(Article), tier.dataSource, tier.service<TagsService>('tags'), tier.outbox),
});
