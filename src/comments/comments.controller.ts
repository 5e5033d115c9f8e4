import { applyDecorators, Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, type Type } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../common/caller/auth-user.js';
import { CurrentUser, ScopedResource } from '../auth/decorators/auth.decorators.js';
import { CreateOperation, ListOperation, ListParams, ReadOperation } from '../common/decorators/operation.decorators.js';
import type { ListQuery } from '../common/list/list-query.js';
import type { Page } from '../common/list/page.js';
import { ApiErrors } from '../common/openapi/api-errors.decorator.js';
import { ApiPageResponse } from '../common/openapi/api-page-response.decorator.js';
import { ParseIdPipe } from '../common/pipes/parse-id.pipe.js';
import type { Tagged, WritePreconditions } from '../common/writes/preconditions.js';
import { WritePrecondition } from '../common/writes/write-precondition.decorator.js';
import { DeprecatedVersion } from '../common/versioning/deprecation.js';
import { CommentResponse } from './comment.response.js';
import { COMMENTS_FIELDS } from './comments.resource.js';
import { CommentsService } from './comments.service.js';
import { CreateCommentDto, UpdateCommentDto } from './dto/create-comment.dto.js';

/** The article id of the path, documented on every comments controller. */
export const ARTICLE_ID = ApiParam({ name: 'id', description: 'The article’s id.', schema: { type: 'integer', minimum: 1 }, example: 1 });
const COMMENT_ID = ApiParam({ name: 'comment_id', description: 'The comment’s id.', schema: { type: 'integer', minimum: 1 }, example: 1 });

/**
 * The route and documentation of each comments operation, shared by every API version: the
 * versions differ only in the comment schema (`item`, and the list envelope `list`) they return.
 */
export const CommentOperations = {
  create: (item: Type) =>
    applyDecorators(
      Post(),
      CreateOperation(),
      ApiOperation({ summary: 'Comment on an article (published articles only)' }),
      ApiCreatedResponse({ type: item, description: 'The new comment; `Location` holds its path.' }),
      ApiErrors(400, 401, 403, 404, 409, 413, 415, 422),
    ),
  list: (item: Type, list: string) =>
    applyDecorators(
      Get(),
      ListOperation(COMMENTS_FIELDS),
      ApiOperation({ summary: 'List an article’s comments' }),
      ApiPageResponse(item, list),
      ApiErrors(400, 401, 403, 404),
    ),
  findOne: (item: Type) =>
    applyDecorators(
      Get(':comment_id'),
      COMMENT_ID,
      ReadOperation(COMMENTS_FIELDS),
      ApiOperation({ summary: 'Read a comment' }),
      ApiOkResponse({ type: item }),
      ApiErrors(400, 401, 403, 404),
    ),
  replace: (item: Type) =>
    applyDecorators(
      Put(':comment_id'),
      COMMENT_ID,
      ApiOperation({ summary: 'Replace a comment (its author)' }),
      ApiOkResponse({ type: item }),
      ApiErrors(400, 401, 403, 404, 413, 415, 422),
    ),
  update: (item: Type) =>
    applyDecorators(
      Patch(':comment_id'),
      COMMENT_ID,
      ApiOperation({ summary: 'Update a comment (its author)' }),
      ApiOkResponse({ type: item }),
      ApiErrors(400, 401, 403, 404, 413, 415, 422),
    ),
  remove: () =>
    applyDecorators(
      Delete(':comment_id'),
      COMMENT_ID,
      HttpCode(204),
      ApiOperation({ summary: 'Delete a comment (its author, the article’s author or an admin)' }),
      ApiNoContentResponse({ description: 'Deleted.' }),
      ApiErrors(400, 401, 403, 404),
    ),
};

/**
 * `/v1/articles/{id}/comments` (docs/resources/comments.md): readable whenever the article is; created on
 * published articles; edited by their author; deleted by their author, the article's author or
 * an admin. `author` is the author's id. Deprecated in favour of `/v2/articles/{id}/comments`
 * (`Deprecation`/`Sunset` headers, docs/versioning.md#deprecation-and-sunset).
 */
@ApiTags('comments')
@ScopedResource('comments')
@ARTICLE_ID
@DeprecatedVersion()
@Controller({ path: 'articles/:id/comments', version: '1' })
export class CommentsController {
  constructor(private readonly comments: CommentsService) {}

  /** Comment on a published article the caller can read. */
  @CommentOperations.create(CommentResponse)
  create(@Param('id', ParseIdPipe) articleId: number, @Body() body: CreateCommentDto, @CurrentUser() caller: AuthUser): Promise<Tagged<CommentResponse>> {
    return this.comments.create(articleId, body, caller);
  }

  /** List an article's comments. */
  @CommentOperations.list(CommentResponse, 'CommentList')
  list(@Param('id', ParseIdPipe) articleId: number, @ListParams() query: ListQuery, @CurrentUser() caller: AuthUser): Promise<Page<CommentResponse>> {
    return this.comments.list(articleId, query, caller);
  }

  /** Read a comment. */
  @CommentOperations.findOne(CommentResponse)
  findOne(
    @Param('id', ParseIdPipe) articleId: number,
    @Param('comment_id', ParseIdPipe) id: number,
    @CurrentUser() caller: AuthUser,
  ): Promise<Tagged<CommentResponse>> {
    return this.comments.findOne(articleId, id, caller);
  }

  /** Replace a comment's body (its author only). */
  @CommentOperations.replace(CommentResponse)
  replace(
    @Param('id', ParseIdPipe) articleId: number,
    @Param('comment_id', ParseIdPipe) id: number,
    @Body() body: CreateCommentDto,
    @CurrentUser() caller: AuthUser,
    @WritePrecondition() preconditions: WritePreconditions,
  ): Promise<Tagged<CommentResponse>> {
    return this.comments.update(articleId, id, body, caller, preconditions);
  }

  /** Update a comment's body (its author only). */
  @CommentOperations.update(CommentResponse)
  update(
    @Param('id', ParseIdPipe) articleId: number,
    @Param('comment_id', ParseIdPipe) id: number,
    @Body() body: UpdateCommentDto,
    @CurrentUser() caller: AuthUser,
    @WritePrecondition() preconditions: WritePreconditions,
  ): Promise<Tagged<CommentResponse>> {
    return this.comments.update(articleId, id, body, caller, preconditions);
  }

  /** Delete a comment (its author, the article's author or an admin). */
  @CommentOperations.remove()
  async remove(
    @Param('id', ParseIdPipe) articleId: number,
    @Param('comment_id', ParseIdPipe) id: number,
    @CurrentUser() caller: AuthUser,
    @WritePrecondition() preconditions: WritePreconditions,
  ): Promise<void> {
    await this.comments.remove(articleId, id, caller, preconditions);
  }
}
