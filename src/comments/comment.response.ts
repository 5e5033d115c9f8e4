import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ExpandableReference } from '../common/openapi/expandable.js';
import type { Row } from '../common/list/field-table.js';
import type { Link } from '../common/list/page.js';
import { toIso } from '../common/list/timestamps.js';
import { LinkDto } from '../common/openapi/link.dto.js';
import { linkPrefix } from '../common/versioning/api-versions.js';
import type { Comment } from './comment.entity.js';

/** A comment as the API returns it (docs/resources/comments.md). */
@ApiSchema({ name: 'Comment' })
export class CommentResponse {
  @ApiProperty({ readOnly: true, example: 1, type: 'integer' })
  id: number;

  @ApiProperty({ example: 'Thanks, this helped.' })
  body: string;

  /** Id of the article commented on. */
  @ExpandableReference('Article', { description: 'The article commented on.', example: 1 })
  article: number;

  /** Id of the commenting user. */
  @ExpandableReference('UserSummary', { description: 'The commenting user.', example: 2 })
  author: number;

  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:15:00.000Z' })
  created_at: string;

  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:15:00.000Z' })
  updated_at: string;

  /** `self`, `article` and `author`. */
  @ApiProperty({
    type: [LinkDto],
    readOnly: true,
    example: [
      { rel: 'self', href: '/v{version}/articles/1/comments/1' },
      { rel: 'article', href: '/v{version}/articles/1' },
      { rel: 'author', href: '/v{version}/users/2' },
    ],
  })
  links: Link[];
}

/** Maps a comments row (entity or raw select; `article_id` and `author_id` are always selected) to {@link CommentResponse}. */
export function toCommentResponse(source: Row<Comment, 'article_id' | 'author_id'>): CommentResponse {
  const row = source as Record<string, unknown>;
  const id = Number(row.id);
  const prefix = linkPrefix();
  const article = Number(row.article_id);
  const author = Number(row.author_id);
  return {
    id,
    body: row.body as string,
    article,
    author,
    created_at: toIso(row.created_at) as string,
    updated_at: toIso(row.updated_at) as string,
    links: [
      { rel: 'self', href: `${prefix}/articles/${article}/comments/${id}` },
      { rel: 'article', href: `${prefix}/articles/${article}` },
      { rel: 'author', href: `${prefix}/users/${author}` },
    ],
  };
}
