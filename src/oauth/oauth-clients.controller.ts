import { Body, Controller, Delete, Get, Header, HttpCode, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../common/caller/auth-user.js';
import { ApiCredentials, CurrentUser, RequireScope, Roles } from '../auth/decorators/auth.decorators.js';
import { CreateOperation, ListOperation, ListParams, ReadOperation } from '../common/decorators/operation.decorators.js';
import type { ListQuery } from '../common/list/list-query.js';
import type { Page } from '../common/list/page.js';
import { ApiErrors } from '../common/openapi/api-errors.decorator.js';
import { ApiPageResponse } from '../common/openapi/api-page-response.decorator.js';
import { ParseIdPipe } from '../common/pipes/parse-id.pipe.js';
import { CreateOAuthClientDto } from './dto/create-oauth-client.dto.js';
import { CreatedOAuthClientResponse, OAuthClientResponse } from './oauth-client.response.js';
import { OAUTH_CLIENTS_FIELDS } from './oauth-clients.resource.js';
import { OAuthClientsService } from './oauth-clients.service.js';

/**
 * `/v1/oauth-clients`: the registry of third-party applications, for admins only.
 * Scoped credentials (API keys, OAuth access tokens) cannot use it.
 */
@ApiTags('oauth-clients')
@ApiCredentials()
@RequireScope(null)
@Roles('admin')
@Controller('oauth-clients')
export class OAuthClientsController {
  constructor(private readonly clients: OAuthClientsService) {}

  /** Register a client; a confidential client's `client_secret` is in this response only. */
  @Post()
  @CreateOperation()
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ summary: 'Register an OAuth client (admin)' })
  @ApiCreatedResponse({
    type: CreatedOAuthClientResponse,
    description: 'The new client, with `client_secret` (confidential clients) shown this once; `Location` holds its path.',
  })
  @ApiErrors(400, 401, 403, 413, 415, 422)
  create(@Body() body: CreateOAuthClientDto, @CurrentUser() caller: AuthUser): Promise<CreatedOAuthClientResponse> {
    return this.clients.create(body, caller);
  }

  /** List the registered clients. */
  @Get()
  @ListOperation(OAUTH_CLIENTS_FIELDS)
  @ApiOperation({ summary: 'List OAuth clients (admin)' })
  @ApiPageResponse(OAuthClientResponse, 'OAuthClientList')
  @ApiErrors(400, 401, 403)
  list(@ListParams() query: ListQuery): Promise<Page<OAuthClientResponse>> {
    return this.clients.list(query);
  }

  /** Read one client (never its secret). */
  @Get(':id')
  @ReadOperation(OAUTH_CLIENTS_FIELDS)
  @ApiOperation({ summary: 'Read an OAuth client (admin)' })
  @ApiOkResponse({ type: OAuthClientResponse })
  @ApiErrors(400, 401, 403, 404)
  findOne(@Param('id', ParseIdPipe) id: number): Promise<OAuthClientResponse> {
    return this.clients.findOne(id);
  }

  /** Delete a client: every grant users gave it is revoked, its tokens answer 401. */
  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete an OAuth client and revoke its grants (admin)' })
  @ApiNoContentResponse({ description: 'Deleted; its access and refresh tokens stop working.' })
  @ApiErrors(400, 401, 403, 404)
  async remove(@Param('id', ParseIdPipe) id: number): Promise<void> {
    await this.clients.remove(id);
  }
}
