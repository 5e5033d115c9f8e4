import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import type { Article } from '../articles/article.entity.js';
import { ArticlesService } from '../articles/articles.service.js';
import type { AuthUser } from '../auth/auth-user.js';
import { conflict, forbidden, notFound } from '../common/errors/api-exception.js';
import { findPage } from '../common/list/find-page.js';
import type { ListQuery } from '../common/list/list-query.js';
import type { Page } from '../common/list/page.js';
import { deleteExisting, updateExisting } from '../common/writes/conditional-write.js';
import { Comment } from './comment.entity.js';
import { toCommentResponse, type CommentResponse } from './comment.response.js';
import { COMMENTS_FIELDS } from './comments.resource.js';
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
    return findPage(this.comments.createQueryBuilder('c'), query, COMMENTS_FIELDS, toCommentResponse, [{ 'c.article_id': articleId }]);
  }

  /**
   * Reads one comment of the article.
   * @throws 403/404 for the article; 404 when the comment is missing or under another article.
   */
  async findOne(articleId: number, id: number, caller: AuthUser): Promise<CommentResponse> {
    await this.articles.requireReadable(articleId, caller);
    return toCommentResponse(await this.load(articleId, id));
  }

  /**
   * PUT and PATCH: changes the body; only the comment's author may (admins included, SPEC §6 "Edit:
   * the comment's author"). An omitted body on PATCH changes nothing but `updated_at`.
   * @throws 403/404 for the article; 404 for the comment; 403 when the caller is not its author.
   */
  async update(articleId: number, id: number, dto: UpdateCommentDto, caller: AuthUser): Promise<CommentResponse> {
    await this.articles.requireReadable(articleId, caller);
    const current = await this.load(articleId, id);
    if (current.author_id !== caller.id) throw forbidden('only the comment’s author may edit it');
    const patch: Partial<Comment> = { updated_at: new Date() };
    if (dto.body !== undefined) patch.body = dto.body;
    await updateExisting(this.comments.manager, Comment, { id, article_id: articleId }, patch, 'comment', id);
    return toCommentResponse({ ...current, ...patch });
  }

  /**
   * Deletes a comment: its author, the article's author or an admin may.
   * The access check on the loaded row, then one conditional DELETE: of concurrent deletes
   * exactly one succeeds.
   * @throws 403/404 for the article; 404 for the comment (also when deleted meanwhile); 403 for anyone else.
   */
  async remove(articleId: number, id: number, caller: AuthUser): Promise<void> {
    const article: Article = await this.articles.requireReadable(articleId, caller);
    const current = await this.load(articleId, id);
    const allowed = caller.role === 'admin' || caller.id === current.author_id || caller.id === article.author_id;
    if (!allowed) throw forbidden('only the comment’s author, the article’s author or an admin may delete it');
    await deleteExisting(this.comments.manager, Comment, { id, article_id: articleId }, 'comment', id);
  }

  private async load(articleId: number, id: number): Promise<Comment> {
    const row = await this.comments.findOne({ where: { id, article_id: articleId } });
    if (!row) throw notFound('comment', id);
    return row;
  }
}
