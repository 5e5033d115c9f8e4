const named = new Map<string, object>();

/**
 * Declares a component schema written by hand — one no DTO class describes, such as the OAuth
 * form bodies or a union of two error bodies — under `name` (README.md#api-documentation-and-clients: schemas are named
 * components). Returns the `$ref` to use in a decorator; docs.ts adds the schema to the document.
 */
export function namedSchema(name: string, schema: object): { $ref: string } {
  named.set(name, schema);
  return { $ref: `#/components/schemas/${name}` };
}

/** The schemas declared with {@link namedSchema}, to add to the document's components. */
export function namedSchemas(): Record<string, object> {
  return Object.fromEntries(named);
}
