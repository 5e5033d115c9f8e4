/** Collections a scope can name (SPEC §3). */
export const SCOPE_RESOURCES = ['users', 'articles', 'comments', 'tags', 'orders', 'todos'] as const;
export type ScopeResource = (typeof SCOPE_RESOURCES)[number];

/** Every scope: `<collection>:read` and `<collection>:write`. */
export const ALL_SCOPES = SCOPE_RESOURCES.flatMap((r) => [`${r}:read`, `${r}:write`]);
export type Scope = `${ScopeResource}:${'read' | 'write'}`;
