import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ExpandableReference } from '../common/openapi/expandable.js';
import type { Row } from '../common/list/field-table.js';
import type { Link } from '../common/list/page.js';
import { toIso } from '../common/list/timestamps.js';
import { LinkDto } from '../common/openapi/link.dto.js';
import { type Todo, TODO_STATUSES, type TodoStatus } from './todo.entity.js';
import { linkPrefix } from '../common/versioning/api-versions.js';

/** A todo as the API returns it (docs/resources/todos.md). */
@ApiSchema({ name: 'Todo' })
export class TodoResponse {
  @ApiProperty({ readOnly: true, example: 1, type: 'integer' })
  id: number;

  @ApiProperty({ example: 'Buy milk' })
  title: string;

  @ApiProperty({ type: 'string', nullable: true, example: 'Two litres, semi-skimmed.' })
  content: string | null;

  @ApiProperty({ enum: TODO_STATUSES, example: 'pending' })
  status: TodoStatus;

  /** Id of the owning user. */
  @ExpandableReference('UserSummary', { description: 'The owning user.', example: 1 })
  owner: number;

  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:15:00.000Z' })
  created_at: string;

  @ApiProperty({ readOnly: true, format: 'date-time', example: '2026-11-21T10:15:00.000Z' })
  updated_at: string;

  /** `self` and `owner`. */
  @ApiProperty({
    type: [LinkDto],
    readOnly: true,
    example: [
      { rel: 'self', href: '/v{version}/todos/1' },
      { rel: 'owner', href: '/v{version}/users/1' },
    ],
  })
  links: Link[];
}

/** Maps a todos row (entity or raw select; its links need `owner_id`) to {@link TodoResponse}. */
export function toTodoResponse(source: Row<Todo, 'owner_id'>): TodoResponse {
  const row = source as Record<string, unknown>;
  const id = Number(row.id);
  const prefix = linkPrefix();
  const owner = Number(row.owner_id);
  return {
    id,
    title: row.title as string,
    content: row.content as string | null,
    status: row.status as TodoStatus,
    owner,
    created_at: toIso(row.created_at) as string,
    updated_at: toIso(row.updated_at) as string,
    links: [
      { rel: 'self', href: `${prefix}/todos/${id}` },
      { rel: 'owner', href: `${prefix}/users/${owner}` },
    ],
  };
}
