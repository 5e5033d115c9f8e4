import type { ListSpec } from '../common/list/list-query.js';
import { ROLES } from './user.entity.js';

/** The users list grammar (SPEC §6): filters `role`, `name`, `age`; sort `id`, `name`, `age`, `created_at`. */
export const USERS_LIST: ListSpec = {
  resource: 'user',
  sortable: { id: 'u.id', name: 'u.name', age: 'u.age', created_at: 'u.created_at' },
  filters: {
    role: { type: 'enum', values: ROLES, column: 'u.role', description: 'Users with this role.', example: 'admin' },
    name: { type: 'string', column: 'u.name', description: 'Users with exactly this name.', example: 'Ada Lovelace' },
    age: { type: 'int', column: 'u.age', description: 'Users of this age.', example: 36 },
  },
  fields: ['username', 'name', 'age', 'email', 'role', 'created_at', 'updated_at'],
  alias: 'u',
  columns: { username: ['username'], name: ['name'], age: ['age'], email: ['email'], role: ['role'], created_at: ['created_at'], updated_at: ['updated_at'] },
  always: [],
};
