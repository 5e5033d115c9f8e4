import { ApiHideProperty, ApiProperty, ApiSchema, PartialType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsNotEmpty, IsString, Matches, MaxLength } from 'class-validator';
import { IsOmittable, ReadOnlyProperty } from '../../common/decorators/validation.decorators.js';
import { TAG_NAME } from '../../tags/dto/create-tag.dto.js';
import { ARTICLE_STATUSES, type ArticleStatus } from '../article.entity.js';

/** Most tags one article carries. */
export const MAX_ARTICLE_TAGS = 20;

/** Lower-cases each string of an array (tag names are compared lower-case); anything else passes untouched. */
const lowerCaseEach = ({ value }: { value: unknown }) =>
  Array.isArray(value) ? value.map((item: unknown) => (typeof item === 'string' ? item.toLowerCase() : item)) : value;

/** Body of `POST /v1/articles` (docs/resources/articles.md). */
@ApiSchema({ name: 'CreateArticleBody' })
export class CreateArticleDto {
  /** The author is the caller; an `author` sent (as read from a GET) is ignored. */
  @ReadOnlyProperty()
  @ApiHideProperty()
  declare author?: never;

  /** Set by publishing; a `published_at` sent (as read from a GET) is ignored. */
  @ReadOnlyProperty()
  @ApiHideProperty()
  declare published_at?: never;

  /** 1-200 characters. */
  @ApiProperty({ example: 'Hello, NestJS 12', minLength: 1 })
  @IsNotEmpty()
  @IsString()
  @MaxLength(200)
  title: string;

  /** Up to 100,000 characters; `""` when absent. Not nullable. */
  @ApiProperty({ required: false, default: '', example: 'NestJS 12 is published as ES modules only.' })
  @IsOmittable()
  @IsString()
  @MaxLength(100_000)
  body?: string;

  /** `draft` (default), `published` or `archived`; publishing sets `published_at` the first time. */
  @ApiProperty({ required: false, enum: ARTICLE_STATUSES, default: 'draft', example: 'draft' })
  @IsOmittable()
  @IsString()
  @IsIn(ARTICLE_STATUSES)
  status?: ArticleStatus;

  /** Names of existing tags (compared lower-case; duplicates collapse), at most 20; `[]` when absent. An unknown name → 422. */
  @ApiProperty({
    required: false,
    type: 'array',
    items: { type: 'string', minLength: 1, maxLength: 50 },
    maxItems: MAX_ARTICLE_TAGS,
    default: [],
    example: ['nestjs', 'esm'],
  })
  @Transform(lowerCaseEach)
  @IsOmittable()
  @IsArray()
  @IsString({ each: true })
  @ArrayMaxSize(MAX_ARTICLE_TAGS)
  @Matches(TAG_NAME, { each: true, message: 'each tag must be 1-50 characters of a-z, 0-9 and -' })
  tags?: string[];
}

/** Body of `PUT /v1/articles/{id}`: the whole article; omitted `body` → `""`, `status` → `draft`, `tags` → `[]`. */
@ApiSchema({ name: 'ReplaceArticleBody' })
export class ReplaceArticleDto extends CreateArticleDto {}

/** Body of `PATCH /v1/articles/{id}`: any subset; none of the fields is nullable (`null` → 400). */
@ApiSchema({ name: 'UpdateArticleBody' })
export class UpdateArticleDto extends PartialType(CreateArticleDto, { skipNullProperties: false }) {}
