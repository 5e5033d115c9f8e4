import { API_KEYS } from './auth/api-keys.resource.js';
import { AUTH } from './auth/auth.resource.js';
import { SESSIONS } from './auth/sessions.resource.js';
import { ARTICLES } from './articles/articles.resource.js';
import { COMMENTS } from './comments/comments.resource.js';
import { entitiesOf } from './common/resources/define-resource.js';
import { EVENTS } from './events/events.resource.js';
import { HEALTH } from './health/health.resource.js';
import { OAUTH_CLIENTS } from './oauth/oauth-clients.resource.js';
import { OAUTH_GRANTS } from './oauth/oauth-grants.resource.js';
import { OAUTH } from './oauth/oauth.resource.js';
import { ORDERS } from './orders/orders.resource.js';
import { TAGS } from './tags/tags.resource.js';
import { TODOS } from './todos/todos.resource.js';
import { USERS } from './users/users.resource.js';
import { WEBHOOK_DELIVERIES, WEBHOOKS } from './webhooks/webhooks.resource.js';

/**
 * Every module's declaration (`src/<name>/<name>.resource.ts`), in the order the docs page shows
 * their tags and the scopes are listed. A new resource adds its declaration here and its module to
 * `src/app.module.ts`; derived from this list: the scopes (`src/auth/scopes.ts`), the document's
 * tags (`completeDocument`), the DataSource's entities (`src/database/data-source.ts`).
 *
 * Declarations import entities, field tables and policies only, never a module, controller or DTO:
 * `src/auth/scopes.ts` evaluates this list while the DTOs that name the scopes are being loaded.
 */
export const RESOURCES = [AUTH, SESSIONS, API_KEYS, OAUTH, OAUTH_CLIENTS, OAUTH_GRANTS, USERS, ARTICLES, COMMENTS, TAGS, ORDERS, TODOS, EVENTS, WEBHOOKS, WEBHOOK_DELIVERIES, HEALTH] as const;

/** Every entity of the service, for the DataSource. */
export const RESOURCE_ENTITIES = entitiesOf(RESOURCES);
