import { Body, Controller, Get, Param, Patch, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../../../src/common/caller/auth-user.js';
import { CurrentUser, ScopedResource } from '../../../src/auth/decorators/auth.decorators.js';
import { CreateOperation, ListOperation, ListParams, ReadOperation } from '../../../src/common/decorators/operation.decorators.js';
import type { ListQuery } from '../../../src/common/list/list-query.js';
import type { Page } from '../../../src/common/list/page.js';
import { ApiErrors } from '../../../src/common/openapi/api-errors.decorator.js';
import { ApiPageResponse } from '../../../src/common/openapi/api-page-response.decorator.js';
import { ParseIdPipe } from '../../../src/common/pipes/parse-id.pipe.js';
import type { Tagged, WritePreconditions } from '../../../src/common/writes/preconditions.js';
import { WritePrecondition } from '../../../src/common/writes/write-precondition.decorator.js';
import { CreateWidgetDto, UpdateWidgetDto } from './dto/create-widget.dto.js';
import { WidgetResponse } from './widget.response.js';
import { WIDGETS_FIELDS } from './widgets.resource.js';
import { WidgetsService } from './widgets.service.js';

/** `/v1/widgets`: private to their owner. */
@ApiTags('widgets')
@ScopedResource('widgets')
@Controller('widgets')
export class WidgetsController {
  constructor(private readonly widgets: WidgetsService) {}

  @Post()
  @CreateOperation()
  @ApiOperation({ summary: 'Create a widget' })
  @ApiCreatedResponse({ type: WidgetResponse, description: 'The new widget; `Location` holds its path.' })
  @ApiErrors(400, 401, 413, 415, 422)
  create(@Body() body: CreateWidgetDto, @CurrentUser() caller: AuthUser): Promise<Tagged<WidgetResponse>> {
    return this.widgets.create(body, caller);
  }

  @Get()
  @ListOperation(WIDGETS_FIELDS)
  @ApiOperation({ summary: 'List widgets (own; all for admins)' })
  @ApiPageResponse(WidgetResponse, 'WidgetList')
  @ApiErrors(400, 401)
  list(@ListParams() query: ListQuery, @CurrentUser() caller: AuthUser): Promise<Page<WidgetResponse>> {
    return this.widgets.list(query, caller);
  }

  @Get(':id')
  @ReadOperation(WIDGETS_FIELDS)
  @ApiOperation({ summary: 'Read a widget' })
  @ApiOkResponse({ type: WidgetResponse })
  @ApiErrors(400, 401, 403, 404)
  findOne(@Param('id', ParseIdPipe) id: number, @CurrentUser() caller: AuthUser): Promise<Tagged<WidgetResponse>> {
    return this.widgets.findOne(id, caller);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Update a widget' })
  @ApiOkResponse({ type: WidgetResponse })
  @ApiErrors(400, 401, 403, 404, 413, 415, 422)
  update(
    @Param('id', ParseIdPipe) id: number,
    @Body() body: UpdateWidgetDto,
    @CurrentUser() caller: AuthUser,
    @WritePrecondition() preconditions: WritePreconditions,
  ): Promise<Tagged<WidgetResponse>> {
    return this.widgets.update(id, body, caller, preconditions);
  }
}
