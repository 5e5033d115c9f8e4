import { Controller, Delete, Get, HttpCode, Param, Res } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { AuthUser } from '../common/caller/auth-user.js';
import { ListOperation, ListParams, ReadOperation } from '../common/decorators/operation.decorators.js';
import type { ListQuery } from '../common/list/list-query.js';
import type { Page } from '../common/list/page.js';
import { ApiErrors } from '../common/openapi/api-errors.decorator.js';
import { ApiPageResponse } from '../common/openapi/api-page-response.decorator.js';
import { ParseIdPipe } from '../common/pipes/parse-id.pipe.js';
import type { Env } from '../config/env.validation.js';
import { ApiCredentials, CurrentUser, RequireScope } from './decorators/auth.decorators.js';
import { LoginResponse } from './login.response.js';
import { LOGINS_FIELDS } from './logins.resource.js';
import { LoginsService } from './logins.service.js';
import { SESSION_COOKIE } from './sessions.service.js';

/**
 * `/v1/logins` (docs/authentication.md#your-logins): the caller's token logins and cookie sessions,
 * and their ending. API keys and OAuth access tokens cannot use it (403).
 */
@ApiTags('logins')
@ApiCredentials()
@RequireScope(null)
@Controller('logins')
export class LoginsController {
  private readonly secure: boolean;

  constructor(
    private readonly logins: LoginsService,
    config: ConfigService<Env, true>,
  ) {
    this.secure = config.get('NODE_ENV', { infer: true }) === 'production';
  }

  /** List the caller's live logins, the one of this request marked `current`. */
  @Get()
  @ListOperation(LOGINS_FIELDS)
  @ApiOperation({ operationId: 'listLogins', summary: "List the caller's logins" })
  @ApiPageResponse(LoginResponse, 'LoginList')
  @ApiErrors(400, 401, 403)
  list(@ListParams() query: ListQuery, @CurrentUser() caller: AuthUser): Promise<Page<LoginResponse>> {
    return this.logins.list(query, caller);
  }

  /** Read one of the caller's live logins. */
  @Get(':id')
  @ReadOperation(LOGINS_FIELDS)
  @ApiOperation({ operationId: 'getLogin', summary: "Read one of the caller's logins" })
  @ApiOkResponse({ type: LoginResponse })
  @ApiErrors(400, 401, 403, 404)
  findOne(@Param('id', ParseIdPipe) id: number, @CurrentUser() caller: AuthUser): Promise<LoginResponse> {
    return this.logins.findOne(id, caller);
  }

  /** End one login: its tokens or its session answer 401 from now on. */
  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ operationId: 'endLogin', summary: 'End a login' })
  @ApiNoContentResponse({
    description: 'Ended; its access and refresh tokens, or its session cookie, answer 401 from now on (the cookie is cleared when it was this request’s).',
  })
  @ApiErrors(400, 401, 403, 404)
  async end(@Param('id', ParseIdPipe) id: number, @CurrentUser() caller: AuthUser, @Res({ passthrough: true }) res: Response): Promise<void> {
    if (await this.logins.end(id, caller)) this.clearCookie(caller, res);
  }

  /** Sign out everywhere: end every login of the caller, this request's included. */
  @Delete()
  @HttpCode(204)
  @ApiOperation({ operationId: 'endAllLogins', summary: 'End every login (sign out everywhere)' })
  @ApiNoContentResponse({ description: 'Every login ended, this request’s included (a session cookie is cleared).' })
  @ApiErrors(400, 401, 403)
  async endAll(@CurrentUser() caller: AuthUser, @Res({ passthrough: true }) res: Response): Promise<void> {
    if (await this.logins.endAll(caller)) this.clearCookie(caller, res);
  }

  private clearCookie(caller: AuthUser, res: Response): void {
    if (caller.scheme === 'session') res.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'lax', path: '/', secure: this.secure });
  }
}
