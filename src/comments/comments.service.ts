import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import type { Article } from '../articles/article.entity.js';
import { ArticlesService } from '../articles/articles.service.js';
import type { AuthUser } from '../auth/auth-user.js';
import { authorize } from '../common/access/access-policy.js';
import { conflict } from '../common/errors/api-exception.js';
import { findPage } from '../common/list/find-page.js';
import type { ListQuery } from '../common/list/list-query.js';
import type { Page } from '../common/list/page.js';
import { deleteVersioned, updateVersioned } from '../common/writes/conditional-write.js';
import { Comment } from './comment.entity.js';
import { toCommentResponse, type CommentResponse } from './comment.response.js';
import { COMMENTS_FIELDS } from './comments.resource.js';
import { COMMENTS_POLICY } from './comments.policy.js';
import type { CreateCommentDto, UpdateCommentDto } from './dto/create-comment.dto.js';

/**
 * Comments (SPEC §6 comments), always under their article: every operation first checks the
 * article through {@link ArticlesService.requireReadable} (404 missing, 403 unreadable). The only
 * holder of the comments repository.
 */
@Injectable()
export class CommentsService {
  constructor(
    @InjectRepository(Comment) private readonly comments: Repository<Comment>,
    private readonly articles: ArticlesService,
  ) {}

  /**
   * Comments on article `articleId` by the caller.
   * @throws 403/404 for the article; 409 `conflict` naming the status when it is not published.
   */
  async create(articleId: number, dto: CreateCommentDto, caller: AuthUser): Promise<CommentResponse> {
    const article = await this.articles.requireReadable(articleId, caller);
    if (article.status !== 'published') throw conflict(`article ${articleId} is ${article.status}; only published articles take comments`);
    const now = new Date();
    const result = await this.comments.insert({ body: dto.body, article_id: articleId, author_id: caller.id, created_at: now, updated_at: now });
    return this.findOne(articleId, Number(result.identifiers[0].id), caller);
  }

  /** One page of the article's comments. @throws 403/404 for the article */
  async list(articleId: number, query: ListQuery, caller: AuthUser): Promise<Page<CommentResponse>> {
    await this.articles.requireReadable(articleId, caller);
    // every comment of a readable article (COMMENTS_POLICY.visible is undefined): the scope is the nesting
    return findPage(this.comments.createQueryBuilder('c'), query, COMMENTS_FIELDS, toCommentResponse, [{ 'c.article_id': articleId }]);
  }

  /**
   * Reads one comment of the article.
   * @throws 403/404 for the article; 404 when the comment is missing or under another article.
   */
  async findOne(articleId: number, id: number, caller: AuthUser): Promise<CommentResponse> {
    const article = await this.articles.requireReadable(articleId, caller);
    return toCommentResponse(await this.load(article, id, caller, 'read'));
  }

  /**
   * PUT and PATCH: changes the body; only the comment's author may (admins included, SPEC §6 "Edit:
   * the comment's author"). An omitted body on PATCH changes nothing but `updated_at`.
   * @throws 403/404 for the article; 404 for the comment; 403 when the caller is not its author.
   */
  async update(articleId: number, id: number, dto: UpdateCommentDto, caller: AuthUser): Promise<CommentResponse> {
    const article = await this.articles.requireReadable(articleId, caller);
    const current = await this.load(article, id, caller, 'write');
    const patch: Partial<Comment> = { updated_at: new Date() };
    if (dto.body !== undefined) patch.body = dto.body;
    const version = await updateVersioned(this.comments.manager, Comment, { id, article_id: articleId }, current.version, patch, 'comment', id);
    return toCommentResponse({ ...current, ...patch, version });
  }

  /**
   * Deletes a comment: its author, the article's author or an admin may.
   * The access check on the loaded row, then one conditional DELETE: of concurrent deletes
   * exactly one succeeds.
   * @throws 403/404 for the article; 404 for the comment (also when deleted meanwhile); 403 for anyone else.
   */
  async remove(articleId: number, id: number, caller: AuthUser): Promise<void> {
    const article = await this.articles.requireReadable(articleId, caller);
    const current = await this.load(article, id, caller, 'delete');
    await deleteVersioned(this.comments.manager, Comment, { id, article_id: articleId }, current.version, 'comment', id);
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
