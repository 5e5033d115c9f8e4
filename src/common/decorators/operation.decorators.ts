import { applyDecorators, createParamDecorator, type ExecutionContext, HttpCode, SetMetadata } from '@nestjs/common';
import { ApiExtension, ApiHeader, ApiQuery } from '@nestjs/swagger';
import { ESTIMATE_THRESHOLD } from '../list/find-page.js';
import { expandPaths, MAX_EXPAND_PATHS } from '../expand/expansion.js';
import type { Request } from 'express';
import {
  DEFAULT_PAGE_SIZE,
  MAX_CURSOR_LENGTH,
  MAX_FILTER_INT,
  MAX_IN_VALUES,
  MAX_OFFSET,
  MAX_PATTERN_LENGTH,
  MAX_SEARCH_LENGTH,
  MAX_SEARCH_TERMS,
  type OperatorSpec,
  MAX_PAGE,
  MAX_PAGE_SIZE,
  RANGE_OPERATORS,
  type ListSpec,
  type RawQuery,
} from '../list/list-query.js';
import { type ListQueryInput, ListQueryPipe } from '../list/list-query.pipe.js';
import { Idempotent } from './idempotent.decorator.js';

/** Extension set by `CreateOperation()`: the 201 response carries `Location` (removed from the output). */
export const LOCATION_EXTENSION = 'x-location';

/** Metadata key of the query grammar an operation accepts (read by the resource interceptors, interceptors/operation-query.ts). */
export const OPERATION_QUERY = 'resource-api:operation-query';

/** What an operation takes in its query string and how its result is shaped. */
export type OperationQuery =
  { kind: 'list'; spec: ListSpec } | { kind: 'read'; fields: readonly string[]; expand?: ListSpec['expand'] } | { kind: 'create' } | { kind: 'protocol' };

/**
 * The documented `sort` grammar of a list (docs/lists.md#sorting): comma-separated sortable fields, each with an
 * optional `-`, none named twice (a negative lookahead; the list parser answers 400 for a repeat).
 */
export function sortPattern(fields: string[]): string {
  const field = `(${fields.join('|')})`;
  return `^(?!(?:.*,)?-?${field}(?:,.*)?,-?\\1(?:,|$))-?${field}(,-?${field})*$`;
}

/** The shape of a cursor, for the documents (its signature is not the server's: opaque to clients). */
const CURSOR_EXAMPLE =
  'eyJmIjoiV3BuWE85LUhaVVJvSUwyZkZGeGt0RiIsImQiOiJhIiwidiI6WyIyMDI2LTExLTIxIDEwOjE1OjAwLjAwMCIsNDJdfQ.8tsv5NJQwpMZf5PNVjB1bqeL6_VCIDryJ8oJWu7q6dY';

/**
 * Marks a collection GET (docs/lists.md): the interceptor parses the list grammar of the resource's
 * field table `spec` (400 on a bad parameter) and wraps the returned `Page` in the envelope.
 * Documents every query parameter (paging, `cursor`, `sort`, filters, range filters, `fields`) and
 * the `Prefer` header.
 */
