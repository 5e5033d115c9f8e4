import { type CallHandler, type ExecutionContext, Injectable } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/internal.js';
import type { Observable } from 'rxjs';
import { badRequest, notAcceptedProperty } from '../errors/api-exception.js';
import type { PipelineRoute, RouteInterceptor } from './route-pipeline.interceptor.js';

/** The parameter kinds through which a handler reads the request body: `@Body()`, or the whole request (`@Req()`, the OAuth form endpoints). */
const READS_BODY = new Set([RouteParamtypes.BODY, RouteParamtypes.REQUEST, RouteParamtypes.RAW_BODY].map(String));

/**
 * Refuses a body sent to an operation that declares none (`POST /v1/logout`), the same way every
 * other operation refuses what it does not accept (docs/wire.md#request-bodies: unknown properties → 400): 400
 * `bad_request` with one `<name> is not an accepted property` detail per property. An empty object
 * (`{}`) and no body at all pass. Attached only to the routes whose handler reads no body (from its
 * parameter decorators).
 */
@Injectable()
export class BodylessOperationInterceptor implements RouteInterceptor {
  /** Only on operations that read no body (their other routes parse and check the body they take). */
  appliesTo(route: PipelineRoute): boolean {
    return !readsBody(route.controller, route.handler);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const body: unknown = context.switchToHttp().getRequest<{ body?: unknown }>().body;
    if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
      const names = Object.keys(body);
      if (names.length > 0 && !readsBody(context.getClass(), context.getHandler())) {
        throw badRequest('this operation takes no request body', names.map(notAcceptedProperty));
      }
    }
    return next.handle();
  }
}

const bodyReaders = new WeakMap<Function, boolean>();

/** Whether `handler` of `controller` reads the request body (a `@Body()`, `@Req()` or raw-body parameter); worked out once per handler. */
function readsBody(controller: Function, handler: Function): boolean {
  let reads = bodyReaders.get(handler);
  if (reads === undefined) {
    const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handler.name) ?? {}) as Record<string, unknown>;
    reads = Object.keys(args).some((key) => READS_BODY.has(key.split(':')[0]));
    bodyReaders.set(handler, reads);
  }
  return reads;
}
