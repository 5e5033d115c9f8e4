import { Body, Controller, Param } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../common/caller/auth-user.js';
import { CurrentUser, ScopedResource } from '../auth/decorators/auth.decorators.js';
import { ListParams } from '../common/decorators/operation.decorators.js';
import { notFound } from '../common/errors/api-exception.js';
import type { ListQuery } from '../common/list/list-query.js';
import { Page } from '../common/list/page.js';
import { ParseIdPipe } from '../common/pipes/parse-id.pipe.js';
import type { Tagged, WritePreconditions } from '../common/writes/preconditions.js';
import { WritePrecondition } from '../common/writes/write-precondition.decorator.js';
import { Authored, embedAuthors } from '../users/user-summary.response.js';
import { UsersService } from '../users/users.service.js';
import { CommentV2Response } from './comment-v2.response.js';
import type { CommentResponse } from './comment.response.js';
import { ARTICLE_ID, CommentOperations } from './comments.controller.js';
import { CommentsService } from './comments.service.js';
import { CreateCommentDto, UpdateCommentDto } from './dto/create-comment.dto.js';

/**
 * `/v2/articles/{id}/comments`: the operations, rules and errors of `/v1/articles/{id}/comments`
 * on the same {@link CommentsService}, with v2's breaking change: `author` is the embedded
 * `{id, username, name}` of the commenting user (docs/versioning.md#what-changed-in-v2). The `author` filter still takes an id.
 */
@ApiTags('comments')
@ScopedResource('comments')
@ARTICLE_ID
@Controller({ path: 'articles/:id/comments', version: '2' })
export class CommentsV2Controller {
  constructor(
    private readonly comments: CommentsService,
    private readonly users: UsersService,
  ) {}

  /** Comment on a published article the caller can read. */
  @CommentOperations.create(CommentV2Response)
  async create(
    @Param('id', ParseIdPipe) articleId: number,
    @Body() body: CreateCommentDto,
    @CurrentUser() caller: AuthUser,
  ): Promise<Tagged<CommentV2Response>> {
    return this.toV2(await this.comments.create(articleId, body, caller));
  }

  /** List an article's comments. */
  @CommentOperations.list(CommentV2Response, 'CommentV2List')
  async list(@Param('id', ParseIdPipe) articleId: number, @ListParams() query: ListQuery, @CurrentUser() caller: AuthUser): Promise<Page<CommentV2Response>> {
    const page = await this.comments.list(articleId, query, caller);
    const items = embedAuthors(page.items, await this.users.summaries(page.items.map((comment) => comment.author)));
    return new Page(items, page.total, page.query, page.info);
  }

  /** Read a comment. */
  @CommentOperations.findOne(CommentV2Response)
  async findOne(
    @Param('id', ParseIdPipe) articleId: number,
    @Param('comment_id', ParseIdPipe) id: number,
    @CurrentUser() caller: AuthUser,
  ): Promise<Tagged<CommentV2Response>> {
    return this.toV2(await this.comments.findOne(articleId, id, caller));
  }

  /** Replace a comment's body (its author only). */
  @CommentOperations.replace(CommentV2Response)
  async replace(
    @Param('id', ParseIdPipe) articleId: number,
    @Param('comment_id', ParseIdPipe) id: number,
    @Body() body: CreateCommentDto,
    @CurrentUser() caller: AuthUser,
    @WritePrecondition() preconditions: WritePreconditions,
  ): Promise<Tagged<CommentV2Response>> {
    return this.toV2(await this.comments.update(articleId, id, body, caller, preconditions));
  }

  /** Update a comment's body (its author only). */
  @CommentOperations.update(CommentV2Response)
  async update(
    @Param('id', ParseIdPipe) articleId: number,
    @Param('comment_id', ParseIdPipe) id: number,
    @Body() body: UpdateCommentDto,
    @CurrentUser() caller: AuthUser,
    @WritePrecondition() preconditions: WritePreconditions,
  ): Promise<Tagged<CommentV2Response>> {
    return this.toV2(await this.comments.update(articleId, id, body, caller, preconditions));
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

  /**
   * The v2 shape of one comment, with the same entity tag: after a write, with the author summary its
   * transaction read ({@link Authored}: no query after the commit); after a read, with the author looked up.
   * @throws 404 when its author (and so the comment) was deleted meanwhile
   */
  private async toV2(comment: Tagged<CommentResponse>): Promise<Tagged<CommentV2Response>> {
    const author = comment instanceof Authored ? comment.author : undefined;
    if (author) return comment.map((body) => ({ ...body, author }));
    const [embedded] = embedAuthors([comment.body], await this.users.summaries([comment.body.author]));
    if (!embedded) throw notFound('comment', comment.body.id);
    return comment.map(() => embedded);
  }
}
