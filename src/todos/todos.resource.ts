import { defineFields } from '../common/list/field-table.js';
import { defineResource } from '../common/resources/define-resource.js';
import { Todo, TODO_STATUSES } from './todo.entity.js';
import { TODOS_POLICY } from './todos.policy.js';

/** The todos field table (docs/lists.md#fields-filters-and-sorts-per-collection): filters `status`, `owner`; sort `id`, `title`, `status`, `created_at`, `updated_at`. */
export const TODOS_FIELDS = defineFields<Todo>()({
  alias: 't',
  fields: {
    title: { column: 'title', sort: true },
    content: { column: 'content' },
    status: { column: 'status', sort: true, filter: { type: 'enum', values: TODO_STATUSES, description: 'Todos in this status.', example: 'done' } },
    owner: { column: 'owner_id', filter: { type: 'int', description: 'Todos of this user id (admins; others only ever see their own).', example: 1 } },
    created_at: { column: 'created_at', range: 'timestamp', sort: true },
    updated_at: { column: 'updated_at', range: 'timestamp', sort: true },
  },
  links: ['owner_id'],
});

/** Todos (docs/resources/todos.md): `/v1/todos`, scopes `todos:read` and `todos:write`. */
export const TODOS = defineResource({
  name: 'todos',
  description: 'Todos, private to their owner (admins see all).',
  scopes: true,
  entities: [Todo],
  fields: TODOS_FIELDS,
  policy: TODOS_POLICY,
});
