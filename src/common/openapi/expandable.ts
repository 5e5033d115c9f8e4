import { ApiProperty } from '@nestjs/swagger';

const ref = (schema: string) => ({ $ref: `#/components/schemas/${schema}` });

/**
 * Documents a reference field that `expand` can embed (docs/lists.md#expanding-related-resources-expand):
 * "id, or the object when expanded" — `oneOf` an integer id and the schema named `schema`
 * (`UserSummary`, `Article`, `ArticleV2`: component names, so that schemas referring to each
 * other need no import cycle; each version's document renames `…V2`), so a typed client sees both.
 */
export function ExpandableReference(schema: string, options: { description: string; example: number }) {
  return ApiProperty({
    readOnly: true,
    description: `${options.description} The id, or the object when expanded (\`expand\`).`,
    oneOf: [{ type: 'integer', example: options.example }, ref(schema)],
    example: options.example,
  });
}

/**
 * Documents a list of names that `expand` can replace by objects (an article's `tags`): each item
 * the name, or the object (schema `schema`) when expanded.
 */
export function ExpandableNames(schema: string, options: { description: string; example: string[] }) {
  return ApiProperty({
    description: `${options.description} The names, or the objects when expanded (\`expand\`).`,
    type: 'array',
    items: { oneOf: [{ type: 'string' }, ref(schema)] },
    example: options.example,
  });
}
