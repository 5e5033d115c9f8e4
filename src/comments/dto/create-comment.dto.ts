import { ApiHideProperty, ApiProperty, ApiSchema, PartialType } from '@nestjs/swagger';
import { IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { ReadOnlyProperty } from '../../common/decorators/validation.decorators.js';

/** Body of `POST /v1/articles/{id}/comments` and `PUT …/comments/{comment_id}` (docs/resources/comments.md). */
@ApiSchema({ name: 'CreateCommentBody' })
export class CreateCommentDto {
  /** The author is the caller; an `author` sent (as read from a GET) is ignored. */
  @ReadOnlyProperty()
  @ApiHideProperty()
  declare author?: never;

  /** The article comes from the path; an `article` sent (as read from a GET) is ignored. */
  @ReadOnlyProperty()
  @ApiHideProperty()
  declare article?: never;

  /** 1-5,000 characters. */
  @ApiProperty({ example: 'Thanks, this helped.', minLength: 1 })
  @IsNotEmpty()
  @IsString()
  @MaxLength(5_000)
  body: string;
}

/** Body of `PATCH …/comments/{comment_id}`: `body` may be omitted (no change) but not null. */
@ApiSchema({ name: 'UpdateCommentBody' })
export class UpdateCommentDto extends PartialType(CreateCommentDto, { skipNullProperties: false }) {}
