import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { Link } from '../common/list/page.js';
import { LinkDto } from '../common/openapi/link.dto.js';

/**
 * An article's `comments` with `expand=comments` (docs/lists.md#expanding-related-resources-expand):
 * its first comments, oldest first, how many it has, and the link to all of them. The items are
 * documented by schema name (`Comment`; `CommentV2` in {@link CommentPreviewV2}), as a comment
 * refers to its article in turn.
 */
@ApiSchema({ name: 'CommentPreview' })
export class CommentPreview {
  @ApiProperty({ type: 'array', items: { $ref: '#/components/schemas/Comment' }, readOnly: true, description: 'The first comments, oldest first.' })
  data: object[];

  @ApiProperty({ type: 'integer', readOnly: true, example: 12, description: 'How many comments the article has.' })
  total: number;

  @ApiProperty({
    type: [LinkDto],
    readOnly: true,
    example: [{ rel: 'self', href: '/v{version}/articles/1/comments' }],
    description: '`self`: all the comments.',
  })
  links: Link[];
}

/** {@link CommentPreview} in API v2: its comments in the v2 shape (named `CommentPreview` in the v2 document). */
@ApiSchema({ name: 'CommentPreviewV2' })
export class CommentPreviewV2 {
  @ApiProperty({ type: 'array', items: { $ref: '#/components/schemas/CommentV2' }, readOnly: true, description: 'The first comments, oldest first.' })
  data: object[];

  @ApiProperty({ type: 'integer', readOnly: true, example: 12, description: 'How many comments the article has.' })
  total: number;

  @ApiProperty({
    type: [LinkDto],
    readOnly: true,
    example: [{ rel: 'self', href: '/v{version}/articles/1/comments' }],
    description: '`self`: all the comments.',
  })
  links: Link[];
}
