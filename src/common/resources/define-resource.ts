import type { INestApplicationContext, Type } from '@nestjs/common';
import type { DataSource, MigrationInterface } from 'typeorm';
import type { ListQuery, ListSpec } from '../list/list-query.js';

/** An entity class, as TypeORM's `entities` option takes it. */
export type EntityClass = new (...args: any[]) => object;

/** A migration class, as TypeORM's `migrations` option takes it; its name ends in its 13-digit timestamp. */
export type MigrationClass = new (...args: any[]) => MigrationInterface;

/**
 * A change-sync case of the list query-plan test (test/query-plans.e2e-spec.ts): the list, read
 * with `updated_at[gt]=T&sort=updated_at` on a cursor deep in a seeded table, must be one range of
 * `index`.
 */
export interface ListPlan {
  /** How the case is named in the test: `todos as their owner`. */
  readonly name: string;
  /** Who lists: `user`, the test's ordinary user (who owns rows), or `admin`. */
  readonly caller: 'user' | 'admin';
  /**
   * The rows the caller sees, as SQL on the field table's alias: `:caller` stands for the caller's
   * id, `:parent` for the parent's (a nested list); `1 = 1` for all.
   */
  readonly visible: string;
  /** The index whose range the plan must read. */
  readonly index: string;
  /** Lists through the service: `app.get(ThingsService).list(query, caller)` (`parent`: the parent's id of a nested list). */
  readonly list: (
    app: INestApplicationContext,
    query: ListQuery,
    caller: { id: number; role: 'user' | 'admin' },
    parent: number,
  ) => Promise<{ items: Array<{ id: number }> }>;
}

/**
 * What a declaration's service-tier hook builds its service from (test/services/services.ts): no Nest, no HTTP.
 * A module above the kernel adds what it provides by declaration merging, so that common/ names no module above
 * it: events/ adds `outbox`, the EventOutbox every service appends its events to (src/events/event-outbox.ts).
 */
export interface ServiceTier {
  readonly dataSource: DataSource;
  /** The service another declaration's hook builds (built once, on first use): `tier.service<TagsService>('tags')`. */
  service<T>(name: string): T;
}

/**
 * What a module serving operations declares about itself, once, in its folder
 * (`src/<name>/<name>.resource.ts`); `src/resources.ts` lists the declarations and everything
 * below is derived from that list.
 */
export interface ResourceDeclaration {
  /**
   * The collection name (`todos`, `api-keys`): the OpenAPI tag of its operations and, with
   * `scopes`, the prefix of its scopes. Lower-case letters, digits and `-`.
   */
  readonly name: string;
  /** The tag's description on the docs page (one sentence: who sees and changes what). */
  readonly description: string;
  /**
   * Whether scoped credentials (API keys, OAuth access tokens) can be granted `<name>:read` and
   * `<name>:write` for its operations (docs/authentication.md#roles-and-scopes); its controllers then carry `@ScopedResource(name)`.
   */
  readonly scopes: boolean;
  /**
   * With `scopes`: the collection is read-only, so only `<name>:read` exists (no `<name>:write`).
   */
  readonly readOnly?: boolean;
  /** What the scope descriptions call the collection ("read user accounts"); default: the name. */
  readonly scopeNoun?: string;
  /** Its TypeORM entities, registered with the DataSource. */
  readonly entities: readonly EntityClass[];
  /**
   * Its migrations (files in `src/database/migrations/`, where the drift test finds them), run with the others in
   * the order of their timestamps. The migrations that shaped several resources at once before
   * declarations carried theirs are the database's own (`SHARED_MIGRATIONS`, src/database/data-source.ts).
   */
  readonly migrations?: readonly MigrationClass[];
  /**
   * Its Nest module, loaded when the application is assembled:
   * `() => import('./things.module.js').then((file) => file.ThingsModule)`. Loaded, not imported,
   * because the module's controllers import this file's field table. Declarations served by one
   * module (`auth`, `sessions`, `api-keys`) each name it; it is imported once.
   */
  readonly module: () => Promise<Type>;
  /**
   * Its event types, `<singular>.<verb>` → when it is appended (docs/events.md#event-types has the
   * table): what the event log's `type` filter and webhook subscriptions accept.
   */
  readonly events?: Readonly<Record<string, string>>;
  /**
   * The names of its response schemas whose representations carry an `ETag` (the row version,
   * src/common/writes/preconditions.ts): the documents give their reads `If-None-Match` and 304,
   * their PUT, PATCH and DELETE `If-Match`, 412 and 428. A v2 schema is named as the generator
   * names it (`ArticleV2`) and as the v2 document does (`Article`).
   */
  readonly versioned?: readonly string[];
  /** Its field table (`defineFields`), when it has a list operation. */
  readonly fields?: ListSpec;
  /** Its change-sync cases of the list query-plan test, when its list has an `(…, updated_at, id)` index. */
  readonly listPlans?: readonly ListPlan[];
  /** Builds its service for the service-tier tests (test/services/), when they test it. */
  readonly serviceTier?: (tier: ServiceTier) => unknown;
}

/** A tag of the OpenAPI document. */
export interface DocumentTag {
  name: string;
  description: string;
}

