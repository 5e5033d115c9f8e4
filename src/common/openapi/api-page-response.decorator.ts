import { applyDecorators, type Type } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, getSchemaPath } from '@nestjs/swagger';
import { LinkDto } from './link.dto.js';

const envelopes = new Map<string, object>();

/**
 * Documents a list response as the named envelope schema `name` (e.g. `TodoList`, SPEC §8):
 * `{data: item[], page, size, total, offset?, limit?, links: Link[]}`.
 */
export function ApiPageResponse(item: Type<unknown>, name: string) {
  if (!envelopes.has(name)) {
    envelopes.set(name, {
      type: 'object',
      required: ['data', 'page', 'size', 'total', 'links'],
      properties: {
        data: { type: 'array', items: { $ref: getSchemaPath(item) } },
        page: { type: 'integer', minimum: 1, example: 1, description: 'Page number (from offset/limit: ⌊offset / limit⌋ + 1).' },
        size: { type: 'integer', minimum: 1, maximum: 100, example: 20, description: 'Page size (equals limit with offset/limit).' },
        total: { type: 'integer', minimum: 0, example: 57, description: 'Items over all pages.' },
        offset: { type: 'integer', minimum: 0, description: 'Present when the request used offset/limit.' },
        limit: { type: 'integer', minimum: 1, maximum: 100, description: 'Present when the request used offset/limit.' },
        links: { type: 'array', items: { $ref: getSchemaPath(LinkDto) }, description: 'self, first, prev, next, last.' },
      },
    });
  }
  return applyDecorators(
    ApiExtraModels(item, LinkDto),
    ApiOkResponse({ description: `A page of ${name.replace(/List$/, '')} objects.`, schema: { $ref: `#/components/schemas/${name}` } }),
  );
}

/** The envelope schemas declared by {@link ApiPageResponse}, to add to the document's components. */
export function envelopeSchemas(): Record<string, object> {
  return Object.fromEntries(envelopes);
}
