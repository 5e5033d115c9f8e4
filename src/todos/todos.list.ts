import type { ListSpec } from '../common/list/list-query.js';
import { TODO_STATUSES } from './todo.entity.js';

/** The todos list grammar (SPEC §6): filters `status`, `owner`; sort `id`, `title`, `status`, `created_at`, `updated_at`. */
export const TODOS_LIST: ListSpec = {
  resource: 'todo',
  sortable: { id: 't.id', title: 't.title', status: 't.status', created_at: 't.created_at', updated_at: 't.updated_at' },
  filters: {
    status: { type: 'enum', values: TODO_STATUSES, column: 't.status', description: 'Todos in this status.', example: 'done' },
    owner: { type: 'int', column: 't.owner_id', description: 'Todos of this user id (admins; others only ever see their own).', example: 1 },
  },
  fields: ['title', 'content', 'status', 'owner', 'created_at', 'updated_at'],
  alias: 't',
  columns: { title: ['title'], content: ['content'], status: ['status'], owner: ['owner_id'], created_at: ['created_at'], updated_at: ['updated_at'] },
  always: ['owner_id'],
};
