import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Roles, ScopedResource } from '../auth/decorators/auth.decorators.js';
import { CreateOperation, ListOperation, ListParams, ReadOperation } from '../common/decorators/operation.decorators.js';
import type { ListQuery } from '../common/list/list-query.js';
import type { Page } from '../common/list/page.js';
import { ApiErrors } from '../common/openapi/api-errors.decorator.js';
import { ApiPageResponse } from '../common/openapi/api-page-response.decorator.js';
import { ParseIdPipe } from '../common/pipes/parse-id.pipe.js';
import type { Tagged, WritePreconditions } from '../common/writes/preconditions.js';
import { WritePrecondition } from '../common/writes/write-precondition.decorator.js';
import { CreateTagDto, UpdateTagDto } from './dto/create-tag.dto.js';
import { TagResponse } from './tag.response.js';
import { TAGS_FIELDS } from './tags.resource.js';
import { TagsService } from './tags.service.js';

const TAG_ID = ApiParam({ name: 'id', description: 'The tag’s id.', schema: { type: 'integer', minimum: 1 }, example: 1 });

/** `/v1/tags` (docs/resources/tags.md): every caller reads and creates; only admins rename and delete. */
@ApiTags('tags')
@ScopedResource('tags')
@Controller('tags')
export class TagsController {
  constructor(private readonly tags: TagsService) {}

  /** Create a tag; the name is stored lower-case. */
  @Post()
  @CreateOperation()
  @ApiOperation({ summary: 'Create a tag' })
  @ApiCreatedResponse({ type: TagResponse, description: 'The new tag; `Location` holds its path.' })
  @ApiErrors(400, 401, 409, 413, 415, 422)
  create(@Body() body: CreateTagDto): Promise<Tagged<TagResponse>> {
    return this.tags.create(body);
  }

  /** List tags. */
  @Get()
  @ListOperation(TAGS_FIELDS)
  @ApiOperation({ summary: 'List tags' })
  @ApiPageResponse(TagResponse, 'TagList')
  @ApiErrors(400, 401)
  list(@ListParams() query: ListQuery): Promise<Page<TagResponse>> {
    return this.tags.list(query);
  }

  /** Read a tag. */
  @Get(':id')
  @TAG_ID
  @ReadOperation(TAGS_FIELDS)
  @ApiOperation({ summary: 'Read a tag' })
  @ApiOkResponse({ type: TagResponse })
  @ApiErrors(400, 401, 404)
  findOne(@Param('id', ParseIdPipe) id: number): Promise<Tagged<TagResponse>> {
    return this.tags.findOne(id);
  }

  /** Rename a tag (admin). */
  @Put(':id')
  @TAG_ID
  @Roles('admin')
  @ApiOperation({ summary: 'Rename a tag (admin)' })
  @ApiOkResponse({ type: TagResponse })
  @ApiErrors(400, 401, 403, 404, 409, 413, 415, 422)
  replace(
    @Param('id', ParseIdPipe) id: number,
    @Body() body: CreateTagDto,
    @WritePrecondition() preconditions: WritePreconditions,
  ): Promise<Tagged<TagResponse>> {
    return this.tags.rename(id, body, preconditions);
  }

  /** Rename a tag (admin); an empty body changes nothing. */
  @Patch(':id')
  @TAG_ID
  @Roles('admin')
  @ApiOperation({ summary: 'Rename a tag (admin)' })
  @ApiOkResponse({ type: TagResponse })
  @ApiErrors(400, 401, 403, 404, 409, 413, 415, 422)
  update(
    @Param('id', ParseIdPipe) id: number,
    @Body() body: UpdateTagDto,
    @WritePrecondition() preconditions: WritePreconditions,
  ): Promise<Tagged<TagResponse>> {
    return this.tags.rename(id, body, preconditions);
  }

  /** Delete a tag (admin); articles carrying it lose it. */
  @Delete(':id')
  @TAG_ID
  @Roles('admin')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a tag (admin)' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors(400, 401, 403, 404)
  async remove(@Param('id', ParseIdPipe) id: number, @WritePrecondition() preconditions: WritePreconditions): Promise<void> {
    await this.tags.remove(id, preconditions);
  }
}
