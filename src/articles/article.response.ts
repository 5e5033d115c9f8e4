import { ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ExpandableNames, ExpandableReference } from '../common/openapi/expandable.js';
import { UserSummary } from '../users/user-summary.response.js';
import { CommentPreview } from './comment-preview.response.js';
import type { Row } from '../common/list/field-table.js';
import type { Link } from '../common/list/page.js';
import { toIso } from '../common/list/timestamps.js';
import { LinkDto } from '../common/openapi/link.dto.js';
import { type Article, ARTICLE_STATUSES, type ArticleStatus } from './article.entity.js';
import { linkPrefix } from '../common/versioning/api-versions.js';

/** An article as the API returns it (docs/resources/articles.md). */
@ApiSchema({ name: 'Article' })
@ApiExtraModels(UserSummary)
export class ArticleResponse {
  @ApiProperty({ readOnly: true, example: 1, type: 'integer' })
  id: number;

  @ApiProperty({ example: 'Hello, NestJS 12' })
  title: string;

  @ApiProperty({ example: 'NestJS 12 is published as ES modules only.' })
  body: string;

  @ApiProperty({ enum: ARTICLE_STATUSES, example: 'published' })
  status: ArticleStatus;

  /** Names of the article's tags, sorted. */
  @ExpandableNames('Tag', { description: "The article's tags, sorted by name.", example: ['esm', 'nestjs'] })
  tags: string[];

  /** Id of the authoring user. */
  @ExpandableReference('UserSummary', { description: 'The authoring user.', example: 1 })
  author: number;

  /** When the article was first published; null until then, kept when unpublished or archived. */
  @ApiProperty({ type: 'string', readOnly: true, nullable: true, format: 'date-time', example: '2026-11-21T10:15:00.000Z' })
  published_at: string | null;

  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:15:00.000Z' })
  created_at: string;

  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:15:00.000Z' })
  updated_at: string;

  /** `self`, `author` and `comments`. */
  @ApiProperty({
    type: [LinkDto],
    readOnly: true,
    example: [
      { rel: 'self', href: '/v{version}/articles/1' },
      { rel: 'author', href: '/v{version}/users/1' },
      { rel: 'comments', href: '/v{version}/articles/1/comments' },
    ],
  })
  links: Link[];

  /** Only with `expand=comments`: the first comments, their count and their link. */
  @ApiPropertyOptional({
    type: () => CommentPreview,
    readOnly: true,
    description: 'Only with `expand=comments`: the first comments (oldest first), how many there are, and the link to all of them.',
  })
  comments?: CommentPreview;
}

/**
 * Maps an articles row (entity or raw select; `author_id` is always selected) and its tag names
 * to {@link ArticleResponse}. `tags` undefined leaves the field out (a `fields` list without it).
 */
export function toArticleResponse(source: Row<Article, 'author_id'>, tags: string[] | undefined): ArticleResponse {
  const row = source as Record<string, unknown>;
  const id = Number(row.id);
  const prefix = linkPrefix();
  const author = Number(row.author_id);
  return {
    id,
    title: row.title as string,
    body: row.body as string,
    status: row.status as ArticleStatus,
    tags: tags as string[],
    author,
    published_at: toIso(row.published_at) as string | null,
    created_at: toIso(row.created_at) as string,
    updated_at: toIso(row.updated_at) as string,
    links: [
      { rel: 'self', href: `${prefix}/articles/${id}` },
      { rel: 'author', href: `${prefix}/users/${author}` },
      { rel: 'comments', href: `${prefix}/articles/${id}/comments` },
    ],
  };
}
