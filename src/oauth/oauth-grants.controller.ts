import { Controller, Delete, Get, HttpCode, Param } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../common/caller/auth-user.js';
import { ApiCredentials, CurrentUser, RequireScope } from '../auth/decorators/auth.decorators.js';
import { ListOperation, ListParams, ReadOperation } from '../common/decorators/operation.decorators.js';
import type { ListQuery } from '../common/list/list-query.js';
import type { Page } from '../common/list/page.js';
import { ApiErrors } from '../common/openapi/api-errors.decorator.js';
import { ApiPageResponse } from '../common/openapi/api-page-response.decorator.js';
import { ParseIdPipe } from '../common/pipes/parse-id.pipe.js';
import { OAuthGrantResponse } from './oauth-grant.response.js';
import { OAUTH_GRANTS_FIELDS } from './oauth-grants.resource.js';
import { OAuthGrantsService } from './oauth-grants.service.js';

/**
 * `/v1/oauth-grants`: the access the caller gave third-party clients, and its
 * revocation. Scoped credentials (API keys, OAuth access tokens) cannot use it: an application
 * never manages its own grant.
 */
@ApiTags('oauth-grants')
@ApiCredentials()
@RequireScope(null)
@Controller('oauth-grants')
export class OAuthGrantsController {
  constructor(private readonly grants: OAuthGrantsService) {}

  /** List the grants the caller gave. */
  @Get()
  @ListOperation(OAUTH_GRANTS_FIELDS)
  @ApiOperation({ summary: "List the caller's OAuth grants" })
  @ApiPageResponse(OAuthGrantResponse, 'OAuthGrantList')
  @ApiErrors(400, 401, 403)
  list(@ListParams() query: ListQuery, @CurrentUser() caller: AuthUser): Promise<Page<OAuthGrantResponse>> {
    return this.grants.list(query, caller);
  }

  /** Read one of the caller's grants. */
  @Get(':id')
  @ReadOperation(OAUTH_GRANTS_FIELDS)
  @ApiOperation({ summary: "Read one of the caller's OAuth grants" })
  @ApiOkResponse({ type: OAuthGrantResponse })
  @ApiErrors(400, 401, 403, 404)
  findOne(@Param('id', ParseIdPipe) id: number, @CurrentUser() caller: AuthUser): Promise<OAuthGrantResponse> {
    return this.grants.findOne(id, caller);
  }

  /** Revoke a grant: its access and refresh tokens stop working at once. */
  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke an OAuth grant' })
  @ApiNoContentResponse({ description: 'Revoked; the client’s tokens of this grant answer 401 from now on.' })
  @ApiErrors(400, 401, 403, 404)
  async remove(@Param('id', ParseIdPipe) id: number, @CurrentUser() caller: AuthUser): Promise<void> {
    await this.grants.remove(id, caller);
  }
}
