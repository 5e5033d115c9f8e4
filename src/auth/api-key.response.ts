import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { Row } from '../common/list/field-table.js';
import type { Link } from '../common/list/page.js';
import { toIso } from '../common/list/timestamps.js';
import { LinkDto } from '../common/openapi/link.dto.js';
import type { ApiKey } from './api-key.entity.js';
import { registeredList } from '../common/resources/resource-registry.js';
import { linkPrefix } from '../common/versioning/api-versions.js';

/** An API key as listed: never the key itself, only its prefix (docs/authentication.md#api-keys). */
@ApiSchema({ name: 'ApiKey' })
export class ApiKeyResponse {
  @ApiProperty({ readOnly: true, example: 1, type: 'integer' })
  id: number;

  @ApiProperty({ example: 'nightly export' })
  name: string;

  /** The key's first characters, to recognise it. */
  @ApiProperty({ readOnly: true, example: 'rk_Zq3c7Y1m' })
  prefix: string;

  @ApiProperty({ type: [String], enum: registeredList('scopes'), example: ['todos:read'] })
  scopes: string[];

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: null })
  expires_at: string | null;

  /** Last successful use (updated at most once a minute). */
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, readOnly: true, example: null })
  last_used_at: string | null;

  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:15:00.000Z' })
  created_at: string;

  @ApiProperty({ type: [LinkDto], readOnly: true, example: [{ rel: 'self', href: '/v{version}/api-keys/1' }] })
  links: Link[];
}

/** The response of `POST /v1/api-keys`: the key, shown this once. */
@ApiSchema({ name: 'CreatedApiKey' })
export class CreatedApiKeyResponse extends ApiKeyResponse {
  /** The key for `X-API-Key`. Shown only in this response; store it now. */
  @ApiProperty({ readOnly: true, example: 'rk_Zq3c7Y1m0Wf3b6P3Qv8h0dY2kq9Z5c1T7rB4uN6eX0s' })
  key: string;
}

/** Maps an api_keys row to {@link ApiKeyResponse}. */
export function toApiKeyResponse(source: Row<ApiKey>): ApiKeyResponse {
  const row = source as Record<string, unknown>;
  const id = Number(row.id);
  const prefix = linkPrefix();
  return {
    id,
    name: row.name as string,
    prefix: row.prefix as string,
    scopes: String(row.scopes ?? '')
      .split(' ')
      .filter(Boolean),
    expires_at: toIso(row.expires_at) as string | null,
    last_used_at: toIso(row.last_used_at) as string | null,
    created_at: toIso(row.created_at) as string,
    links: [{ rel: 'self', href: `${prefix}/api-keys/${id}` }],
  };
}