export function ListOperation(spec: ListSpec) {
  const sortValues = Object.keys(spec.sortable).flatMap((f) => [f, `-${f}`]);
  return applyDecorators(
    SetMetadata(OPERATION_QUERY, { kind: 'list', spec } satisfies OperationQuery),
    ApiQuery({
      name: 'page',
      required: false,
      description: `Page number, 1-${MAX_PAGE} (default 1). Paging style "page": not combinable with offset/limit (page or size together with offset or limit → 400). Given once; not an integer or out of range → 400.`,
      schema: { type: 'integer', format: 'int32', minimum: 1, maximum: MAX_PAGE, default: 1, example: 1 },
    }),
    ApiQuery({
      name: 'size',
      required: false,
      description: `Page size, 1-${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}). Paging style "page": not combinable with offset/limit (→ 400). Given once; not an integer or out of range → 400.`,
      schema: { type: 'integer', format: 'int32', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, example: 20 },
    }),
    ApiQuery({
      name: 'offset',
      required: false,
      description: `Items to skip, 0-${MAX_OFFSET} (default 0). Paging style "offset": not combinable with page/size (offset or limit together with page or size → 400); the envelope then also carries offset and limit. Given once; not an integer or out of range → 400.`,
      schema: { type: 'integer', format: 'int32', minimum: 0, maximum: MAX_OFFSET, example: 0 },
    }),
    ApiQuery({
      name: 'limit',
      required: false,
      description: `Items to return, 1-${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}). Paging style "offset": not combinable with page/size (→ 400). Given once; not an integer or out of range → 400.`,
      schema: { type: 'integer', format: 'int32', minimum: 1, maximum: MAX_PAGE_SIZE, example: 20 },
    }),
    ApiQuery({
      name: 'cursor',
      required: false,
      description: `Keyset paging: the \`next_cursor\` or \`prev_cursor\` of a previous page of this list, with the same sort and filters (\`size\` or \`limit\` may change). Opaque and signed: a modified cursor, or one issued for other sort or filter parameters → 400 naming \`cursor\`; together with \`page\` or \`offset\` → 400. Walking \`next_cursor\` from the first page visits every matching item exactly once, even while items are added or removed; the default count is then \`none\`.`,
      schema: { type: 'string', minLength: 1, maxLength: MAX_CURSOR_LENGTH, pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{43}$', example: CURSOR_EXAMPLE },
    }),
    ApiQuery({
      name: 'sort',
      required: false,
      description: `Comma-separated sort keys, \`-\` for descending; \`id\` is always the last tie-breaker, in the direction of the first key (\`-created_at\` → \`id\` descending). Allowed: ${sortValues.join(', ')}.${spec.search ? ' `relevance` (the search rank; `-relevance` for the best matches first) only with `q`, else 400.' : ''}`,
      schema: {
        type: 'string',
        pattern: sortPattern(Object.keys(spec.sortable)),
        example: sortValues[sortValues.length - 1] ?? 'id',
      },
    }),
    ...Object.entries(spec.filters).map(([name, filter]) =>
      ApiQuery({
        name,
        required: false,
        description: `${filter.description} Equality; repeat the parameter for "any of".`,
        schema: {
          type: 'array',
          items:
            filter.type === 'enum'
              ? { type: 'string', enum: [...(filter.values ?? [])] }
              : filter.type === 'int'
                ? { type: 'integer', format: 'int32', minimum: 0, maximum: MAX_FILTER_INT }
                : { type: 'string', minLength: 1 },
          example: [filter.example],
        },
        style: 'form',
        explode: true,
      }),
    ),
    ...Object.entries(spec.ranges ?? {}).flatMap(([name, range]) =>
      Object.entries(RANGE_OPERATORS).map(([op, sql]) =>
        ApiQuery({
          name: `${name}[${op}]`,
          required: false,
          description: `Range filter: items whose \`${name}\` is ${sql} the value (items without one never match). Given once; combinable with the other filters (all must hold). ${range.type === 'int' ? 'An integer' : 'An ISO 8601 date-time with a time zone'}; anything else → 400.`,
          schema:
            range.type === 'int'
              ? { type: 'integer', format: 'int32', minimum: -MAX_FILTER_INT - 1, maximum: MAX_FILTER_INT, example: 18 }
              : { type: 'string', format: 'date-time', example: '2026-11-21T10:15:00Z' },
        }),
      ),
    ),
    ...(spec.search
      ? [
          ApiQuery({
            name: 'q',
            required: false,
            description: `Full-text search in ${spec.search.fields.map((f) => `\`${f}\``).join(', ')}: every word must occur (whole words, case-insensitive, no stemming), \`"quoted words"\` as a phrase, \`-word\` must not occur, \`or\` between terms for alternatives. Narrows the list (never widens what the caller may read) and combines with every filter, \`fields\`, counts and cursors; \`sort=-relevance\` puts the best matches first. 1-${MAX_SEARCH_LENGTH} characters, at most ${MAX_SEARCH_TERMS} terms, at least one word (letters or digits) to look for in each alternative; given once; else 400.`,
            schema: { type: 'string', minLength: 1, maxLength: MAX_SEARCH_LENGTH, example: 'nestjs "query builder" -draft' },
          }),
        ]
      : []),
    ...Object.entries(spec.operators ?? {}).flatMap(([name, operator]) =>
      operator.ops.map((op) => operatorQuery(name, op, operator, spec.filters[name]?.example)),
    ),
    fieldsQuery(spec.selectable),
    ...expandQuery(spec.expand),
    ApiHeader({
      name: 'Prefer',
      required: false,
      description: `RFC 7240 \`count=exact\` (the default with page/offset), \`count=estimated\` (on PostgreSQL the planner's estimate when it exceeds ${ESTIMATE_THRESHOLD} items, else exact; exact on SQLite) or \`count=none\` (no \`total\`, no count query; the default with \`cursor\`). Other preferences (\`respond-async, count=none\`) and unknown values are ignored rather than refused (RFC 7240 §2); \`Preference-Applied\` says what was done.`,
      schema: { type: 'string', enum: ['count=exact', 'count=estimated', 'count=none'], example: 'count=estimated' },
    }),
  );
}

