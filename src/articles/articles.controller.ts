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
import { ArticleResponse } from './article.response.js';
import { ARTICLES_LIST } from './articles.list.js';
import { ArticlesService } from './articles.service.js';
import { CreateArticleDto, ReplaceArticleDto, UpdateArticleDto } from './dto/create-article.dto.js';

const ARTICLE_ID = ApiParam({ name: 'id', description: 'The article’s id.', schema: { type: 'integer', minimum: 1 }, example: 1 });

/**
 * `/v1/articles` (SPEC §6 articles): published articles are visible to every caller, drafts and
 * archived ones to their author and admins; writes by the author or an admin.
 */
@ApiTags('articles')
@Authenticated('articles')
@Controller('v1/articles')
export class ArticlesController {
  constructor(private readonly articles: ArticlesService) {}

  /** Create an article authored by the caller (a draft unless `status` says otherwise). */
  @Post()
  @CreateOperation()
  @ApiOperation({ summary: 'Create an article' })
  @ApiCreatedResponse({ type: ArticleResponse, description: 'The new article; `Location` holds its path.' })
  @ApiErrors(400, 401, 413, 415, 422)
  create(@Body() body: CreateArticleDto, @CurrentUser() caller: AuthUser): Promise<ArticleResponse> {
    return this.articles.create(body, caller);
  }

  /** List the articles the caller may read. */
  @Get()
  @ListOperation(ARTICLES_LIST)
  @ApiOperation({ summary: 'List articles (published ones and the caller’s own; all for admins)' })
  @ApiPageResponse(ArticleResponse, 'ArticleList')
  @ApiErrors(400, 401)
  list(@ListParams() query: ListQuery, @CurrentUser() caller: AuthUser): Promise<Page<ArticleResponse>> {
    return this.articles.list(query, caller);
  }

  /** Read an article. */
  @Get(':id')
  @ARTICLE_ID
  @ReadOperation(ARTICLES_LIST.fields)
  @ApiOperation({ summary: 'Read an article' })
  @ApiOkResponse({ type: ArticleResponse })
  @ApiErrors(400, 401, 403, 404)
  findOne(@Param('id', ParseIdPipe) id: number, @CurrentUser() caller: AuthUser): Promise<ArticleResponse> {
    return this.articles.findOne(id, caller);
  }

  /** Replace an article: omitted `body` → `""`, `status` → `draft`, `tags` → `[]`. */
  @Put(':id')
  @ARTICLE_ID
  @ApiOperation({ summary: 'Replace an article (omitted body → "", status → draft, tags → [])' })
  @ApiOkResponse({ type: ArticleResponse })
  @ApiErrors(400, 401, 403, 404, 409, 413, 415, 422)
  replace(@Param('id', ParseIdPipe) id: number, @Body() body: ReplaceArticleDto, @CurrentUser() caller: AuthUser): Promise<ArticleResponse> {
    return this.articles.replace(id, body, caller);
  }

  /** Update some fields of an article, e.g. `{"status": "published"}`. */
  @Patch(':id')
  @ARTICLE_ID
  @ApiOperation({ summary: 'Update an article, e.g. {"status": "published"}' })
  @ApiOkResponse({ type: ArticleResponse })
  @ApiErrors(400, 401, 403, 404, 409, 413, 415, 422)
  update(@Param('id', ParseIdPipe) id: number, @Body() body: UpdateArticleDto, @CurrentUser() caller: AuthUser): Promise<ArticleResponse> {
    return this.articles.update(id, body, caller);
  }

  /** Delete an article with its comments. */
  @Delete(':id')
  @ARTICLE_ID
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete an article and its comments' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors(400, 401, 403, 404)
  async remove(@Param('id', ParseIdPipe) id: number, @CurrentUser() caller: AuthUser): Promise<void> {
    await this.articles.remove(id, caller);
  }
}
