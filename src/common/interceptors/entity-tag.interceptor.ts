import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import type { Response } from 'express';
import { map, type Observable } from 'rxjs';
import { responseEntityTag } from '../writes/preconditions.js';
import { operationQuery } from './operation-query.js';

/**
 * `ETag` of a single resource (docs/writes.md#conditional-requests-etag-if-none-match-if-match):
 * an answer its mapper tagged with the row's version gets the strong entity tag of the full
 * representation (before any `fields` projection), so a GET or HEAD whose `If-None-Match` matches
 * is answered 304 (app.setup.ts, evaluateConditionalReads). Lists and protocol operations carry none.
 */
@Injectable()
export class EntityTagInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const kind = operationQuery(context.getHandler())?.kind;
    if (kind === 'list' || kind === 'protocol') return next.handle();
    const res = context.switchToHttp().getResponse<Response>();
    return next.handle().pipe(
      map((result: unknown) => {
        const tag = responseEntityTag(result);
        if (tag) res.setHeader('ETag', tag);
        return result;
      }),
    );
  }
}