/** The documented schema of one value of `field[ne]` or `field[in]`: the equality filter's type. */
function operatorValueSchema(operator: OperatorSpec): Record<string, unknown> {
  if (operator.type === 'enum') return { type: 'string', enum: [...(operator.values ?? [])] };
  if (operator.type === 'int') return { type: 'integer', format: 'int32', minimum: 0, maximum: MAX_FILTER_INT };
  return { type: 'string', minLength: 1, maxLength: MAX_PATTERN_LENGTH };
}

/** The query parameter `name[op]` of a filter operator (docs/lists.md#filter-operators), as the list parser reads it. */
function operatorQuery(name: string, op: OperatorSpec['ops'][number], operator: OperatorSpec, example: string | number | undefined) {
  const common = 'Given once; combinable with the other filters (all must hold); a bad value → 400 naming the parameter.';
  const texts: Record<typeof op, { description: string; schema: Record<string, unknown>; style?: 'form'; explode?: boolean }> = {
    ne: {
      description: `Items whose \`${name}\` differs from the value (items without one never match). ${common}`,
      schema: { ...operatorValueSchema(operator), example: example ?? 'x' },
    },
    in: {
      description: `Items whose \`${name}\` is any of the comma-separated values (at most ${MAX_IN_VALUES}; a value cannot contain a comma: repeat the equality parameter instead). May also be repeated, the values adding up. Combinable with the other filters (all must hold); an empty entry or a bad value → 400 naming the parameter.`,
      schema: { type: 'array', items: operatorValueSchema(operator), maxItems: MAX_IN_VALUES, example: [example ?? 'x'] },
      style: 'form',
      explode: false,
    },
    null: {
      description: `\`true\`: items without a \`${name}\`; \`false\`: items with one. ${common}`,
      schema: { type: 'boolean', example: true },
    },
    prefix: {
      description: `Items whose \`${name}\` starts with the text (case-sensitive, compared by code point; 1-${MAX_PATTERN_LENGTH} characters). ${common}`,
      schema: { type: 'string', minLength: 1, maxLength: MAX_PATTERN_LENGTH, example: 'Intro' },
    },
    contains: {
      description: `Items whose \`${name}\` contains the text anywhere, case-insensitively (on SQLite for ASCII letters only); \`%\` and \`_\` are plain characters (1-${MAX_PATTERN_LENGTH} characters). ${common}`,
      schema: { type: 'string', minLength: 1, maxLength: MAX_PATTERN_LENGTH, example: 'api' },
    },
  };
  const { description, schema, style, explode } = texts[op];
  return ApiQuery({ name: `${name}[${op}]`, required: false, description, schema, ...(style && { style, explode }) });
}

/**
 * The `fields` grammar of parseFields (list-query.ts) as a pattern: one or more of the resource's
 * field names (or `id`), comma-separated, each optionally surrounded by white space.
 */
export function fieldsPattern(fields: readonly string[]): string {
  const name = `\\s*(${['id', ...fields].join('|')})\\s*`;
  return `^${name}(,${name})*$`;
}

