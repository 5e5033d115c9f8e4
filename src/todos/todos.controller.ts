import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
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
import { CreateTodoDto, ReplaceTodoDto, UpdateTodoDto } from './dto/create-todo.dto.js';
import { TodoResponse } from './todo.response.js';
import { TODOS_FIELDS } from './todos.resource.js';
import { TodosService } from './todos.service.js';

/** `/v1/todos` (docs/resources/todos.md): private to their owner, admins see all. */
@ApiTags('todos')
@ScopedResource('todos')
@Controller('todos')
export class TodosController {
  constructor(private readonly todos: TodosService) {}

  @Post()
  @CreateOperation()
  @ApiOperation({ summary: 'Create a todo' })
  @ApiCreatedResponse({ type: TodoResponse, description: 'The new todo; `Location` holds its path.' })
  @ApiErrors(400, 401, 413, 415, 422)
  create(@Body() body: CreateTodoDto, @CurrentUser() caller: AuthUser): Promise<Tagged<TodoResponse>> {
    return this.todos.create(body, caller);
  }

  @Get()
  @ListOperation(TODOS_FIELDS)
  @ApiOperation({ summary: 'List todos (own; all for admins)' })
  @ApiPageResponse(TodoResponse, 'TodoList')
  @ApiErrors(400, 401)
  list(@ListParams() query: ListQuery, @CurrentUser() caller: AuthUser): Promise<Page<TodoResponse>> {
    return this.todos.list(query, caller);
  }

  @Get(':id')
  @ReadOperation(TODOS_FIELDS)
  @ApiOperation({ summary: 'Read a todo' })
  @ApiOkResponse({ type: TodoResponse })
  @ApiErrors(400, 401, 403, 404)
  findOne(@Param('id', ParseIdPipe) id: number, @CurrentUser() caller: AuthUser): Promise<Tagged<TodoResponse>> {
    return this.todos.findOne(id, caller);
  }

  @Put(':id')
  @ApiOperation({ summary: 'Replace a todo (omitted content → null, status → pending)' })
  @ApiOkResponse({ type: TodoResponse })
  @ApiErrors(400, 401, 403, 404, 413, 415, 422)
  replace(
    @Param('id', ParseIdPipe) id: number,
    @Body() body: ReplaceTodoDto,
    @CurrentUser() caller: AuthUser,
    @WritePrecondition() preconditions: WritePreconditions,
  ): Promise<Tagged<TodoResponse>> {
    return this.todos.replace(id, body, caller, preconditions);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Update a todo, e.g. {"status": "done"}' })
  @ApiOkResponse({ type: TodoResponse })
  @ApiErrors(400, 401, 403, 404, 413, 415, 422)
  update(
    @Param('id', ParseIdPipe) id: number,
    @Body() body: UpdateTodoDto,
    @CurrentUser() caller: AuthUser,
    @WritePrecondition() preconditions: WritePreconditions,
  ): Promise<Tagged<TodoResponse>> {
    return this.todos.update(id, body, caller, preconditions);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a todo' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors(400, 401, 403, 404)
  async remove(@Param('id', ParseIdPipe) id: number, @CurrentUser() caller: AuthUser, @WritePrecondition() preconditions: WritePreconditions): Promise<void> {
    await this.todos.remove(id, caller, preconditions);
  }
}
