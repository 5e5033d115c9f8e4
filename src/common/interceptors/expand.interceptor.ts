import { type CallHandler, type ExecutionContext, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Request, Response } from 'express';
import { from, mergeMap, type Observable } from 'rxjs';
import { DataSource } from 'typeorm';
import type { AuthUser } from '../caller/auth-user.js';
import { applyExpansions, type ExpandContext, type ExpandDef, type ExpandItem } from '../expand/expansion.js';
import { parseReadParams } from '../list/list-query.js';
import { Page } from '../list/page.js';
import { withRequestContext } from '../../context/request-context.js';
import { type ApiVersion, versionOfPath } from '../versioning/api-versions.js';
import { operationQuery } from './operation-query.js';
import type { PipelineRoute, RouteInterceptor } from './route-pipeline.interceptor.js';

/**
 * `expand` (docs/lists.md#expanding-related-resources-expand): after a list or a single read of a
 * resource that declares expandable paths, runs each asked path's expander over the page's items
 * (or the one item) — one batched statement per path — before `fields` and the envelope shape the
 * answer. A list's paths come parsed in its {@link Page}'s query; a read's are parsed from its
 * query string (QueryRulesInterceptor has refused bad ones before the handler ran). An expanded
 * read carries no `ETag`: it embeds other resources, whose changes its tag does not follow.
 */
@Injectable()
export class ExpandInterceptor implements RouteInterceptor {
  constructor(
    private readonly dataSource: DataSource,
    private readonly moduleRef: ModuleRef,
  ) {}

  /** On lists and reads whose resource declares expandable paths. */
  appliesTo(route: PipelineRoute): boolean {
    const operation = route.operation;
    return (operation?.kind === 'list' && operation.spec.expand !== undefined) || (operation?.kind === 'read' && operation.expand !== undefined);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const operation = operationQuery(context.getHandler());
    const req = context.switchToHttp().getRequest<Request & { user?: AuthUser }>();
    const res = context.switchToHttp().getResponse<Response>();
    // the served version, as RequestScopeInterceptor sets it around the handler (this runs outside it):
    // the expanders' mappers write links in it, and pick the version's shapes
    const version = (versionOfPath(req.baseUrl + req.path) ?? '1') as ApiVersion;
    const expansion: ExpandContext = {
      dataSource: this.dataSource,
      caller: req.user,
      version,
      get: (type) => this.moduleRef.get(type, { strict: false }),
    };
    const expand = (items: ExpandItem[], paths: readonly string[], spec: Readonly<Record<string, ExpandDef>>) =>
      withRequestContext({ apiVersion: version }, () => applyExpansions(items, paths, spec, expansion));
    if (operation?.kind === 'list' && operation.spec.expand) {
      const spec = operation.spec.expand;
      return next.handle().pipe(
        mergeMap((result: unknown) => {
          if (!(result instanceof Page) || !result.query.expand?.length) return from([result]);
          return from(expand(result.items as ExpandItem[], result.query.expand, spec).then(() => result));
        }),
      );
    }
    if (operation?.kind === 'read' && operation.expand) {
      const spec: Readonly<Record<string, ExpandDef>> = operation.expand;
      const paths = parseReadParams(req.query as Record<string, unknown>, operation.fields, spec).expand;
      if (!paths?.length) return next.handle();
      return next.handle().pipe(
        mergeMap((result: unknown) => {
          if (!result || typeof result !== 'object') return from([result]);
          res.removeHeader('ETag');
          return from(expand([result as ExpandItem], paths, spec).then(() => result));
        }),
      );
    }
    return next.handle();
  }
}
