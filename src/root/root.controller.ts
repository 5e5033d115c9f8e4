import { Controller, Get, Header, VERSION_NEUTRAL } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/caller/public.decorator.js';
import { NoDatabase } from '../common/openapi/api-errors.decorator.js';
import { RootResponse } from './root.response.js';
import { RootService } from './root.service.js';

/** What `GET /` answers with the default settings outside production (the example of both documents: the root lists every version). */
const ROOT_EXAMPLE: RootResponse = {
  name: 'resource-api',
  versions: [
    { version: '2', href: '/v2', newest: true, document: '/docs/v2/openapi.json' },
    {
      version: '1',
      href: '/v1',
      newest: false,
      document: '/docs/v1/openapi.json',
      deprecation: { deprecated_at: '2026-12-01T00:00:00.000Z', sunset_at: '2027-06-30T00:00:00.000Z', paths: ['/v1/articles', '/v1/articles/{id}/comments'] },
    },
  ],
  links: [
    { rel: 'self', href: '/' },
    { rel: 'service-doc', href: '/docs' },
    { rel: 'service-desc', href: '/docs/openapi.json' },
    { rel: 'health-live', href: '/health/live' },
    { rel: 'health-ready', href: '/health/ready' },
    { rel: 'metrics', href: '/metrics' },
  ],
};

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
