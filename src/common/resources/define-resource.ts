import type { ListSpec } from '../list/list-query.js';

/** An entity class, as TypeORM's `entities` option takes it. */
export type EntityClass = new (...args: any[]) => object;

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
  /** Its TypeORM entities, registered with the DataSource (its migration is listed in `src/database/`). */
  readonly entities: readonly EntityClass[];
  /** Its field table (`defineFields`), when it has a list operation. */
  readonly fields?: ListSpec;
  /** Its access policy (who may read and change which rows), when it has one. */
  readonly policy?: unknown;
}

/** A tag of the OpenAPI document. */
export interface DocumentTag {
  name: string;
  description: string;
}

/**
 * Declares a resource (see {@link ResourceDeclaration}); returns the declaration with its literal
 * types kept (its name, its field table's row type, its policy's type), frozen.
 * @throws Error at import time for a name that is not lower-case letters, digits and `-`, or a
 *   `scopeNoun` or `readOnly` on a resource without scopes.
 */
export function defineResource<const D extends ResourceDeclaration>(declaration: D): D {
  if (!/^[a-z][a-z0-9-]*$/.test(declaration.name)) throw new Error(`resource name ${JSON.stringify(declaration.name)}: use lower-case letters, digits and -`);
  if (declaration.scopeNoun !== undefined && !declaration.scopes) throw new Error(`resource ${declaration.name}: scopeNoun without scopes`);
  if (declaration.readOnly && !declaration.scopes) throw new Error(`resource ${declaration.name}: readOnly without scopes`);
  return Object.freeze(declaration);
}

/** The names of the read-only collections among `resources` (scope `<name>:read` only). */
export function readOnlyNamesOf(resources: readonly ResourceDeclaration[]): ReadonlySet<string> {
  return new Set(resources.filter((resource) => resource.scopes && resource.readOnly).map((resource) => resource.name));
}

/** The names of the declarations in `R` that have scopes, as a union of string literals. */
export type ScopedName<R extends readonly ResourceDeclaration[]> = Extract<R[number], { readonly scopes: true }>['name'];

/**
 * The collections that have scopes, in the order of `resources`.
 * @throws Error when two declarations share a name.
 */
export function scopeResourcesOf<const R extends readonly ResourceDeclaration[]>(resources: R): ScopedName<R>[] {
  uniqueNames(resources);
  return resources.filter((resource) => resource.scopes).map((resource) => resource.name as ScopedName<R>);
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

function uniqueNames(resources: readonly ResourceDeclaration[]): void {
  const seen = new Set<string>();
  for (const { name } of resources) {
    if (seen.has(name)) throw new Error(`resource ${name} is declared twice`);
    seen.add(name);
  }
}
