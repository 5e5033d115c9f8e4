import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../common/caller/auth-user.js';
import { CurrentUser, Roles, ScopedResource } from '../auth/decorators/auth.decorators.js';
import { Public } from '../common/caller/public.decorator.js';
import { RateLimit, setsPassword } from '../auth/rate-limits.js';
import { CreateOperation, ListOperation, ListParams, ReadOperation } from '../common/decorators/operation.decorators.js';
import type { ListQuery } from '../common/list/list-query.js';
import type { Page } from '../common/list/page.js';
import { ApiErrors } from '../common/openapi/api-errors.decorator.js';
import { ApiPageResponse } from '../common/openapi/api-page-response.decorator.js';
import { ParseIdPipe } from '../common/pipes/parse-id.pipe.js';
import type { Tagged, WritePreconditions } from '../common/writes/preconditions.js';
import { WritePrecondition } from '../common/writes/write-precondition.decorator.js';
import { CreateUserDto } from './dto/create-user.dto.js';
import { ReplaceUserDto, UpdateUserDto } from './dto/replace-user.dto.js';
import { UserResponse } from './user.response.js';
import { USERS_FIELDS } from './users.resource.js';
import { UsersService } from './users.service.js';

/** `/v1/users` (docs/resources/users.md). */
@ApiTags('users')
@ScopedResource('users')
@Controller('users')
export class UsersController {
  constructor(private readonly users: UsersService) {}

  /** Register a new user (public; the role is always `user`; RATE_LIMIT_REGISTRATIONS_PER_HOUR per client address). */
  @Public()
  @RateLimit('registration')
  @Post()
  @CreateOperation()
  @ApiOperation({ summary: 'Register a user' })
  @ApiCreatedResponse({ type: UserResponse, description: 'The new user; `Location` holds its path.' })
  @ApiErrors(400, 403, 409, 413, 415, 422)
  create(@Body() body: CreateUserDto): Promise<Tagged<UserResponse>> {
    return this.users.create(body);
  }

  /** List users (admins only). */
  @Get()
  @Roles('admin')
  @ListOperation(USERS_FIELDS)
  @ApiOperation({ summary: 'List users (admin)' })
  @ApiPageResponse(UserResponse, 'UserList')
  @ApiErrors(400, 401, 403)
  list(@ListParams() query: ListQuery, @CurrentUser() caller: AuthUser): Promise<Page<UserResponse>> {
    return this.users.list(query, caller);
  }

  /** Read a user (the user itself or an admin). */
  @Get(':id')
  @ReadOperation(USERS_FIELDS)
  @ApiOperation({ summary: 'Read a user' })
  @ApiOkResponse({ type: UserResponse })
  @ApiErrors(400, 401, 403, 404)
  findOne(@Param('id', ParseIdPipe) id: number, @CurrentUser() caller: AuthUser): Promise<Tagged<UserResponse>> {
    return this.users.findOne(id, caller);
  }

  /** Replace a user: omitted `age` and `email` become null. With `password`, counted as a password change (RATE_LIMIT_PASSWORD_CHANGES_PER_HOUR). */
  @Put(':id')
  @RateLimit('password_change', setsPassword)
  @ApiOperation({ summary: 'Replace a user' })
  @ApiOkResponse({ type: UserResponse })
  @ApiErrors(400, 401, 403, 404, 409, 413, 415, 422)
  replace(
    @Param('id', ParseIdPipe) id: number,
    @Body() body: ReplaceUserDto,
    @CurrentUser() caller: AuthUser,
    @WritePrecondition() preconditions: WritePreconditions,
  ): Promise<Tagged<UserResponse>> {
    return this.users.replace(id, body, caller, preconditions);
  }

  /** Update some fields of a user (JSON merge patch; `null` clears `age` or `email`). With `password`, counted as a password change (RATE_LIMIT_PASSWORD_CHANGES_PER_HOUR). */
  @Patch(':id')
  @RateLimit('password_change', setsPassword)
  @ApiOperation({ summary: 'Update a user' })
  @ApiOkResponse({ type: UserResponse })
  @ApiErrors(400, 401, 403, 404, 409, 413, 415, 422)
  update(
    @Param('id', ParseIdPipe) id: number,
    @Body() body: UpdateUserDto,
    @CurrentUser() caller: AuthUser,
    @WritePrecondition() preconditions: WritePreconditions,
  ): Promise<Tagged<UserResponse>> {
    return this.users.update(id, body, caller, preconditions);
  }

  /** Delete a user with their todos and tokens. */
  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a user' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors(400, 401, 403, 404)
  async remove(@Param('id', ParseIdPipe) id: number, @CurrentUser() caller: AuthUser, @WritePrecondition() preconditions: WritePreconditions): Promise<void> {
    await this.users.remove(id, caller, preconditions);
  }
}
