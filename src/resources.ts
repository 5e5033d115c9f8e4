import { API_KEYS } from './auth/api-keys.resource.js';
import { LOGINS } from './auth/logins.resource.js';
import { AUTH } from './auth/auth.resource.js';
import { SESSIONS } from './auth/sessions.resource.js';
import { ARTICLES } from './articles/articles.resource.js';
import { COMMENTS } from './comments/comments.resource.js';
import { type RegistryOrder, ResourceRegistry } from './common/resources/resource-registry.js';
import { EVENTS } from './events/events.resource.js';
import { HEALTH } from './health/health.resource.js';
import { OAUTH_CLIENTS } from './oauth/oauth-clients.resource.js';
import { OAUTH_GRANTS } from './oauth/oauth-grants.resource.js';
import { OAUTH } from './oauth/oauth.resource.js';
import { ORDERS } from './orders/orders.resource.js';
import { ROOT } from './root/root.resource.js';
import { TAGS } from './tags/tags.resource.js';
import { TODOS } from './todos/todos.resource.js';
import { USERS } from './users/users.resource.js';
import { WEBHOOK_DELIVERIES, WEBHOOKS } from './webhooks/webhooks.resource.js';

/**
 * Every declaration (`src/<name>/<name>.resource.ts`), in the order the docs page shows their tags
 * and the scopes are listed. A new resource adds its declaration here, and that is all outside its
 * folder (docs/extending.md): `AppModule.forRoot` imports the declarations' modules and hands the
 * {@link RESOURCE_REGISTRY} down, from which come the scopes, the event types, the document's tags
 * and conditional requests, the DataSource's entities and migrations, and the test lists.
 */
export const RESOURCES = [
  AUTH,
  SESSIONS,
  API_KEYS,
  LOGINS,
  OAUTH,
  OAUTH_CLIENTS,
  OAUTH_GRANTS,
  USERS,
  ARTICLES,
  COMMENTS,
  TAGS,
  ORDERS,
  TODOS,
  EVENTS,
  WEBHOOKS,
  WEBHOOK_DELIVERIES,
  HEALTH,
  ROOT,
] as const;

/**
 * The orders the published documents fixed besides {@link RESOURCES}' (declaration names; a new
 * resource comes after these in each): the modules' (the order of the documents' paths), their
 * loading's (the order of the `…List` schemas), the event types' (the order of their `type` enums).
 */
export const RESOURCE_ORDER: RegistryOrder = {
  modules: ['health', 'auth', 'users', 'todos', 'tags', 'articles', 'comments', 'orders', 'oauth', 'events', 'webhooks'],
  loading: ['articles', 'auth', 'comments', 'events', 'health', 'oauth', 'orders', 'tags', 'todos', 'users', 'webhooks'],
  events: ['todos', 'articles', 'comments', 'orders', 'users'],
};

/** The service's registry: {@link RESOURCES} in {@link RESOURCE_ORDER}. A test adds a resource with `REGISTRY.with(THINGS)`. */
export const REGISTRY = new ResourceRegistry(RESOURCES, RESOURCE_ORDER);
