/**
 * A collection a scope can name (docs/authentication.md#roles-and-scopes): the `name` of a declaration with
 * `scopes: true`. The registry handed down (`RESOURCE_REGISTRY`) lists the application's scopes
 * (`registry.scopes`, from `scopesOf` in src/common/resources/define-resource.ts) and describes
 * them (`registry.describeScope`).
 */
export type ScopeResource = string;

/** A scope: `<collection>:read` or `<collection>:write`. */
export type Scope = `${ScopeResource}:${'read' | 'write'}`;
