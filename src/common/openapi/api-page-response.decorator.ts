import { applyDecorators, type Type } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, getSchemaPath } from '@nestjs/swagger';
import { LinkDto } from './link.dto.js';

const envelopes = new Map<string, object>();

/**
 * Documents a list response as the named envelope schema `name` (e.g. `TodoList`, README.md#api-documentation-and-clients):
 * `{data: item[], page?, size, total?, offset?, limit?, next_cursor?, prev_cursor?, links: Link[]}`,
 * with the `Preference-Applied` header.
 */
export function ApiPageResponse(item: Type<unknown>, name: string) {
  if (!envelopes.has(name)) {
    envelopes.set(name, {
      type: 'object',
      required: ['data', 'size', 'links'],
      properties: {
        data: { type: 'array', items: { $ref: getSchemaPath(item) } },
        page: { type: 'integer', minimum: 1, example: 1, description: 'Page number (from offset/limit: ⌊offset / limit⌋ + 1). Absent on cursor pages.' },
        size: { type: 'integer', minimum: 1, maximum: 100, example: 20, description: 'Page size (equals limit with offset/limit).' },
        total: {
          type: 'integer',
          minimum: 0,
          example: 57,
          description: 'Items over all pages, as `Preference-Applied` says: exact, the PostgreSQL planner’s estimate (`count=estimated`), or absent (`count=none`, the default with `cursor`).',
        },
        offset: { type: 'integer', minimum: 0, description: 'Present when the request used offset/limit.' },
        limit: { type: 'integer', minimum: 1, maximum: 100, description: 'Present when the request used offset/limit.' },
        next_cursor: { type: 'string', maxLength: 4200, description: 'Opaque cursor of the next page (pass as `cursor` with the same sort and filters); present when more items follow.' },
        prev_cursor: { type: 'string', maxLength: 4200, description: 'Opaque cursor of the previous page; present when items precede this page.' },
        links: {
          type: 'array',
          items: { $ref: getSchemaPath(LinkDto) },
          description: 'self, first, prev, next, last (`last` only when `total` is known; cursor pages: self, first, prev, next, their `prev`/`next` carrying the cursors).',
        },
      },
    });
  }
  return applyDecorators(
    ApiExtraModels(item, LinkDto),
    ApiOkResponse({
      description: `A page of ${name.replace(/List$/, '')} objects.`,
      schema: { $ref: `#/components/schemas/${name}` },
      headers: {
        'Preference-Applied': {
          description: 'How `total` was computed (RFC 7240): `count=exact`, `count=estimated` or `count=none` (then no `total`).',
          required: true,
          schema: { type: 'string', enum: ['count=exact', 'count=estimated', 'count=none'], example: 'count=exact' },
        },
      },
    }),
  );
}

/** The envelope schemas declared by {@link ApiPageResponse}, to add to the document's components. */
export function envelopeSchemas(): Record<string, object> {
  return Object.fromEntries(envelopes);
}
