import { type CallHandler, type ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import type { Observable } from 'rxjs';
import { withRequestContext } from '../../context/request-context.js';
import { versionOfPath } from '../versioning/api-versions.js';
import { operationQuery } from './operation-query.js';
import type { PipelineRoute, RouteInterceptor } from './route-pipeline.interceptor.js';

/**
 * Runs the handler — and everything it awaits — with the API version it is served as in the
 * request context (src/context/request-context.ts, `apiVersion`: `/v2/…` however the version was
 * chosen — path, Accept or subdomain — so the mappers write `links`, and with them `Location`, into
 * that version the first time; docs/versioning.md). The innermost of the resource interceptors.
 * Protocol operations and unversioned paths run as they are.
 */
@Injectable()
export class RequestScopeInterceptor implements RouteInterceptor {
  /** On every route but the protocol ones (unversioned). */
  appliesTo(route: PipelineRoute): boolean {
    return route.operation?.kind !== 'protocol';
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http' || operationQuery(context.getHandler())?.kind === 'protocol') return next.handle();
    const req = context.switchToHttp().getRequest<Request>();
    const version = versionOfPath(req.baseUrl + req.path);
    if (version === undefined) return next.handle();
    return withRequestContext({ apiVersion: version }, () => next.handle());
  }
}
