import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../auth/auth-user.js';
import { Authenticated, CurrentUser } from '../auth/decorators/auth.decorators.js';
import { CreateOperation, ListOperation, ListParams, ReadOperation } from '../common/decorators/operation.decorators.js';
import type { ListQuery } from '../common/list/list-query.js';
import type { Page } from '../common/list/page.js';
import { ApiErrors } from '../common/openapi/api-errors.decorator.js';
import { ApiPageResponse } from '../common/openapi/api-page-response.decorator.js';
import { ParseIdPipe } from '../common/pipes/parse-id.pipe.js';
import { CommentResponse } from './comment.response.js';
import { COMMENTS_LIST } from './comments.list.js';
import { CommentsService } from './comments.service.js';
import { CreateCommentDto, UpdateCommentDto } from './dto/create-comment.dto.js';

const ARTICLE_ID = ApiParam({ name: 'id', description: 'The article’s id.', schema: { type: 'integer', minimum: 1 }, example: 1 });
const COMMENT_ID = ApiParam({ name: 'comment_id', description: 'The comment’s id.', schema: { type: 'integer', minimum: 1 }, example: 1 });

/**
 * `/v1/articles/{id}/comments` (SPEC §6 comments): readable whenever the article is; created on
 * published articles; edited by their author; deleted by their author, the article's author or
 * an admin.
 */
@ApiTags('comments')
@Authenticated('comments')
@ARTICLE_ID
@Controller('v1/articles/:id/comments')
export class CommentsController {
  constructor(private readonly comments: CommentsService) {}

  /** Comment on a published article the caller can read. */
  @Post()
  @CreateOperation()
  @ApiOperation({ summary: 'Comment on an article (published articles only)' })
  @ApiCreatedResponse({ type: CommentResponse, description: 'The new comment; `Location` holds its path.' })
  @ApiErrors(400, 401, 403, 404, 409, 413, 415, 422)
  create(@Param('id', ParseIdPipe) articleId: number, @Body() body: CreateCommentDto, @CurrentUser() caller: AuthUser): Promise<CommentResponse> {
    return this.comments.create(articleId, body, caller);
  }

  /** List an article's comments. */
  @Get()
  @ListOperation(COMMENTS_LIST)
  @ApiOperation({ summary: 'List an article’s comments' })
  @ApiPageResponse(CommentResponse, 'CommentList')
  @ApiErrors(400, 401, 403, 404)
  list(@Param('id', ParseIdPipe) articleId: number, @ListParams() query: ListQuery, @CurrentUser() caller: AuthUser): Promise<Page<CommentResponse>> {
    return this.comments.list(articleId, query, caller);
  }

  /** Read a comment. */
  @Get(':comment_id')
  @COMMENT_ID
  @ReadOperation(COMMENTS_LIST.fields)
  @ApiOperation({ summary: 'Read a comment' })
  @ApiOkResponse({ type: CommentResponse })
  @ApiErrors(400, 401, 403, 404)
  findOne(
    @Param('id', ParseIdPipe) articleId: number,
    @Param('comment_id', ParseIdPipe) id: number,
    @CurrentUser() caller: AuthUser,
  ): Promise<CommentResponse> {
    return this.comments.findOne(articleId, id, caller);
  }

  /** Replace a comment's body (its author only). */
  @Put(':comment_id')
  @COMMENT_ID
  @ApiOperation({ summary: 'Replace a comment (its author)' })
  @ApiOkResponse({ type: CommentResponse })
  @ApiErrors(400, 401, 403, 404, 413, 415, 422)
  replace(
    @Param('id', ParseIdPipe) articleId: number,
    @Param('comment_id', ParseIdPipe) id: number,
    @Body() body: CreateCommentDto,
    @CurrentUser() caller: AuthUser,
  ): Promise<CommentResponse> {
    return this.comments.update(articleId, id, body, caller);
  }

  /** Update a comment's body (its author only). */
  @Patch(':comment_id')
  @COMMENT_ID
  @ApiOperation({ summary: 'Update a comment (its author)' })
  @ApiOkResponse({ type: CommentResponse })
  @ApiErrors(400, 401, 403, 404, 413, 415, 422)
  update(
    @Param('id', ParseIdPipe) articleId: number,
    @Param('comment_id', ParseIdPipe) id: number,
    @Body() body: UpdateCommentDto,
    @CurrentUser() caller: AuthUser,
  ): Promise<CommentResponse> {
    return this.comments.update(articleId, id, body, caller);
  }

  /** Delete a comment (its author, the article's author or an admin). */
  @Delete(':comment_id')
  @COMMENT_ID
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a comment (its author, the article’s author or an admin)' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors(400, 401, 403, 404)
  async remove(@Param('id', ParseIdPipe) articleId: number, @Param('comment_id', ParseIdPipe) id: number, @CurrentUser() caller: AuthUser): Promise<void> {
    await this.comments.remove(articleId, id, caller);
  }
}
