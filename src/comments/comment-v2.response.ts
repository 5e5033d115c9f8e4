import { ApiProperty, ApiSchema, OmitType } from '@nestjs/swagger';
import { ExpandableReference } from '../common/openapi/expandable.js';
import { UserSummary } from '../users/user-summary.response.js';
import { CommentResponse } from './comment.response.js';

/**
 * A comment as API v2 returns it: v1's {@link CommentResponse} with `author` embedded as
 * `{id, username, name}` instead of an integer id (docs/versioning.md#what-changed-in-v2). Named `Comment` in the v2 document.
 */
@ApiSchema({ name: 'CommentV2' })
export class CommentV2Response extends OmitType(CommentResponse, ['author', 'article'] as const) {
  /** The article commented on: its id, or the article (v2 shape) with `expand=article`. */
  @ExpandableReference('ArticleV2', { description: 'The article commented on.', example: 1 })
  article: number;

  /** The commenting user (v1: its id). */
  @ApiProperty({ type: () => UserSummary, readOnly: true })
  author: UserSummary;
}
