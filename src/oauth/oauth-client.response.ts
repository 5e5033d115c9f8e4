import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { Row } from '../common/list/field-table.js';
import type { Link } from '../common/list/page.js';
import { toIso } from '../common/list/timestamps.js';
import { LinkDto } from '../common/openapi/link.dto.js';
import { registeredList } from '../common/resources/resource-registry.js';
import { linkPrefix } from '../common/versioning/api-versions.js';
import type { OAuthClient } from './oauth-client.entity.js';

/** A registered OAuth client as admins read it: never its secret. */
@ApiSchema({ name: 'OAuthClient' })
export class OAuthClientResponse {
  @ApiProperty({ readOnly: true, example: 1, type: 'integer' })
  id: number;

  /** The public identifier the client sends as `client_id`. */
  @ApiProperty({ readOnly: true, example: 'oc_5bG2f0hQ9yJ3kT8mW1xZ7a' })
  client_id: string;

  @ApiProperty({ example: 'Todo Sync' })
  name: string;

  @ApiProperty({ type: [String], example: ['https://todo-sync.example/callback'] })
  redirect_uris: string[];

  @ApiProperty({ type: [String], enum: registeredList('scopes'), example: ['todos:read', 'todos:write'] })
  scopes: string[];

  /** Whether the client authenticates with a secret at the token endpoint. */
  @ApiProperty({ example: true })
  confidential: boolean;

  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:15:00.000Z' })
  created_at: string;

  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:15:00.000Z' })
  updated_at: string;

  @ApiProperty({ type: [LinkDto], readOnly: true, example: [{ rel: 'self', href: '/v{version}/oauth-clients/1' }] })
  links: Link[];
}

/** The response of `POST /v1/oauth-clients`: with the secret of a confidential client, shown this once. */
@ApiSchema({ name: 'CreatedOAuthClient' })
export class CreatedOAuthClientResponse extends OAuthClientResponse {
  /** Confidential clients only: the secret for client_secret_basic / client_secret_post. Shown only in this response; only its hash is stored. */
  @ApiProperty({ readOnly: true, required: false, example: 'cs_Zq3c7Y1m0Wf3b6P3Qv8h0dY2kq9Z5c1T7rB4uN6eX0s' })
  client_secret?: string;
}

/** Maps an oauth_clients row (entity or raw) to {@link OAuthClientResponse}. */
export function toOAuthClientResponse(source: Row<OAuthClient>): OAuthClientResponse {
  const row = source as Record<string, unknown>;
  const id = Number(row.id);
  const prefix = linkPrefix();
  const out: Record<string, unknown> = {
    id,
    client_id: row.client_id,
    name: row.name,
    redirect_uris: row.redirect_uris === undefined ? undefined : String(row.redirect_uris).split(' ').filter(Boolean),
    scopes: row.scopes === undefined ? undefined : String(row.scopes).split(' ').filter(Boolean),
    confidential: row.confidential === undefined ? undefined : Boolean(row.confidential),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
    links: [{ rel: 'self', href: `${prefix}/oauth-clients/${id}` }],
  };
  for (const key of Object.keys(out)) if (out[key] === undefined) delete out[key];
  return out as unknown as OAuthClientResponse;
}
