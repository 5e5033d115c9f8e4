import { defineFields } from '../common/list/field-table.js';
import { defineResource } from '../common/resources/define-resource.js';
import { Login } from './login.entity.js';

/**
 * The login field table (docs/authentication.md#your-logins): sort `id`, `created_at`; no filters.
 * `kind` and `handle` are always read (the service marks the caller's own login and checks
 * sessions in the store); `handle` is never a field. `current` is the service's.
 */
export const LOGINS_FIELDS = defineFields<Login>()({
  alias: 'l',
  fields: {
    kind: { column: 'kind' },
    current: { column: null },
    address: { column: 'address' },
    user_agent: { column: 'user_agent' },
    created_at: { column: 'created_at', range: 'timestamp', sort: true },
    last_used_at: { column: 'last_used_at' },
  },
  links: ['kind', 'handle'],
});

/** The caller's logins (docs/authentication.md#your-logins): `/v1/logins`. No scopes: API keys and OAuth clients cannot manage logins. */
export const LOGINS = defineResource({
  name: 'logins',
  description: 'The caller’s logins — token logins and cookie sessions — with where and when they were used, and their ending (bearer token or session only).',
  scopes: false,
  entities: [Login],
  module: () => import('./auth.module.js').then((file) => file.AuthModule),
  fields: LOGINS_FIELDS,
});
