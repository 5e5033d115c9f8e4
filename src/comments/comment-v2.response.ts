import { ApiProperty, ApiSchema, OmitType } from '@nestjs/swagger';
import { UserSummary } from '../users/user-summary.response.js';
import { CommentResponse } from './comment.response.js';

/**
 * A comment as API v2 returns it: v1's {@link CommentResponse} with `author` embedded as
 * `{id, username, name}` instead of an integer id (docs/versioning.md#what-changed-in-v2). Named `Comment` in the v2 document.
 */
@ApiSchema({ name: 'CommentV2' })
export class CommentV2Response extends OmitType(CommentResponse, ['author'] as const) {
  /** The commenting user (v1: its id). */
  @ApiProperty({ type: () => UserSummary, readOnly: true })
  author: UserSummary;
}
