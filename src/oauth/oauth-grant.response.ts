import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { Link } from '../common/list/page.js';
import { LinkDto } from '../common/openapi/link.dto.js';
import { registeredList } from '../common/resources/resource-registry.js';

/** Access a user granted a third-party client: one approved authorization request. */
@ApiSchema({ name: 'OAuthGrant' })
export class OAuthGrantResponse {
  @ApiProperty({ readOnly: true, example: 1, type: 'integer' })
  id: number;

  /** The client's public identifier. */
  @ApiProperty({ readOnly: true, example: 'oc_5bG2f0hQ9yJ3kT8mW1xZ7a' })
  client_id: string;

  /** The client's name, as on the consent page. */
  @ApiProperty({ readOnly: true, example: 'Todo Sync' })
  client_name: string;

  /** The scopes the user approved. */
  @ApiProperty({ readOnly: true, type: [String], enum: registeredList('scopes'), example: ['todos:read'] })
  scopes: string[];

  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:15:00.000Z' })
  created_at: string;

  /** The last code exchange or token refresh. */
  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:20:00.000Z' })
  last_used_at: string;

  @ApiProperty({ type: [LinkDto], readOnly: true, example: [{ rel: 'self', href: '/v{version}/oauth-grants/1' }] })
  links: Link[];
}
