import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { Row } from '../common/list/field-table.js';
import type { Link } from '../common/list/page.js';
import { toIso } from '../common/list/timestamps.js';
import { LinkDto } from '../common/openapi/link.dto.js';
import { linkPrefix } from '../common/versioning/api-versions.js';
import { LOGIN_KINDS, type Login, type LoginKind } from './login.entity.js';

/**
 * One of the caller's logins (docs/authentication.md#your-logins): a password login's tokens or a
 * cookie session, where and when it started and was last used. Never a token, session id or hash.
 */
@ApiSchema({ name: 'Login' })
export class LoginResponse {
  @ApiProperty({ readOnly: true, example: 1, type: 'integer' })
  id: number;

  /** `token`: `POST /v{version}/login` and its refreshes; `session`: a cookie session. */
  @ApiProperty({ readOnly: true, enum: LOGIN_KINDS, example: 'token' })
  kind: LoginKind;

  /** True for the login this request was made with. */
  @ApiProperty({ readOnly: true, example: true })
  current: boolean;

  /** The client address that started it. */
  @ApiProperty({ readOnly: true, maxLength: 64, example: '203.0.113.7' })
  address: string;

  /** The `User-Agent` that started it (at most 256 characters; empty when none was sent). */
  @ApiProperty({ readOnly: true, maxLength: 256, example: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0' })
  user_agent: string;

  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:15:00.000Z' })
  created_at: string;

  /** A token login's last refresh; a session's last request (to 10 seconds). */
  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:20:00.000Z' })
  last_used_at: string;

  @ApiProperty({ type: [LinkDto], readOnly: true, example: [{ rel: 'self', href: '/v{version}/logins/1' }] })
  links: Link[];
}

/** Which login a request was made with: its kind and handle (see {@link Login}); undefined for none. */
export interface LoginKey {
  kind: LoginKind;
  handle: string;
}

/** Maps a logins row to {@link LoginResponse}; `current` compares it with the caller's `own` login, `lastUsedAt` overrides the row's (a session's, from the store). */
export function toLoginResponse(row: Row<Login, 'kind' | 'handle'>, own: LoginKey | undefined, lastUsedAt?: Date): LoginResponse {
  const id = Number(row.id);
  const out: Record<string, unknown> = {
    id,
    kind: row.kind,
    current: own !== undefined && row.kind === own.kind && row.handle === own.handle,
    address: row.address,
    user_agent: row.user_agent,
    created_at: toIso(row.created_at),
    last_used_at: lastUsedAt ? lastUsedAt.toISOString() : toIso(row.last_used_at),
    links: [{ rel: 'self', href: `${linkPrefix()}/logins/${id}` }],
  };
  for (const key of Object.keys(out)) if (out[key] === undefined) delete out[key];
  return out as unknown as LoginResponse;
}
