import { defineFields } from '../common/list/field-table.js';
import { defineResource } from '../common/resources/define-resource.js';
import { OAuthClient } from './oauth-client.entity.js';
import { OAuthClientsService } from './oauth-clients.service.js';

/** The OAuth client field table: sort `id`, `name`, `created_at`, `updated_at`; no filters. */
export const OAUTH_CLIENTS_FIELDS = defineFields<OAuthClient>()({
  alias: 'c',
  fields: {
    client_id: { column: 'client_id' },
    name: { column: 'name', sort: true },
    redirect_uris: { column: 'redirect_uris' },
    scopes: { column: 'scopes' },
    confidential: { column: 'confidential' },
    created_at: { column: 'created_at', range: 'timestamp', sort: true },
    updated_at: { column: 'updated_at', range: 'timestamp', sort: true },
  },
  links: [],
});

/** The OAuth client registry (admins only): `/v1/oauth-clients`. */
export const OAUTH_CLIENTS = defineResource({
  name: 'oauth-clients',
  description: 'Third-party applications registered for OAuth (admins only).',
  scopes: false,
  entities: [OAuthClient],
  module: () => import('./oauth.module.js').then((file) => file.OAuthModule),
  fields: OAUTH_CLIENTS_FIELDS,
  listPlans: [
    {
      name: 'OAuth clients (admins)',
      caller: 'admin',
      visible: '1 = 1',
      index: 'idx_oauth_clients_updated_at_id',
      list: (app, query) => app.get(OAuthClientsService).list(query),
    },
  ],
});
