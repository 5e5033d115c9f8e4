import { readOnlyNamesOf, type ResourceDeclaration, scopeResourcesOf, type ScopedName } from '../common/resources/define-resource.js';
import { RESOURCES } from '../resources.js';

const READ_ONLY = readOnlyNamesOf(RESOURCES);

/** Collections a scope can name (docs/authentication.md#roles-and-scopes): the declarations with `scopes: true` (src/resources.ts). */
export const SCOPE_RESOURCES = scopeResourcesOf(RESOURCES);
export type ScopeResource = ScopedName<typeof RESOURCES>;

/** Every scope: `<collection>:read` and `<collection>:write` (only `:read` for a read-only collection such as `events`). */
export const ALL_SCOPES = SCOPE_RESOURCES.flatMap((r) => (READ_ONLY.has(r) ? [`${r}:read`] : [`${r}:read`, `${r}:write`]));
export type Scope = `${ScopeResource}:${'read' | 'write'}`;

/**
 * What a scope lets its holder do, in words for the consent page and the docs: `todos:read` →
 * "read todos"; the collection is named by its declaration's `scopeNoun` (`users` → "user accounts").
 */
export function describeScope(scope: string): string {
  const [resource, access] = scope.split(':');
  const what = (RESOURCES as readonly ResourceDeclaration[]).find((declaration) => declaration.name === resource)?.scopeNoun ?? resource;
  return access === 'write' ? `create, change and delete ${what}` : `read ${what}`;
}
