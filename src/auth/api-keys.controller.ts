import { Body, Controller, Delete, Get, Header, HttpCode, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CreateOperation, ListOperation, ListParams } from '../common/decorators/operation.decorators.js';
import type { ListQuery } from '../common/list/list-query.js';
import type { Page } from '../common/list/page.js';
import { ApiErrors } from '../common/openapi/api-errors.decorator.js';
import { ApiPageResponse } from '../common/openapi/api-page-response.decorator.js';
import { ParseIdPipe } from '../common/pipes/parse-id.pipe.js';
import { ApiKeyResponse, CreatedApiKeyResponse } from './api-key.response.js';
import { API_KEYS_FIELDS } from './api-keys.resource.js';
import { ApiKeysService } from './api-keys.service.js';
import type { AuthUser } from '../common/caller/auth-user.js';
import { ApiCredentials, CurrentUser, RequireScope } from './decorators/auth.decorators.js';
import { CreateApiKeyDto } from './dto/create-api-key.dto.js';

/** `/v1/api-keys` (docs/authentication.md#api-keys): the caller's own keys. API keys cannot manage API keys (403). */
@ApiTags('api-keys')
@ApiCredentials()
@RequireScope(null)
@Controller('api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  /** Create an API key; the key is in this response only. */
  @Post()
  @CreateOperation()
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ summary: 'Create an API key (shown once)' })
  @ApiCreatedResponse({ type: CreatedApiKeyResponse, description: 'The new key, with `key` shown this once; `Location` holds its path.' })
  @ApiErrors(400, 401, 403, 413, 415, 422)
  create(@Body() body: CreateApiKeyDto, @CurrentUser() caller: AuthUser): Promise<CreatedApiKeyResponse> {
    return this.apiKeys.create(body, caller);
  }

  /** List the caller's API keys (prefix only). */
  @Get()
  @ListOperation(API_KEYS_FIELDS)
  @ApiOperation({ summary: "List the caller's API keys" })
  @ApiPageResponse(ApiKeyResponse, 'ApiKeyList')
  @ApiErrors(400, 401, 403)
  list(@ListParams() query: ListQuery, @CurrentUser() caller: AuthUser): Promise<Page<ApiKeyResponse>> {
    return this.apiKeys.list(query, caller);
  }

  /** Revoke one of the caller's API keys. */
  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke an API key' })
  @ApiNoContentResponse({ description: 'Revoked; the key answers 401 from now on.' })
  @ApiErrors(400, 401, 403, 404)
  async remove(@Param('id', ParseIdPipe) id: number, @CurrentUser() caller: AuthUser): Promise<void> {
    await this.apiKeys.remove(id, caller);
  }
}
