/** Collections a scope can name (SPEC §3). */
export const SCOPE_RESOURCES = ['users', 'articles', 'comments', 'tags', 'orders', 'todos'] as const;
export type ScopeResource = (typeof SCOPE_RESOURCES)[number];

/** Every scope: `<collection>:read` and `<collection>:write`. */
export const ALL_SCOPES = SCOPE_RESOURCES.flatMap((r) => [`${r}:read`, `${r}:write`]);
export type Scope = `${ScopeResource}:${'read' | 'write'}`;

/** What a scope lets its holder do, in words for the consent page and the docs: `todos:read` → "read your todos". */
export function describeScope(scope: string): string {
  const [resource, access] = scope.split(':');
  const what = resource === 'users' ? 'user accounts' : resource;
  return access === 'write' ? `create, change and delete ${what}` : `read ${what}`;
}
