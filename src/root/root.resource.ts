import { defineResource } from '../common/resources/define-resource.js';

/** The root, `GET /` (docs/versioning.md#the-root): public and unversioned; no entity. */
export const ROOT = defineResource({
  name: 'root',
  description: 'Where everything is: the API versions with their deprecation and sunset, the documents, health and metrics. Public, unversioned.',
  scopes: false,
  entities: [],
  module: () => import('./root.module.js').then((file) => file.RootModule),
});
