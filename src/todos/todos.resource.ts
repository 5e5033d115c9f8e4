import { defineFields } from '../common/list/field-table.js';
import { defineResource } from '../common/resources/define-resource.js';
import { Todo, TODO_STATUSES } from './todo.entity.js';
import { TodosService } from './todos.service.js';
import { userReference } from '../users/user-summary.response.js';

/** The todos field table (docs/lists.md#fields-filters-and-sorts-per-collection): filters `status`, `owner` (and `status[ne]`, `status[in]`, `owner[in]`, `title[prefix]`, `title[contains]`, `content[null]`, `content[contains]`); sort `id`, `title`, `status`, `created_at`, `updated_at`. */
export const TODOS_FIELDS = defineFields<Todo>()({
  alias: 't',
  fields: {
    title: { column: 'title', sort: true, operators: ['prefix', 'contains'] },
    content: { column: 'content', operators: ['null', 'contains'] },
    status: {
      column: 'status',
      sort: true,
      operators: ['ne', 'in'],
      filter: { type: 'enum', values: TODO_STATUSES, description: 'Todos in this status.', example: 'done' },
    },
    owner: {
      column: 'owner_id',
      operators: ['in'],
      filter: { type: 'int', description: 'Todos of this user id (admins; others only ever see their own).', example: 1 },
    },
    created_at: { column: 'created_at', range: 'timestamp', sort: true },
    updated_at: { column: 'updated_at', range: 'timestamp', sort: true },
  },
  links: ['owner_id'],
  search: { table: 'todos', fields: ['title', 'content'] },
  expand: { owner: userReference('owner') },
});

/** Todos (docs/resources/todos.md): `/v1/todos`, scopes `todos:read` and `todos:write`. */
export const TODOS = defineResource({
  name: 'todos',
  description: 'Todos, private to their owner (admins see all).',
  scopes: true,
  entities: [Todo],
  module: () => import('./todos.module.js').then((file) => file.TodosModule),
  events: { 'todo.created': 'a todo is created', 'todo.updated': 'a todo is changed by PUT or PATCH', 'todo.deleted': 'a todo is deleted' },
  versioned: ['Todo'],
  fields: TODOS_FIELDS,
  listPlans: [
    {
      name: 'todos as their owner',
      caller: 'user',
      visible: 't.owner_id = :caller',
      index: 'idx_todos_owner_id_updated_at_id',
      list: (app, query, caller) => app.get(TodosService).list(query, caller),
    },
    {
      name: 'todos as an admin',
      caller: 'admin',
      visible: '1 = 1',
      index: 'idx_todos_updated_at_id',
      list: (app, query, caller) => app.get(TodosService).list(query, caller),
    },
  ],
  serviceTier: (tier) => new TodosService(tier.dataSource.getRepository(Todo), tier.outbox),
});
