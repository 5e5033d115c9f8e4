import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor, Optional } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { map, type Observable } from 'rxjs';
import { OPERATION_QUERY, PARSED_LIST_QUERY, type OperationQuery } from '../decorators/operation.decorators.js';
import type { Env } from '../../config/env.validation.js';
import { cursorKey } from '../list/cursor.js';
import { parseListQuery, parseReadQuery, rejectQuery } from '../list/list-query.js';
import { type Link, Page, pickFields, toEnvelope } from '../list/page.js';
import { serveAsVersion, versionOfPath } from '../versioning/api-versions.js';

/**
 * Shapes every controller response by the operation's declared query grammar (SPEC §4, §5):
 * - list: parses the list query before the handler (400 on a bad parameter; cursors checked with
 *   the key derived from LIST_CURSOR_SECRET, `Prefer: count=…` read) and turns the returned
 *   {@link Page} into `{data, page, size, total, next_cursor, prev_cursor, links}`, applying
 *   `fields` to each item; answers `Preference-Applied: count=…` (the count it applied) and
 *   `Vary: Prefer`;
 * - read: accepts only `fields` and applies it;
 * - create: sets `Location` to the created object's `self` link;
 * - protocol (OAuth authorize): the handler reads its own query;
 * - any other operation: a query parameter is an unknown one → 400;
 * - always: the handler runs as serving the request's API version ({@link serveAsVersion}), so the
 *   mappers write `links` — and with them `Location` — into that version (`/v2/…` for v2, however
 *   the version was chosen: path, Accept or subdomain) the first time; no response is walked.
 * The declaration is looked up once per handler and cached.
 */
@Injectable()
export class ResourceInterceptor implements NestInterceptor {
  private readonly operations = new Map<Function, OperationQuery | null>();
  private readonly cursorKey: Buffer;

  constructor(
    private readonly reflector: Reflector,
    @Optional() config?: ConfigService<Env, true>,
  ) {
    this.cursorKey = cursorKey(config?.get('LIST_CURSOR_SECRET', { infer: true }));
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const handler = context.getHandler();
    let operation = this.operations.get(handler);
    if (operation === undefined) {
      operation = this.reflector.get<OperationQuery>(OPERATION_QUERY, handler) ?? null;
      this.operations.set(handler, operation);
    }
    const req = context.switchToHttp().getRequest<Request & { [PARSED_LIST_QUERY]?: unknown }>();
    const query = req.query as Record<string, unknown>;
    const path = req.baseUrl + req.path;
    const version = versionOfPath(path);
    const handled = () => (version ? serveAsVersion(version, () => next.handle()) : next.handle());
    if (operation?.kind === 'list') {
      const parsed = parseListQuery(query, operation.spec, { key: this.cursorKey, path, prefer: req.headers.prefer });
      req[PARSED_LIST_QUERY] = parsed;
      const res = context.switchToHttp().getResponse<Response>();
      return handled().pipe(
        map((result: unknown) => {
          if (!(result instanceof Page)) return result;
          res.setHeader('Preference-Applied', `count=${result.info.counted}`);
          const vary = res.getHeader('Vary');
          if (!/(^|,)\s*(prefer|\*)\s*(,|$)/i.test(String(vary ?? ''))) res.setHeader('Vary', vary ? `${String(vary)}, Prefer` : 'Prefer');
          const envelope = toEnvelope(result, path, this.cursorKey);
          if (parsed.fields) envelope.data = envelope.data.map((item) => pickFields(item as object, parsed.fields!));
          return envelope;
        }),
      );
    }
    if (operation?.kind === 'read') {
      const fields = parseReadQuery(query, operation.fields);
      return fields ? handled().pipe(map((result: unknown) => (result && typeof result === 'object' ? pickFields(result, fields) : result))) : handled();
    }
    if (operation?.kind === 'protocol') return next.handle();
    rejectQuery(query);
    if (operation?.kind === 'create') {
      const res = context.switchToHttp().getResponse<Response>();
      return handled().pipe(
        map((result: unknown) => {
          const self = (result as { links?: Link[] } | null)?.links?.find((link) => link.rel === 'self');
          if (self) res.setHeader('Location', self.href);
          return result;
        }),
      );
    }
    return handled();
  }
}
