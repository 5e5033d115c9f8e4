import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor, Optional } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Request } from 'express';
import type { Observable } from 'rxjs';
import type { Env } from '../../config/env.validation.js';
import { type RequestContext, withRequestContext } from '../context/request-context.js';
import { versionOfPath } from '../versioning/api-versions.js';
import { parseEntityTags } from '../writes/preconditions.js';
import { operationQuery } from './operation-query.js';

/** Methods whose resource writes evaluate `If-Match` (RFC 9110 §13.1.1). */
const CONDITIONAL_WRITES = new Set(['PUT', 'PATCH', 'DELETE']);

/**
 * Runs the handler — and everything it awaits — with the request's scope in the request context
 * (src/common/context/request-context.ts): the API version it is served as (`apiVersion`: `/v2/…`
 * however the version was chosen — path, Accept or subdomain — so the mappers write `links`, and
 * with them `Location`, into that version the first time; docs/versioning.md), and for PUT, PATCH
 * and DELETE its write precondition (`preconditions`: the parsed `If-Match`, and REQUIRE_IF_MATCH),
 * which the service's one conditional write evaluates (docs/writes.md#conditional-requests-etag-if-none-match-if-match).
 * The innermost of the resource interceptors. Protocol operations run as they are.
 */
@Injectable()
export class RequestScopeInterceptor implements NestInterceptor {
  private readonly requireIfMatch: boolean;

  constructor(@Optional() config?: ConfigService<Env, true>) {
    this.requireIfMatch = config?.get('REQUIRE_IF_MATCH', { infer: true }) === true;
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http' || operationQuery(context.getHandler())?.kind === 'protocol') return next.handle();
    const req = context.switchToHttp().getRequest<Request>();
    const scope: Partial<RequestContext> = {};
    const version = versionOfPath(req.baseUrl + req.path);
    if (version) scope.apiVersion = version;
    if (CONDITIONAL_WRITES.has(req.method)) scope.preconditions = { ifMatch: parseEntityTags(req.headers['if-match']), required: this.requireIfMatch };
    if (scope.apiVersion === undefined && scope.preconditions === undefined) return next.handle();
    return withRequestContext(scope, () => next.handle());
  }
}
