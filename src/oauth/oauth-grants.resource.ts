import { defineFields } from '../common/list/field-table.js';
import { defineResource } from '../common/resources/define-resource.js';
import { OAuthGrant } from './oauth-grant.entity.js';

/**
 * The OAuth grant field table: sort `id`, `created_at`, `last_used_at`; no filters. `client_id`
 * and `client_name` read the client's row id, the service looks the client up.
 */
export const OAUTH_GRANTS_FIELDS = defineFields<OAuthGrant>()({
  alias: 'g',
  fields: {
    client_id: { column: 'oauth_client_id' },
    client_name: { column: 'oauth_client_id' },
    scopes: { column: 'scopes' },
    created_at: { column: 'created_at', range: 'timestamp', sort: true },
    last_used_at: { column: 'last_used_at', range: 'timestamp', sort: true },
  },
  links: [],
});

/** The access the caller granted OAuth clients: `/v1/oauth-grants`. */
export const OAUTH_GRANTS = defineResource({
  name: 'oauth-grants',
  description: 'The access the caller granted OAuth clients, and its revocation.',
  scopes: false,
  entities: [OAuthGrant],
  module: () => import('./oauth.module.js').then((file) => file.OAuthModule),
  fields: OAUTH_GRANTS_FIELDS,
});
