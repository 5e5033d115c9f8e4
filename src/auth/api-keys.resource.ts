import { defineFields } from '../common/list/field-table.js';
import { defineResource } from '../common/resources/define-resource.js';
import { ApiKey } from './api-key.entity.js';

/** The API-key field table: sort `id`, `name`, `created_at`; no filters. */
export const API_KEYS_FIELDS = defineFields<ApiKey>()({
  alias: 'k',
  fields: {
    name: { column: 'name', sort: true },
    prefix: { column: 'prefix' },
    scopes: { column: 'scopes' },
    expires_at: { column: 'expires_at', range: 'timestamp' },
    last_used_at: { column: 'last_used_at', range: 'timestamp' },
    created_at: { column: 'created_at', range: 'timestamp', sort: true },
  },
  links: [],
});

/** The caller's API keys (docs/authentication.md#api-keys): `/v1/api-keys`. No scopes: keys cannot manage keys. */
export const API_KEYS = defineResource({
  name: 'api-keys',
  description: 'The caller’s scoped, rate-limited API keys (bearer token or session only).',
  scopes: false,
  entities: [ApiKey],
  module: () => import('./auth.module.js').then((file) => file.AuthModule),
  fields: API_KEYS_FIELDS,
});
