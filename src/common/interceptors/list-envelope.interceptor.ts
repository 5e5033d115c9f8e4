import { type CallHandler, type ExecutionContext, Injectable, Optional } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Request, Response } from 'express';
import { map, type Observable } from 'rxjs';
import type { Env } from '../../config/env.validation.js';
import { cursorKey } from '../list/cursor.js';
import { Page, pickFields, toEnvelope } from '../list/page.js';
import { operationQuery } from './operation-query.js';
import type { PipelineRoute, RouteInterceptor } from './route-pipeline.interceptor.js';

/**
 * The list envelope (docs/lists.md#the-envelope): a `@ListOperation`'s returned {@link Page}
 * becomes `{data, page, size, total, next_cursor, prev_cursor, links}` — paging links that repeat
 * the query, cursors signed with the key derived from LIST_CURSOR_SECRET — with the page query's
 * `fields` applied to each item; answers `Preference-Applied: count=<the count applied>` and
 * `Vary: Prefer`. Any other result passes unchanged.
 */
@Injectable()
export class ListEnvelopeInterceptor implements RouteInterceptor {
  /** Only on list operations (`@ListOperation()`). */
  appliesTo(route: PipelineRoute): boolean {
    return route.operation?.kind === 'list';
  }

  private readonly cursorKey: Buffer;

  constructor(@Optional() config?: ConfigService<Env, true>) {
    this.cursorKey = cursorKey(config?.get('LIST_CURSOR_SECRET', { infer: true }));
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http' || operationQuery(context.getHandler())?.kind !== 'list') return next.handle();
    const req = context.switchToHttp().getRequest<Request>();
    const res = context.switchToHttp().getResponse<Response>();
    return next.handle().pipe(
      map((result: unknown) => {
        if (!(result instanceof Page)) return result;
        res.setHeader('Preference-Applied', `count=${result.info.counted}`);
        const vary = res.getHeader('Vary');
        if (!/(^|,)\s*(prefer|\*)\s*(,|$)/i.test(String(vary ?? ''))) res.setHeader('Vary', vary ? `${String(vary)}, Prefer` : 'Prefer');
        const envelope = toEnvelope(result, req.baseUrl + req.path, this.cursorKey);
        const fields = result.query.fields;
        if (fields) envelope.data = envelope.data.map((item) => pickFields(item as object, fields));
        return envelope;
      }),
    );
  }
}
