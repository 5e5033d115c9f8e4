import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/internal.js';
import type { Observable } from 'rxjs';
import { badRequest, notAcceptedProperty } from '../errors/api-exception.js';

/** The parameter kinds through which a handler reads the request body: `@Body()`, or the whole request (`@Req()`, the OAuth form endpoints). */
const READS_BODY = new Set([RouteParamtypes.BODY, RouteParamtypes.REQUEST, RouteParamtypes.RAW_BODY].map(String));

/**
 * Refuses a body sent to an operation that declares none (`POST /v1/logout`), the same way every
 * other operation refuses what it does not accept (docs/wire.md#request-bodies: unknown properties → 400): 400
 * `bad_request` with one `<name> is not an accepted property` detail per property. An empty object
 * (`{}`) and no body at all pass. Whether a handler reads the body is worked out once per handler
 * from its parameter decorators and cached.
 */
@Injectable()
export class BodylessOperationInterceptor implements NestInterceptor {
  private readonly readsBody = new WeakMap<object, boolean>();

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const body: unknown = context.switchToHttp().getRequest<{ body?: unknown }>().body;
    if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
      const names = Object.keys(body);
      if (names.length > 0 && !this.handlerReadsBody(context)) {
        throw badRequest('this operation takes no request body', names.map(notAcceptedProperty));
      }
    }
    return next.handle();
  }

  private handlerReadsBody(context: ExecutionContext): boolean {
    const handler = context.getHandler();
    let reads = this.readsBody.get(handler);
    if (reads === undefined) {
      const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, context.getClass(), handler.name) ?? {}) as Record<string, unknown>;
      reads = Object.keys(args).some((key) => READS_BODY.has(key.split(':')[0]));
      this.readsBody.set(handler, reads);
    }
    return reads;
  }
}
