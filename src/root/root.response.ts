import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { LinkDto } from '../common/openapi/link.dto.js';

/** The deprecation of parts of an API version (docs/versioning.md#deprecation-and-sunset). */
@ApiSchema({ name: 'VersionDeprecation' })
export class VersionDeprecationResponse {
  /** From when the paths below answer with `Deprecation` (may lie in the future). */
  @ApiProperty({ type: 'string', format: 'date-time', example: '2026-12-01T00:00:00.000Z' })
  deprecated_at: string;

  /** Until when they are served at least (`Sunset`). */
  @ApiProperty({ type: 'string', format: 'date-time', example: '2027-06-30T00:00:00.000Z' })
  sunset_at: string;

  /** The deprecated collections of this version (for v1 its articles and their comments), each superseded by the same path in the newest version. */
  @ApiProperty({ type: 'string', isArray: true, maxItems: 100, items: { type: 'string', maxLength: 200 } })
  paths: string[];
}

/** One API version the service serves. */
@ApiSchema({ name: 'ApiVersion' })
export class ApiVersionResponse {
  /** The major version: the path prefix `/v<version>`. */
  @ApiProperty({ type: 'string', pattern: '^[0-9]+$', maxLength: 4, example: '2' })
  version: string;

  /** Its path prefix. */
  @ApiProperty({ type: 'string', maxLength: 8, example: '/v2' })
  href: string;

  /** Whether it is the newest version. */
  @ApiProperty({ example: true })
  newest: boolean;

  /** Its OpenAPI document, or null where the docs are not served (production without DOCS_USERNAME). */
  @ApiProperty({ type: 'string', nullable: true, maxLength: 64, example: '/docs/v2/openapi.json' })
  document: string | null;

  /** What of it is deprecated, with the dates; absent when nothing is. */
  @ApiProperty({ type: VersionDeprecationResponse, required: false })
  deprecation?: VersionDeprecationResponse;
}

/** The root's links with the default settings outside production (every link listed). */
const ROOT_LINKS_EXAMPLE: LinkDto[] = [
  { rel: 'self', href: '/' },
  { rel: 'service-doc', href: '/docs' },
  { rel: 'service-desc', href: '/docs/openapi.json' },
  { rel: 'health-live', href: '/health/live' },
  { rel: 'health-ready', href: '/health/ready' },
  { rel: 'metrics', href: '/metrics' },
];

/** `GET /`: where the versions, the documents and the operational endpoints are. Schema `Root`. */
@ApiSchema({ name: 'Root' })
export class RootResponse {
  @ApiProperty({ enum: ['resource-api'], example: 'resource-api' })
  name: 'resource-api';

  /** The API versions, newest first. */
  @ApiProperty({ type: ApiVersionResponse, isArray: true, maxItems: 100 })
  versions: ApiVersionResponse[];

  /**
   * `self` (`/`), `service-doc` (the docs page) and `service-desc` (the newest version's document)
   * where the docs are served (RFC 8631), `health-live`, `health-ready`, and `metrics` where this
   * port serves them.
   */
  @ApiProperty({
    type: LinkDto,
    isArray: true,
    maxItems: 20,
    example: ROOT_LINKS_EXAMPLE,
  })
  links: LinkDto[];
}

/** What `GET /` answers with the default settings outside production: the example of both documents (the root lists every version). */
export const ROOT_EXAMPLE: RootResponse = {
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
  links: ROOT_LINKS_EXAMPLE,
};
