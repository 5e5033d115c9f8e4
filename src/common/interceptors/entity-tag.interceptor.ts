import { type CallHandler, type ExecutionContext, Injectable } from '@nestjs/common';
import type { Response } from 'express';
import { map, type Observable } from 'rxjs';
import { Tagged } from '../writes/preconditions.js';
import { operationQuery } from './operation-query.js';
import type { PipelineRoute, RouteInterceptor } from './route-pipeline.interceptor.js';

/**
 * `ETag` of a single resource (docs/writes.md#conditional-requests-etag-if-none-match-if-match):
 * a handler's {@link Tagged} answer is sent as its `body`, with its entity tag as `ETag` — the
 * strong tag of the full representation, set before any `fields` projection (the outer
 * interceptors see the body only), so a GET or HEAD whose `If-None-Match` matches is answered 304
 * (app.setup.ts, evaluateConditionalReads). Lists and protocol operations carry none.
 */
@Injectable()
export class EntityTagInterceptor implements RouteInterceptor {
  /** On every route but lists (a page has no entity tag). */
  appliesTo(route: PipelineRoute): boolean {
    return route.operation?.kind !== 'list';
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const kind = operationQuery(context.getHandler())?.kind;
    const sendsTag = kind !== 'list' && kind !== 'protocol';
    const res = context.switchToHttp().getResponse<Response>();
    return next.handle().pipe(
      map((result: unknown) => {
        if (!(result instanceof Tagged)) return result;
        if (sendsTag && result.entityTag) res.setHeader('ETag', result.entityTag);
        return result.body as unknown;
      }),
    );
  }
}
