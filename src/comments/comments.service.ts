import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, Repository } from 'typeorm';
import type { Article } from '../articles/article.entity.js';
import { ArticlesService } from '../articles/articles.service.js';
import type { AuthUser } from '../common/caller/auth-user.js';
import { authorize } from '../common/access/access-policy.js';
import { conflict } from '../common/errors/api-exception.js';
import { findPage } from '../common/list/find-page.js';
import type { ListQuery } from '../common/list/list-query.js';
import type { Page } from '../common/list/page.js';
import { deleteVersioned, updateVersioned } from '../common/writes/conditional-write.js';
import { type Tagged, tagged, type WritePreconditions } from '../common/writes/preconditions.js';
import { inBothVersions } from '../events/event-data.js';
import { EventOutbox } from '../events/event-outbox.js';
import type { EventType } from '../events/event-types.js';
import { type Authored, authored, summaryIn, type UserSummary } from '../users/user-summary.response.js';
import { Comment } from './comment.entity.js';
import { toCommentResponse, type CommentResponse } from './comment.response.js';
import { COMMENTS_FIELDS } from './comments.resource.js';
import { COMMENTS_POLICY } from './comments.policy.js';
import type { CreateCommentDto, UpdateCommentDto } from './dto/create-comment.dto.js';

/**
 * Comments (docs/resources/comments.md), always under their article: every operation first checks the
 * article through {@link ArticlesService.requireReadable} (404 missing, 403 unreadable). The only
 * holder of the comments repository. Each write appends its event in its transaction
 * (`comment.created`, `comment.updated`, `comment.deleted`; owned by the comment's author).
 */
@Injectable()
export class CommentsService {
  constructor(
    @InjectRepository(Comment) private readonly comments: Repository<Comment>,
    private readonly articles: ArticlesService,
    private readonly outbox: EventOutbox,
  ) {}

  /**
   * Comments on article `articleId` by the caller. The answer is the row written (every column is
   * set here; the id comes from the INSERT) with the author summary read in the transaction:
   * nothing is read after the commit.
   * @throws 403/404 for the article; 409 `conflict` naming the status when it is not published.
   */
  async create(articleId: number, dto: CreateCommentDto, caller: AuthUser): Promise<Authored<CommentResponse>> {
    const article = await this.articles.requireReadable(articleId, caller);
    if (article.status !== 'published') throw conflict(`article ${articleId} is ${article.status}; only published articles take comments`);
    const now = new Date();
    const { created, author } = await this.comments.manager.transaction(async (manager) => {
      const row = { body: dto.body, article_id: articleId, author_id: caller.id, created_at: now, updated_at: now };
      const result = await manager.insert(Comment, row);
      const written = { ...row, id: Number(result.identifiers[0].id), version: 1 } as Comment;
      return { created: written, author: await this.emit(manager, 'comment.created', written) };
    });
    return authored(tagged(toCommentResponse(created), created.version), author);
  }

  /** One page of the article's comments. @throws 403/404 for the article */
  async list(articleId: number, query: ListQuery, caller: AuthUser): Promise<Page<CommentResponse>> {
    await this.articles.requireReadable(articleId, caller);
    // every comment of a readable article (COMMENTS_POLICY.visible is undefined): the scope is the nesting
    return findPage(this.comments, query, COMMENTS_FIELDS, toCommentResponse, [{ 'c.article_id': articleId }]);
  }

  /**
   * Reads one comment of the article.
   * @throws 403/404 for the article; 404 when the comment is missing or under another article.
   */
  async findOne(articleId: number, id: number, caller: AuthUser): Promise<Tagged<CommentResponse>> {
    const article = await this.articles.requireReadable(articleId, caller);
    const comment = await this.load(article, id, caller, 'read');
    return tagged(toCommentResponse(comment), comment.version);
  }

  /**
   * PUT and PATCH: changes the body; only the comment's author may, not even an
   * admin (docs/resources/comments.md#permissions). An omitted body on PATCH changes nothing but `updated_at`.
   * @throws 403/404 for the article; 404 for the comment; 403 when the caller is not its author; 412/428 (`If-Match`).
   */
  async update(articleId: number, id: number, dto: UpdateCommentDto, caller: AuthUser, preconditions?: WritePreconditions): Promise<Authored<CommentResponse>> {
    const article = await this.articles.requireReadable(articleId, caller);
    const current = await this.load(article, id, caller, 'write');
    const patch: Partial<Comment> = { updated_at: new Date() };
    if (dto.body !== undefined) patch.body = dto.body;
    const next = { ...current, ...patch };
    const author = await this.comments.manager.transaction(async (manager) => {
      next.version = await updateVersioned(manager, Comment, { id, article_id: articleId }, current.version, preconditions, patch, 'comment', id);
      return this.emit(manager, 'comment.updated', next);
    });
    return authored(tagged(toCommentResponse(next), next.version), author);
  }

  /**
   * Deletes a comment: its author, the article's author or an admin may.
   * The access check on the loaded row, then one conditional DELETE: of concurrent deletes
   * exactly one succeeds.
   * @throws 403/404 for the article; 404 for the comment (also when deleted meanwhile); 403 for anyone else; 412/428 (`If-Match`).
   */
  async remove(articleId: number, id: number, caller: AuthUser, preconditions?: WritePreconditions): Promise<void> {
    const article = await this.articles.requireReadable(articleId, caller);
    const current = await this.load(article, id, caller, 'delete');
    await this.comments.manager.transaction(async (manager) => {
      await deleteVersioned(manager, Comment, { id, article_id: articleId }, current.version, preconditions, 'comment', id);
      await this.emit(manager, 'comment.deleted', current);
    });
  }

  /**
   * Appends `type` for `comment` (after the write; for a deletion as it was), owned by its author;
   * v2's `data` embeds the author. Returns the author's summary as `manager` read it (undefined
   * when the author is gone), for the write's answer.
   */
  private async emit(manager: EntityManager, type: EventType, comment: Comment): Promise<UserSummary | undefined> {
    const author = await summaryIn(manager, comment.author_id);
    const data = inBothVersions<object>((version) => {
      const response = toCommentResponse(comment);
      return version === '2' && author ? { ...response, author } : response;
    });
    await this.outbox.append(manager, { type, ownerId: comment.author_id, resourceId: comment.id, data });
    return author;
  }

  /**
   * Comment `id` of the (readable) article if the caller may `action` it ({@link COMMENTS_POLICY}).
   * @throws 404 when missing or under another article; 403 when the policy refuses.
   */
  private async load(article: Pick<Article, 'id' | 'author_id'>, id: number, caller: AuthUser, action: 'read' | 'write' | 'delete'): Promise<Comment> {
    const row = await this.comments.findOne({ where: { id, article_id: article.id } });
    authorize(COMMENTS_POLICY, action, caller, row && { author_id: row.author_id, article_author_id: article.author_id }, id);
    return row!; // authorize threw 404 when there is none
  }
}
