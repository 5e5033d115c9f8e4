import { Controller, Get, Header, VERSION_NEUTRAL } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/caller/public.decorator.js';
import { NoDatabase } from '../common/openapi/api-errors.decorator.js';
import { ROOT_EXAMPLE, RootResponse } from './root.response.js';
import { RootService } from './root.service.js';

/** `GET /` (docs/versioning.md#the-root): what a caller who knows only the host needs to find its way. */
@ApiTags('root')
@Controller({ version: VERSION_NEUTRAL })
export class RootController {
  constructor(private readonly root: RootService) {}

  /** The API versions with their deprecation and sunset, the documents, the docs page, health and metrics where served: links, no secret. */
  @Public()
  @NoDatabase()
  @Get()
  @Header('Cache-Control', 'public, max-age=300')
  @ApiOperation({
    operationId: 'getRoot',
    summary: 'Where everything is: versions, documents, health',
    description:
      'Unversioned and public. Lists the API versions (newest first, with what is deprecated and the dates), their OpenAPI documents and the docs page where they are served, the health checks, and the metrics where this port serves them.',
  })
  @ApiOkResponse({ type: RootResponse, description: 'The service’s root (with the default settings, outside production).', example: ROOT_EXAMPLE })
  get(): RootResponse {
    return this.root.describe();
  }
}
