import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { DataSourceOptions } from 'typeorm';
import { Article, ArticleTag } from '../articles/article.entity.js';
import { ApiKey } from '../auth/api-key.entity.js';
import { RefreshToken } from '../auth/refresh-token.entity.js';
import { Session } from '../auth/session.entity.js';
import { Comment } from '../comments/comment.entity.js';
import { OAuthAuthorizationCode } from '../oauth/oauth-authorization-code.entity.js';
import { OAuthClient } from '../oauth/oauth-client.entity.js';
import { OAuthGrant } from '../oauth/oauth-grant.entity.js';
import { OAuthRefreshToken } from '../oauth/oauth-refresh-token.entity.js';
import { Order, OrderItem } from '../orders/order.entity.js';
import { Tag } from '../tags/tag.entity.js';
import { Todo } from '../todos/todo.entity.js';
import { User } from '../users/user.entity.js';
import { InitialSchema1763700000000 } from './migrations/1763700000000-initial-schema.js';
import { ArticlesCommentsTagsOrders1763800000000 } from './migrations/1763800000000-articles-comments-tags-orders.js';
import { ApiKeysSessions1763900000000 } from './migrations/1763900000000-api-keys-sessions.js';
import { OAuth1764000000000 } from './migrations/1764000000000-oauth.js';

/** Every entity of the service; a new resource adds its entity here. */
export const ENTITIES = [User, Todo, RefreshToken, Tag, Article, ArticleTag, Comment, Order, OrderItem, ApiKey, Session, OAuthClient, OAuthAuthorizationCode, OAuthGrant, OAuthRefreshToken];

/** Every migration, in order; a new resource adds its migration here. */
export const MIGRATIONS = [InitialSchema1763700000000, ArticlesCommentsTagsOrders1763800000000, ApiKeysSessions1763900000000, OAuth1764000000000];

/**
 * TypeORM options for a `DATABASE_URL` (SPEC §10): `postgres://…` → PostgreSQL with a pool of
 * `poolSize` connections; `sqlite:<path>` → a better-sqlite3 file (its folder is created) in WAL
 * mode. Migrations run on initialisation; `synchronize` is never on.
 */
export function buildDataSourceOptions(databaseUrl: string, poolSize = 10): DataSourceOptions {
  const common = { entities: ENTITIES, migrations: MIGRATIONS, migrationsRun: true, synchronize: false, logging: false } as const;
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    return { ...common, type: 'postgres', url: databaseUrl, poolSize, extra: { max: poolSize } };
  }
  const file = databaseUrl.replace(/^sqlite:/, '');
  if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  return {
    ...common,
    type: 'better-sqlite3',
    database: file,
    enableWAL: true,
    prepareDatabase: (db: { pragma: (sql: string) => unknown }) => {
      db.pragma('busy_timeout = 5000');
      db.pragma('synchronous = NORMAL');
    },
  };
}
