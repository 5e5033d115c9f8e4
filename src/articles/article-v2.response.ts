import { ApiProperty, ApiSchema, OmitType } from '@nestjs/swagger';
import { UserSummary } from '../users/user-summary.response.js';
import { ArticleResponse } from './article.response.js';

/**
 * An article as API v2 returns it: v1's {@link ArticleResponse} with `author` embedded as
 * `{id, username, name}` instead of an integer id (the breaking change of v2, docs/versioning.md#what-changed-in-v2). Named
 * `Article` in the v2 document (docs.ts renames `…V2` schemas per document).
 */
@ApiSchema({ name: 'ArticleV2' })
export class ArticleV2Response extends OmitType(ArticleResponse, ['author'] as const) {
  /** The authoring user (v1: its id). */
  @ApiProperty({ type: () => UserSummary, readOnly: true })
  author: UserSummary;
}
