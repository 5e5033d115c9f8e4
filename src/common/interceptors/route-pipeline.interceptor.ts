import type { CallHandler, ExecutionContext, NestInterceptor, Type } from '@nestjs/common';
import { from, mergeMap, type Observable, throwError } from 'rxjs';
import type { OperationQuery } from '../decorators/operation.decorators.js';
import { operationQuery } from './operation-query.js';

/** A route as the pipeline sees it at start-up: its handler, its controller and its declared operation (`@ListOperation()`, `@ReadOperation()`, …; null when none). */
export interface PipelineRoute {
  handler: Function;
  controller: Type;
  operation: OperationQuery | null;
}

/** An interceptor of the shared pipeline that says which routes need it; without `appliesTo` it runs on every route. */
export interface RouteInterceptor extends NestInterceptor {
  /** Whether `route` needs this interceptor; asked once per route, not per request. */
  appliesTo?(route: PipelineRoute): boolean;
}

/**
 * The shared pipeline as one global interceptor: for each route it runs, outermost first, only
 * the interceptors of `pipeline` whose {@link RouteInterceptor.appliesTo} takes the route —
 * worked out once per route from its metadata (for every route at start-up, by CommonModule), so a read
 * does not pass through the list envelope or `Location`, a list not through the `ETag` or the
 * query rules of a single resource. The order of `pipeline` is kept: the answer passes back
 * through them innermost first.
 */
export class RoutePipelineInterceptor implements NestInterceptor {
  private readonly routes = new WeakMap<Function, readonly NestInterceptor[]>();

  /** @param pipeline the interceptors, outermost first (CommonModule registers the list). */
  constructor(private readonly pipeline: readonly RouteInterceptor[]) {}

  /** The interceptors `handler` of `controller` runs, outermost first. */
  interceptorsOf(handler: Function, controller: Type): readonly NestInterceptor[] {
    let chain = this.routes.get(handler);
    if (chain === undefined) {
      const route: PipelineRoute = { handler, controller, operation: operationQuery(handler) };
      chain = this.pipeline.filter((interceptor) => interceptor.appliesTo?.(route) ?? true);
      this.routes.set(handler, chain);
    }
    return chain;
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const chain = this.interceptorsOf(context.getHandler(), context.getClass());
    const run = (index: number): Observable<unknown> => {
      if (index === chain.length) return next.handle();
      const answer = chain[index].intercept(context, {
        handle: () => {
          // as Nest's own chaining does: an inner interceptor's throw reaches the outer ones as an error
          try {
            return run(index + 1);
          } catch (error) {
            return throwError(() => error);
          }
        },
      });
      return answer instanceof Promise ? from(answer).pipe(mergeMap((observable: Observable<unknown>) => observable)) : answer;
    };
    return run(0);
  }
}
