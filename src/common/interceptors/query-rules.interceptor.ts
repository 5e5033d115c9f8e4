import { type CallHandler, type ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { map, type Observable } from 'rxjs';
import { parseReadParams, rejectQuery } from '../list/list-query.js';
import { pickFields } from '../list/page.js';
import { operationQuery } from './operation-query.js';
import type { PipelineRoute, RouteInterceptor } from './route-pipeline.interceptor.js';

/**
 * The query string of every operation but lists (docs/lists.md; lists are parsed by
 * `@ListParams()`): a single-resource read (`@ReadOperation`) accepts only `fields` (and `expand`
 * where the resource declares paths; ExpandInterceptor applies them) and answers with those fields
 * (plus `id` and `links`); a protocol operation (`@ProtocolOperation`, OAuth's
 * authorize) reads its own; any other operation accepts none. Checked before the handler runs.
 * @throws 400 `bad_request` naming each unknown or invalid parameter.
 */
@Injectable()
export class QueryRulesInterceptor implements RouteInterceptor {
  /** On every route but lists (their pipe parses the query) and protocol routes. */
  appliesTo(route: PipelineRoute): boolean {
    return route.operation?.kind !== 'list' && route.operation?.kind !== 'protocol';
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const operation = operationQuery(context.getHandler());
    if (operation?.kind === 'list' || operation?.kind === 'protocol') return next.handle();
    const query = context.switchToHttp().getRequest<Request>().query as Record<string, unknown>;
    if (operation?.kind !== 'read') {
      rejectQuery(query);
      return next.handle();
    }
    const { fields } = parseReadParams(query, operation.fields, operation.expand);
    if (!fields) return next.handle();
    return next.handle().pipe(map((result: unknown) => (result && typeof result === 'object' ? pickFields(result, fields) : result)));
  }
}
