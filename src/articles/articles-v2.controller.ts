import { Body, Controller, Param } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../common/caller/auth-user.js';
import { CurrentUser, ScopedResource } from '../auth/decorators/auth.decorators.js';
import { notFound } from '../common/errors/api-exception.js';
import { ListParams } from '../common/decorators/operation.decorators.js';
import type { ListQuery } from '../common/list/list-query.js';
import { Page } from '../common/list/page.js';
import { ParseIdPipe } from '../common/pipes/parse-id.pipe.js';
import type { Tagged, WritePreconditions } from '../common/writes/preconditions.js';
import { WritePrecondition } from '../common/writes/write-precondition.decorator.js';
import { Authored, embedAuthors } from '../users/user-summary.response.js';
import { UsersService } from '../users/users.service.js';
import { ArticleV2Response } from './article-v2.response.js';
import type { ArticleResponse } from './article.response.js';
import { ArticleOperations } from './articles.controller.js';
import { ArticlesService } from './articles.service.js';
import { CreateArticleDto, ReplaceArticleDto, UpdateArticleDto } from './dto/create-article.dto.js';

/**
 * `/v2/articles`: the same operations, rules and errors as `/v1/articles` on the same
 * {@link ArticlesService} — one source of behaviour — with v2's one breaking change: `author` is
 * the embedded `{id, username, name}` of the author (docs/versioning.md#what-changed-in-v2). The `author` filter still takes an id.
 */
@ApiTags('articles')
@ScopedResource('articles')
@Controller({ path: 'articles', version: '2' })
export class ArticlesV2Controller {
  constructor(
    private readonly articles: ArticlesService,
    private readonly users: UsersService,
  ) {}

  /** Create an article authored by the caller (a draft unless `status` says otherwise). */
  @ArticleOperations.create(ArticleV2Response)
  async create(@Body() body: CreateArticleDto, @CurrentUser() caller: AuthUser): Promise<Tagged<ArticleV2Response>> {
    return this.toV2(await this.articles.create(body, caller));
  }

  /** List the articles the caller may read. */
  @ArticleOperations.list(ArticleV2Response, 'ArticleV2List')
  async list(@ListParams() query: ListQuery, @CurrentUser() caller: AuthUser): Promise<Page<ArticleV2Response>> {
    const page = await this.articles.list(query, caller);
    const items = embedAuthors(page.items, await this.users.summaries(page.items.map((article) => article.author)));
    return new Page(items, page.total, page.query, page.info);
  }

  /** Read an article. */
  @ArticleOperations.findOne(ArticleV2Response)
  async findOne(@Param('id', ParseIdPipe) id: number, @CurrentUser() caller: AuthUser): Promise<Tagged<ArticleV2Response>> {
    return this.toV2(await this.articles.findOne(id, caller));
  }

  /** Replace an article: omitted `body` → `""`, `status` → `draft`, `tags` → `[]`. */
  @ArticleOperations.replace(ArticleV2Response)
  async replace(
    @Param('id', ParseIdPipe) id: number,
    @Body() body: ReplaceArticleDto,
    @CurrentUser() caller: AuthUser,
    @WritePrecondition() preconditions: WritePreconditions,
  ): Promise<Tagged<ArticleV2Response>> {
    return this.toV2(await this.articles.replace(id, body, caller, preconditions));
  }

  /** Update some fields of an article, e.g. `{"status": "published"}`. */
  @ArticleOperations.update(ArticleV2Response)
  async update(
    @Param('id', ParseIdPipe) id: number,
    @Body() body: UpdateArticleDto,
    @CurrentUser() caller: AuthUser,
    @WritePrecondition() preconditions: WritePreconditions,
  ): Promise<Tagged<ArticleV2Response>> {
    return this.toV2(await this.articles.update(id, body, caller, preconditions));
  }

  /** Delete an article with its comments. */
  @ArticleOperations.remove()
  async remove(@Param('id', ParseIdPipe) id: number, @CurrentUser() caller: AuthUser, @WritePrecondition() preconditions: WritePreconditions): Promise<void> {
    await this.articles.remove(id, caller, preconditions);
  }

  /**
   * The v2 shape of one article, with the same entity tag: after a write, with the author summary its
   * transaction read ({@link Authored}: no query after the commit); after a read, with the author looked up.
   * @throws 404 when its author (and so the article) was deleted meanwhile
   */
  private async toV2(article: Tagged<ArticleResponse>): Promise<Tagged<ArticleV2Response>> {
    const author = article instanceof Authored ? article.author : undefined;
    if (author) return article.map((body) => ({ ...body, author }));
    const [embedded] = embedAuthors([article.body], await this.users.summaries([article.body.author]));
    if (!embedded) throw notFound('article', article.body.id);
    return article.map(() => embedded);
  }
}