/**
 * Declares a resource (see {@link ResourceDeclaration}); returns the declaration with its literal
 * types kept (its name, its field table's row type, its hooks' services), frozen.
 * @throws Error at import time for a name that is not lower-case letters, digits and `-`, a
 *   `scopeNoun` or `readOnly` on a resource without scopes, or an event type that is not
 *   `<lower-case word>.<lower-case word>`.
 */
export function defineResource<const D extends ResourceDeclaration>(declaration: D): D {
  if (!/^[a-z][a-z0-9-]*$/.test(declaration.name)) throw new Error(`resource name ${JSON.stringify(declaration.name)}: use lower-case letters, digits and -`);
  if (declaration.scopeNoun !== undefined && !declaration.scopes) throw new Error(`resource ${declaration.name}: scopeNoun without scopes`);
  if (declaration.readOnly && !declaration.scopes) throw new Error(`resource ${declaration.name}: readOnly without scopes`);
  // lower-case letters and one dot: webhook fan-out matches them without escaping (webhook-fanout.ts)
  for (const type of Object.keys(declaration.events ?? {})) {
    if (!/^[a-z]+\.[a-z]+$/.test(type))
      throw new Error(`resource ${declaration.name}: event type ${JSON.stringify(type)}: use <word>.<word>, lower-case letters`);
  }
  return Object.freeze(declaration);
}

/** The names of the read-only collections among `resources` (scope `<name>:read` only). */
export function readOnlyNamesOf(resources: readonly ResourceDeclaration[]): ReadonlySet<string> {
  return new Set(resources.filter((resource) => resource.scopes && resource.readOnly).map((resource) => resource.name));
}

/**
 * The collections that have scopes, in the order of `resources`.
 * @throws Error when two declarations share a name.
 */
export function scopeResourcesOf(resources: readonly ResourceDeclaration[]): string[] {
  uniqueNames(resources);
  return resources.filter((resource) => resource.scopes).map((resource) => resource.name);
}

/** Every scope of `resources`: `<collection>:read` and `<collection>:write` (only `:read` for a read-only collection such as `events`), in declaration order. */
export function scopesOf(resources: readonly ResourceDeclaration[]): string[] {
  const readOnly = readOnlyNamesOf(resources);
  return scopeResourcesOf(resources).flatMap((name) => (readOnly.has(name) ? [`${name}:read`] : [`${name}:read`, `${name}:write`]));
}

/**
 * What a scope lets its holder do, in words for the consent page and the docs: `todos:read` →
 * "read todos"; the collection is named by its declaration's `scopeNoun` (`users` → "user accounts").
 */
export function describeScope(scope: string, resources: readonly ResourceDeclaration[]): string {
  const [resource, access] = scope.split(':');
  const what = resources.find((declaration) => declaration.name === resource)?.scopeNoun ?? resource;
  return access === 'write' ? `create, change and delete ${what}` : `read ${what}`;
}

/** The document's tags, one per declaration in the order of `resources` (the docs page shows them so). */
export function tagsOf(resources: readonly ResourceDeclaration[]): DocumentTag[] {
  uniqueNames(resources);
  return resources.map(({ name, description }) => ({ name, description }));
}

/** Every entity of `resources`, each once, in declaration order. */
export function entitiesOf(resources: readonly ResourceDeclaration[]): EntityClass[] {
  return [...new Set(resources.flatMap((resource) => resource.entities))];
}

/**
 * Every event type of `resources`, in declaration order: those of the declarations named in
 * `first` come first, in that order (the order the published documents list them in).
 * @throws Error when two declarations list the same type.
 */
export function eventTypesOf(resources: readonly ResourceDeclaration[], first: readonly string[] = []): string[] {
  const types = inOrder(resources, first).flatMap((resource) => Object.keys(resource.events ?? {}));
  const repeated = types.find((type, index) => types.indexOf(type) !== index);
  if (repeated) throw new Error(`event type ${repeated} is declared twice`);
  return types;
}

/** The response schemas of `resources` that carry an `ETag` (see {@link ResourceDeclaration.versioned}). */
export function versionedSchemasOf(resources: readonly ResourceDeclaration[]): ReadonlySet<string> {
  return new Set(resources.flatMap((resource) => resource.versioned ?? []));
}

/** Every migration of `resources` and `shared`, each once, in the order of their timestamps (the last 13 digits of the class name). */
export function migrationsOf(resources: readonly ResourceDeclaration[], shared: readonly MigrationClass[] = []): MigrationClass[] {
  const timestamp = (migration: MigrationClass) => migration.name.slice(-13);
  return [...new Set([...shared, ...resources.flatMap((resource) => resource.migrations ?? [])])].sort((a, b) => timestamp(a).localeCompare(timestamp(b)));
}

/** `resources` with those named in `first` moved to the front, in that order; the others keep theirs. */
export function inOrder<R extends ResourceDeclaration>(resources: readonly R[], first: readonly string[]): R[] {
  const named = first.flatMap((name) => resources.filter((resource) => resource.name === name));
  return [...named, ...resources.filter((resource) => !named.includes(resource))];
}

function uniqueNames(resources: readonly ResourceDeclaration[]): void {
  const seen = new Set<string>();
  for (const { name } of resources) {
    if (seen.has(name)) throw new Error(`resource ${name} is declared twice`);
    seen.add(name);
  }
}
