import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { Row } from '../common/list/field-table.js';
import { toIso } from '../common/list/timestamps.js';
import type { Link } from '../common/list/page.js';
import { LinkDto } from '../common/openapi/link.dto.js';
import { ROLES, type Role } from '../common/caller/roles.js';
import type { User } from './user.entity.js';
import { linkPrefix } from '../common/versioning/api-versions.js';

/** A user as the API returns it (docs/resources/users.md); the password is never included. */
@ApiSchema({ name: 'User' })
export class UserResponse {
  @ApiProperty({ readOnly: true, example: 1, type: 'integer' })
  id: number;

  @ApiProperty({ readOnly: true, example: 'ada_l' })
  username: string;

  @ApiProperty({ example: 'Ada Lovelace' })
  name: string;

  @ApiProperty({ nullable: true, example: 36, type: 'integer' })
  age: number | null;

  @ApiProperty({ type: 'string', nullable: true, format: 'email', example: 'ada@example.com' })
  email: string | null;

  /** When `email` was verified (docs/authentication.md#e-mail-verification); null until then, and again after a change of address. */
  @ApiProperty({ type: 'string', nullable: true, readOnly: true, format: 'date-time', example: '2026-11-21T10:20:00.000Z' })
  email_verified_at: string | null;

  @ApiProperty({ enum: ROLES, example: 'user' })
  role: Role;

  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:15:00.000Z' })
  created_at: string;

  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:15:00.000Z' })
  updated_at: string;

  /** `self` and `todos` (the user's todos). */
  @ApiProperty({
    type: [LinkDto],
    readOnly: true,
    example: [
      { rel: 'self', href: '/v{version}/users/1' },
      { rel: 'todos', href: '/v{version}/todos?owner=1' },
    ],
  })
  links: Link[];
}

/** Maps a users row (entity or raw select) to {@link UserResponse}. */
export function toUserResponse(source: Row<User>): UserResponse {
  const row = source as Record<string, unknown>;
  const id = Number(row.id);
  const prefix = linkPrefix();
  return {
    id,
    username: row.username as string,
    name: row.name as string,
    age: row.age === undefined ? (undefined as never) : row.age === null ? null : Number(row.age),
    email: row.email as string | null,
    email_verified_at: toIso(row.email_verified_at) as string | null,
    role: row.role as Role,
    created_at: toIso(row.created_at) as string,
    updated_at: toIso(row.updated_at) as string,
    links: [
      { rel: 'self', href: `${prefix}/users/${id}` },
      { rel: 'todos', href: `${prefix}/todos?owner=${id}` },
    ],
  };
}
