import { Inject, Injectable, Optional, type PipeTransform } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Env } from '../../config/env.validation.js';
import { cursorKey } from './cursor.js';
import { type ListQuery, type ListSpec, parseListQuery, type RawQuery } from './list-query.js';
import { RESOURCE_REGISTRY, type ResourceRegistry } from '../resources/resource-registry.js';

/** What a list operation's query is parsed from: the request's query string, `Prefer` and path, and the operation's field table. */
export interface ListQueryInput {
  query: RawQuery;
  spec: ListSpec;
  /** The collection path (`/v1/todos`): a cursor is bound to it. */
  path: string;
  /** The request's `Prefer` header(s) (RFC 7240): `count=exact|estimated|none`. */
  prefer?: string | string[];
}

/**
 * Parses a list operation's query string by the list grammar of its field table
 * (docs/lists.md): paging (`page`/`size`, `offset`/`limit` or `cursor`, cursors checked with the key
 * derived from LIST_CURSOR_SECRET and bound to the collection path), `sort`, filters, range filters,
 * `fields`, and `Prefer: count=…`; an enum filter naming a registered list (the event log's `type`)
 * takes the registry's values (ResourceRegistry.listSpec). Takes a {@link ListQueryInput}, returns the {@link ListQuery} the
 * handler receives through `@ListParams()`.
 * @throws 400 `bad_request` naming every bad parameter in `details`.
 */
@Injectable()
export class ListQueryPipe implements PipeTransform<ListQueryInput, ListQuery> {
  private readonly key: Buffer;

  constructor(
    @Optional() config?: ConfigService<Env, true>,
    @Optional() @Inject(RESOURCE_REGISTRY) private readonly registry?: ResourceRegistry,
  ) {
    this.key = cursorKey(config?.get('LIST_CURSOR_SECRET', { infer: true }));
  }

  transform(input: ListQueryInput): ListQuery {
    const spec = this.registry ? this.registry.listSpec(input.spec) : input.spec;
    return parseListQuery(input.query, spec, { key: this.key, path: input.path, prefer: input.prefer });
  }
}
