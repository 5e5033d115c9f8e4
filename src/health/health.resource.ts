import { defineResource } from '../common/resources/define-resource.js';

/** Liveness and readiness (docs/operations.md#health): public and unversioned; no entity. */
export const HEALTH = defineResource({
  name: 'health',
  description: 'Liveness and readiness for load balancers and orchestrators: public, unversioned, not rate-limited.',
  scopes: false,
  entities: [],
  module: () => import('./health.module.js').then((file) => file.HealthModule),
});
