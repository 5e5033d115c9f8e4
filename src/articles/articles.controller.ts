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
import { ArticleResponse } from './article.response.js';
import { ARTICLES_FIELDS } from './articles.resource.js';
import { ArticlesService } from './articles.service.js';
import { CreateArticleDto, ReplaceArticleDto, UpdateArticleDto } from './dto/create-article.dto.js';

const ARTICLE_ID = ApiParam({ name: 'id', description: 'The article’s id.', schema: { type: 'integer', minimum: 1 }, example: 1 });

/**
 * The route and documentation of each articles operation, shared by every API version: the
 * versions differ only in the article schema (`item`, and the list envelope `list`) they return.
 */
export const ArticleOperations = {
  create: (item: Type) =>
    applyDecorators(
      Post(),
      CreateOperation(),
      ApiOperation({ summary: 'Create an article' }),
      ApiCreatedResponse({ type: item, description: 'The new article; `Location` holds its path.' }),
      ApiErrors(400, 401, 413, 415, 422),
    ),
  list: (item: Type, list: string) =>
    applyDecorators(
      Get(),
      ListOperation(ARTICLES_FIELDS),
      ApiOperation({ summary: 'List articles (published ones and the caller’s own; all for admins)' }),
      ApiPageResponse(item, list),
      ApiErrors(400, 401),
    ),
  findOne: (item: Type) =>
    applyDecorators(
      Get(':id'),
      ARTICLE_ID,
      ReadOperation(ARTICLES_FIELDS),
      ApiOperation({ summary: 'Read an article' }),
      ApiOkResponse({ type: item }),
      ApiErrors(400, 401, 403, 404),
    ),
  replace: (item: Type) =>
    applyDecorators(
      Put(':id'),
      ARTICLE_ID,
      ApiOperation({ summary: 'Replace an article (omitted body → "", status → draft, tags → [])' }),
      ApiOkResponse({ type: item }),
      ApiErrors(400, 401, 403, 404, 409, 413, 415, 422),
    ),
  update: (item: Type) =>
    applyDecorators(
      Patch(':id'),
      ARTICLE_ID,
      ApiOperation({ summary: 'Update an article, e.g. {"status": "published"}' }),
      ApiOkResponse({ type: item }),
      ApiErrors(400, 401, 403, 404, 409, 413, 415, 422),
    ),
  remove: () =>
    applyDecorators(
      Delete(':id'),
      ARTICLE_ID,
      HttpCode(204),
      ApiOperation({ summary: 'Delete an article and its comments' }),
      ApiNoContentResponse({ description: 'Deleted.' }),
      ApiErrors(400, 401, 403, 404),
    ),
};

/**
 * `/v1/articles` (docs/resources/articles.md): published articles are visible to every caller, drafts and
 * archived ones to their author and admins; writes by the author or an admin. `author` is the
 * author's id. Deprecated in favour of `/v2/articles` (`Deprecation`/`Sunset` headers, docs/versioning.md#deprecation-and-sunset).
 */
@ApiTags('articles')
@ScopedResource('articles')
@DeprecatedVersion()
@Controller({ path: 'articles', version: '1' })
export class ArticlesController {
  constructor(private readonly articles: ArticlesService) {}

  /** Create an article authored by the caller (a draft unless `status` says otherwise). */
  @ArticleOperations.create(ArticleResponse)
  create(@Body() body: CreateArticleDto, @CurrentUser() caller: AuthUser): Promise<Tagged<ArticleResponse>> {
    return this.articles.create(body, caller);
  }

  /** List the articles the caller may read. */
  @ArticleOperations.list(ArticleResponse, 'ArticleList')
  list(@ListParams() query: ListQuery, @CurrentUser() caller: AuthUser): Promise<Page<ArticleResponse>> {
    return this.articles.list(query, caller);
  }

  /** Read an article. */
  @ArticleOperations.findOne(ArticleResponse)
  findOne(@Param('id', ParseIdPipe) id: number, @CurrentUser() caller: AuthUser): Promise<Tagged<ArticleResponse>> {
    return this.articles.findOne(id, caller);
  }

  /** Replace an article: omitted `body` → `""`, `status` → `draft`, `tags` → `[]`. */
  @ArticleOperations.replace(ArticleResponse)
  replace(
    @Param('id', ParseIdPipe) id: number,
    @Body() body: ReplaceArticleDto,
    @CurrentUser() caller: AuthUser,
    @WritePrecondition() preconditions: WritePreconditions,
  ): Promise<Tagged<ArticleResponse>> {
    return this.articles.replace(id, body, caller, preconditions);
  }

  /** Update some fields of an article, e.g. `{"status": "published"}`. */
  @ArticleOperations.update(ArticleResponse)
  update(
    @Param('id', ParseIdPipe) id: number,
    @Body() body: UpdateArticleDto,
    @CurrentUser() caller: AuthUser,
    @WritePrecondition() preconditions: WritePreconditions,
  ): Promise<Tagged<ArticleResponse>> {
    return this.articles.update(id, body, caller, preconditions);
  }

  /** Delete an article with its comments. */
  @ArticleOperations.remove()
  async remove(@Param('id', ParseIdPipe) id: number, @CurrentUser() caller: AuthUser, @WritePrecondition() preconditions: WritePreconditions): Promise<void> {
    await this.articles.remove(id, caller, preconditions);
  }
}