/** The `expand` parameter of a list or read whose resource declares paths (docs/lists.md#expanding-related-resources-expand); none otherwise. */
function expandQuery(spec: ListSpec['expand']) {
  const paths = expandPaths(spec);
  if (paths.length === 0) return [];
  const path = `(${paths.map((p) => p.replace('.', '\\.')).join('|')})`;
  return [
    ApiQuery({
      name: 'expand',
      required: false,
      description:
        `Related resources to embed instead of their reference, comma-separated: ${paths.map((p) => `\`${p}\``).join(', ')} (a nested path brings its parent; at most ${MAX_EXPAND_PATHS} paths). ` +
        'Each path costs one query per page, whatever the page size; what the caller may not read stays a reference. With `fields`, only the fields it names are expanded (`comments` is such a field). An unknown path, an empty entry, too many paths or the parameter given twice → 400.',
      schema: { type: 'string', maxLength: 200, pattern: `^\\s*${path}\\s*(,\\s*${path}\\s*)*$`, example: paths.slice(0, 2).join(',') },
    }),
  ];
}

function fieldsQuery(fields: readonly string[]) {
  return ApiQuery({
    name: 'fields',
    required: false,
    description:
      `Sparse fieldset: a comma-separated list of field names; only those (plus \`id\` and \`links\`) are returned, and the 200 body is then the \`…Sparse\` schema (no property but \`id\` and \`links\` required). ` +
      `Allowed names: id, ${fields.join(', ')}. White space around a name is ignored and a repeated name counts once; an unknown name, an empty name (\`a,,b\`, a trailing comma) or the parameter given twice → 400.`,
    schema: { type: 'string', pattern: fieldsPattern(fields), example: fields.slice(0, 2).join(',') },
  });
}

/**
 * Marks a single-resource GET: accepts only `fields` (docs/lists.md#sparse-fieldsets-fields), the selectable fields of the
 * resource's field table, and applies it to the result.
 */
export function ReadOperation(table: Pick<ListSpec, 'selectable' | 'expand'>) {
  const fields = table.selectable;
  return applyDecorators(
    SetMetadata(OPERATION_QUERY, { kind: 'read', fields, ...(table.expand && { expand: table.expand }) } satisfies OperationQuery),
    fieldsQuery(fields),
    ...expandQuery(table.expand),
  );
}

/**
 * Marks a POST that creates a member (docs/writes.md#post-create): 201 and `Location` from the result's `self` link
 * (documented too); honours `Idempotency-Key` ({@link Idempotent}).
 */
export function CreateOperation() {
  return applyDecorators(
    SetMetadata(OPERATION_QUERY, { kind: 'create' } satisfies OperationQuery),
    HttpCode(201),
    ApiExtension(LOCATION_EXTENSION, true),
    Idempotent(),
  );
}

/**
 * Marks a protocol operation that reads its own query parameters and must ignore unknown ones
 * (OAuth's authorize endpoint, RFC 6749 §3.1): the interceptor does not refuse its query string.
 */
export function ProtocolOperation() {
  return SetMetadata(OPERATION_QUERY, { kind: 'protocol' } satisfies OperationQuery);
}

/** What {@link ListQueryPipe} parses: the request's query string, path and `Prefer`, and the {@link ListOperation}'s field table. */
const listQueryInput = createParamDecorator((_: unknown, ctx: ExecutionContext): ListQueryInput => {
  const req = ctx.switchToHttp().getRequest<Request>();
  const operation = Reflect.getMetadata(OPERATION_QUERY, ctx.getHandler()) as OperationQuery | undefined;
  if (operation?.kind !== 'list') throw new Error(`@ListParams() on ${ctx.getClass().name}.${ctx.getHandler().name}, which is no @ListOperation(…)`);
  return { query: req.query as RawQuery, spec: operation.spec, path: req.baseUrl + req.path, prefer: req.headers.prefer };
});

/**
 * The parameter decorator of a {@link ListOperation}'s handler: injects its `ListQuery`,
 * parsed from the request by {@link ListQueryPipe} (400 on a bad parameter, before the handler runs).
 */
export const ListParams = (): ParameterDecorator => listQueryInput(undefined, ListQueryPipe);
