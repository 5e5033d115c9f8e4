import { type CallHandler, type ExecutionContext, Injectable } from '@nestjs/common';
import type { Response } from 'express';
import { map, type Observable } from 'rxjs';
import type { Link } from '../list/page.js';
import { operationQuery } from './operation-query.js';
import type { PipelineRoute, RouteInterceptor } from './route-pipeline.interceptor.js';

/**
 * `Location` of a create (docs/writes.md#post-create): a `@CreateOperation`'s answer gets the
 * created resource's `self` link — written by its mapper in the version that serves the request.
 */
@Injectable()
export class LocationInterceptor implements RouteInterceptor {
  /** Only on create operations (`@CreateOperation()`). */
  appliesTo(route: PipelineRoute): boolean {
    return route.operation?.kind === 'create';
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http' || operationQuery(context.getHandler())?.kind !== 'create') return next.handle();
    const res = context.switchToHttp().getResponse<Response>();
    return next.handle().pipe(
      map((result: unknown) => {
        const self = (result as { links?: Link[] } | null)?.links?.find((link) => link.rel === 'self');
        if (self) res.setHeader('Location', self.href);
        return result;
      }),
    );
  }
}
