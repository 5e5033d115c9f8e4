import { ApiProperty, ApiPropertyOptional, ApiSchema, OmitType } from '@nestjs/swagger';
import { CommentPreviewV2 } from './comment-preview.response.js';
import { UserSummary } from '../users/user-summary.response.js';
import { ArticleResponse } from './article.response.js';

/**
 * An article as API v2 returns it: v1's {@link ArticleResponse} with `author` embedded as
 * `{id, username, name}` instead of an integer id (the breaking change of v2, docs/versioning.md#what-changed-in-v2). Named
 * `Article` in the v2 document (docs.ts renames `…V2` schemas per document).
 */
@ApiSchema({ name: 'ArticleV2' })
export class ArticleV2Response extends OmitType(ArticleResponse, ['author', 'comments'] as const) {
  /** The authoring user (v1: its id). */
  @ApiProperty({ type: () => UserSummary, readOnly: true })
  author: UserSummary;

  /** Only with `expand=comments`: the first comments (v2 shape), their count and their link. */
  @ApiPropertyOptional({
    type: () => CommentPreviewV2,
    readOnly: true,
    description: 'Only with `expand=comments`: the first comments (oldest first), how many there are, and the link to all of them.',
  })
  comments?: CommentPreviewV2;
}
