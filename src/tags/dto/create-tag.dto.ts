import { ApiProperty, ApiSchema, PartialType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsNotEmpty, IsString, Matches } from 'class-validator';

/** Tag names (docs/resources/tags.md#fields): 1-50 of `[a-z0-9-]`, compared and stored lower-case. */
export const TAG_NAME = /^[a-z0-9-]{1,50}$/;

/** Lower-cases a string before validation, so `Nest` is checked and stored as `nest`; other values pass untouched. */
export const toLowerCase = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.toLowerCase() : value);

/** Body of `POST /v1/tags` and `PUT /v1/tags/{id}` (docs/resources/tags.md). */
@ApiSchema({ name: 'CreateTagBody' })
export class CreateTagDto {
  /** 1-50 characters of a-z, 0-9 and `-`; lower-cased on the way in; unique (409 when taken). */
  @ApiProperty({ example: 'nestjs', pattern: TAG_NAME, minLength: 1, maxLength: 50 })
  @Transform(toLowerCase)
  @IsNotEmpty()
  @IsString()
  @Matches(TAG_NAME, { message: 'name must be 1-50 characters of a-z, 0-9 and -' })
  name: string;
}

/** Body of `PATCH /v1/tags/{id}`: rename; `name` may be omitted (no change) but not null. */
@ApiSchema({ name: 'UpdateTagBody' })
export class UpdateTagDto extends PartialType(CreateTagDto, { skipNullProperties: false }) {}
