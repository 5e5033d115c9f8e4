import { type CallHandler, type ExecutionContext, Inject, Injectable, type NestInterceptor, Optional } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { map, type Observable } from 'rxjs';
import { OPERATION_QUERY, PARSED_LIST_QUERY, type OperationQuery } from '../decorators/operation.decorators.js';
import type { Env } from '../../config/env.validation.js';
import { cursorKey } from '../list/cursor.js';
import { parseListQuery, parseReadQuery, rejectQuery } from '../list/list-query.js';
import { type Link, Page, pickFields, toEnvelope } from '../list/page.js';
import { RESOURCE_REGISTRY, type ResourceRegistry } from '../resources/resource-registry.js';
import { serveAsVersion, versionOfPath } from '../versioning/api-versions.js';
import { parseEntityTags, responseTag, withPreconditions } from '../writes/preconditions.js';

/** Methods whose resource writes evaluate `If-Match` (RFC 9110 §13.1.1). */
const CONDITIONAL_WRITES = new Set(['PUT', 'PATCH', 'DELETE']);

/** `Vary` of responses to authenticated requests: the credential and the negotiated version select the representation. */
const AUTHENTICATED_VARY = ['Authorization', 'Cookie', 'Accept'];

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
 *   the version was chosen: path, Accept or subdomain) the first time; no response is walked;
 * - conditional requests (RFC 9110 §13): a single-resource response its mapper tagged with the row
 *   version gets a strong `ETag` (of the full representation, before `fields`), so a GET/HEAD
 *   whose `If-None-Match` matches is answered 304 with no body (`*`, lists and weak comparison,
 *   whatever the request's `Cache-Control`: `req.fresh` is the service's own evaluation, see
 *   evaluateConditionalReads in app.setup.ts); PUT, PATCH and DELETE run with the request's `If-Match` (and
 *   REQUIRE_IF_MATCH) for the service's one conditional write (src/common/writes/preconditions.ts);
 * - caching: a response to an authenticated request is `Cache-Control: private, no-cache` (unless the
 *   operation set its own, e.g. `no-store` where a secret is returned) with `Vary: Authorization,
 *   Cookie, Accept`.
 * The declaration is looked up once per handler and cached, a list's field table with the
 * registry's lists in its enum filters (the event types of the event log's `type`: ResourceRegistry.listSpec).
 */
@Injectable()
export class ResourceInterceptor implements NestInterceptor {
  private readonly operations = new Map<Function, OperationQuery | null>();
  private readonly cursorKey: Buffer;

  private readonly requireIfMatch: boolean;

  constructor(
    private readonly reflector: Reflector,
    @Optional() config?: ConfigService<Env, true>,
    @Optional() @Inject(RESOURCE_REGISTRY) private readonly registry?: ResourceRegistry,
  ) {
    this.cursorKey = cursorKey(config?.get('LIST_CURSOR_SECRET', { infer: true }));
    this.requireIfMatch = config?.get('REQUIRE_IF_MATCH', { infer: true }) === true;
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const handler = context.getHandler();
    let operation = this.operations.get(handler);
    if (operation === undefined) {
      operation = this.reflector.get<OperationQuery>(OPERATION_QUERY, handler) ?? null;
      if (operation?.kind === 'list' && this.registry) operation = { ...operation, spec: this.registry.listSpec(operation.spec) };
      this.operations.set(handler, operation);
    }
    const req = context.switchToHttp().getRequest<Request & { [PARSED_LIST_QUERY]?: unknown; user?: unknown }>();
    const res = context.switchToHttp().getResponse<Response>();
    const query = req.query as Record<string, unknown>;
    const path = req.baseUrl + req.path;
    const version = versionOfPath(path);
    if (req.user !== undefined) {
      if (!res.hasHeader('Cache-Control')) res.setHeader('Cache-Control', 'private, no-cache');
      res.vary(AUTHENTICATED_VARY.join(', '));
    }
    const conditional = CONDITIONAL_WRITES.has(req.method);
    const preconditions = conditional ? { ifMatch: parseEntityTags(req.headers['if-match']), required: this.requireIfMatch } : undefined;
    const served = () => (version ? serveAsVersion(version, () => next.handle()) : next.handle());
    const handled = () => (preconditions ? withPreconditions(preconditions, served) : served());
    /** Sets `ETag` from a tagged single-resource response (before any `fields` projection). */
    const tagResponse = (result: unknown) => {
      const tag = responseTag(result);
      if (tag) res.setHeader('ETag', tag);
      return result;
    };
    if (operation?.kind === 'list') {
      const parsed = parseListQuery(query, operation.spec, { key: this.cursorKey, path, prefer: req.headers.prefer });
      req[PARSED_LIST_QUERY] = parsed;
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
      return handled().pipe(
        map((result: unknown) => {
          tagResponse(result);
          return fields && result && typeof result === 'object' ? pickFields(result, fields) : result;
        }),
      );
    }
    if (operation?.kind === 'protocol') return next.handle();
    rejectQuery(query);
    if (operation?.kind === 'create') {
      return handled().pipe(
        map((result: unknown) => {
          tagResponse(result);
          const self = (result as { links?: Link[] } | null)?.links?.find((link) => link.rel === 'self');
          if (self) res.setHeader('Location', self.href);
          return result;
        }),
      );
    }
    return handled().pipe(map(tagResponse));
  }
}
