import { defineResource } from '../common/resources/define-resource.js';

/** Cookie sessions (docs/authentication.md#session-cookies); kept in the shared state store, so no entity. */
export const SESSIONS = defineResource({
  name: 'sessions',
  description: 'Cookie sessions for browsers: sign in, read and end the current session.',
  scopes: false,
  entities: [],
  module: () => import('./auth.module.js').then((file) => file.AuthModule),
});
