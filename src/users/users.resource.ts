import { defineFields } from '../common/list/field-table.js';
import { defineResource } from '../common/resources/define-resource.js';
import { ROLES } from '../common/caller/roles.js';
import { User } from './user.entity.js';
import { UsersService } from './users.service.js';

/** The users field table (docs/lists.md#fields-filters-and-sorts-per-collection): filters `role`, `name`, `age` (and `role[ne|in]`, `name[prefix|contains]`, `username[prefix]`, `age[null]`, `email[null]`); sort `id`, `name`, `age`, `created_at`, `updated_at`. */
export const USERS_FIELDS = defineFields<User>()({
  alias: 'u',
  fields: {
    username: { column: 'username', operators: ['prefix'] },
    name: {
      column: 'name',
      sort: true,
      operators: ['prefix', 'contains'],
      filter: { type: 'string', description: 'Users with exactly this name.', example: 'Ada Lovelace' },
    },
    age: { column: 'age', range: 'int', sort: true, operators: ['null'], filter: { type: 'int', description: 'Users of this age.', example: 36 } },
    email: { column: 'email', operators: ['null'] },
    email_verified_at: { column: 'email_verified_at' },
    role: { column: 'role', operators: ['ne', 'in'], filter: { type: 'enum', values: ROLES, description: 'Users with this role.', example: 'admin' } },
    created_at: { column: 'created_at', range: 'timestamp', sort: true },
    updated_at: { column: 'updated_at', range: 'timestamp', sort: true },
  },
  links: [],
  search: { table: 'users', fields: ['name', 'username'] },
  order: { filters: ['role', 'name', 'age'] },
});

/** User accounts (docs/resources/users.md): `/v1/users`, scopes `users:read` and `users:write`. */
export const USERS = defineResource({
  name: 'users',
  description: 'User accounts: public registration; read and change by the user itself or an admin.',
  scopes: true,
  scopeNoun: 'user accounts',
  entities: [User],
  module: () => import('./users.module.js').then((file) => file.UsersModule),
  events: { 'user.deleted': 'an account is deleted' },
  versioned: ['User'],
  fields: USERS_FIELDS,
  listPlans: [
    {
      name: 'users (admins)',
      caller: 'admin',
      visible: '1 = 1',
      index: 'idx_users_updated_at_id',
      list: (app, query, caller) => app.get(UsersService).list(query, caller),
    },
  ],
});
