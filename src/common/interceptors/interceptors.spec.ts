import { AsyncResource } from 'node:async_hooks';
import { describe, expect, it } from '@jest/globals';
import { Body, type CallHandler, type ExecutionContext, Req, SetMetadata } from '@nestjs/common';
import { lastValueFrom, of, defer, type Observable } from 'rxjs';
import { FakeResponse, type FakeRequest, fakeRequest, httpContext } from '../../../test/unit/http-context.js';
import { OPERATION_QUERY, type OperationQuery } from '../decorators/operation.decorators.js';
import { ApiException } from '../errors/api-exception.js';
import { defineFields } from '../list/field-table.js';
import type { ListQuery } from '../list/list-query.js';
import { ListQueryPipe } from '../list/list-query.pipe.js';
import { Page } from '../list/page.js';
import { linkPrefix } from '../versioning/api-versions.js';
import { BodylessOperationInterceptor } from './bodyless-operation.interceptor.js';
import { RESOURCE_INTERCEPTORS } from './resource.interceptors.js';
import { type RouteInterceptor, RoutePipelineInterceptor } from './route-pipeline.interceptor.js';

/** The columns the field table below may name. */
class TodoRow {
  id: number;
  title: string;
  status: string;
  created_at: Date;
}

const TODO_LIST = defineFields<TodoRow>()({
  alias: 't',
  fields: {
    title: { column: 'title', sort: true },
    status: { column: 'status', filter: { type: 'enum', values: ['open', 'done'], description: 'status', example: 'open' } },
    created_at: { column: 'created_at', sort: true, select: false },
  },
  links: [],
});

const todo = (id: number) => ({ id, title: `todo ${id}`, status: 'open', links: [{ rel: 'self', href: `${linkPrefix()}/todos/${id}` }] });

// the operation kinds as the operation decorators declare them (metadata set directly)
class TodosController {
  @SetMetadata(OPERATION_QUERY, { kind: 'list', spec: TODO_LIST } satisfies OperationQuery)
  list() {}
  @SetMetadata(OPERATION_QUERY, { kind: 'read', fields: TODO_LIST.selectable } satisfies OperationQuery)
  read() {}
  @SetMetadata(OPERATION_QUERY, { kind: 'create' } satisfies OperationQuery)
  create(@Body() _body: unknown) {}
  @SetMetadata(OPERATION_QUERY, { kind: 'protocol' } satisfies OperationQuery)
  authorize(@Req() _req: unknown) {}
  remove() {}
}

/**
 * A CallHandler whose handler returns `produce()` when subscribed, as Nest's does: the handler
 * runs in the async context of the `handle()` call (Nest binds it with AsyncResource.bind).
 */
const handler = (produce: () => unknown): CallHandler => ({ handle: () => defer(AsyncResource.bind(() => of(produce()))) });

/** The resource interceptors around `inner` as the service runs them: through the route pipeline, on the route of `context` only those that apply to it, the first outermost. */
function chain(context: ExecutionContext, inner: CallHandler): Observable<unknown> {
  // no route of this controller declares expandable paths: the expand interceptor needs no database here
  const build = (Interceptor: (typeof RESOURCE_INTERCEPTORS)[number]) => new (Interceptor as new () => RouteInterceptor)();
  return new RoutePipelineInterceptor(RESOURCE_INTERCEPTORS.map(build)).intercept(context, inner);
}

/** The outcome of the resource interceptors for `req` on `method`: the response body, or the exception they throw. */
async function run(req: FakeRequest, method: keyof TodosController, produce: () => unknown, res = new FakeResponse()) {
  try {
    return await lastValueFrom(chain(httpContext(req, res, TodosController, method), handler(produce)));
  } catch (error) {
    return error;
  }
}

/** The list query ListQueryPipe parses of `req` (as `@ListParams()` hands it to the handler), or the exception it throws. */
function listQuery(req: FakeRequest): ListQuery {
  const url = new URL(req.originalUrl, 'http://localhost');
  return new ListQueryPipe().transform({ query: Object.fromEntries(url.searchParams), spec: TODO_LIST, path: url.pathname, prefer: undefined });
}

/** Asserts `outcome` is a 400 naming `fields` in its details. */
function expect400(outcome: unknown, fields: string[]) {
  expect(outcome).toBeInstanceOf(ApiException);
  const error = outcome as ApiException;
  expect([error.getStatus(), error.code]).toEqual([400, 'bad_request']);
  expect(error.details?.map((d) => d.field)).toEqual(fields);
}

describe('the resource interceptors (docs/lists.md, docs/writes.md)', () => {
  it('wraps a list Page into the envelope with paging links that repeat the query', async () => {
    const req = fakeRequest('GET', '/v1/todos?status=open&sort=-title&page=2&size=1');
    const body = await run(req, 'list', () => new Page([todo(2)], 3, listQuery(req)));
    expect(body).toEqual({
      data: [todo(2)].map((t) => ({ ...t, links: [{ rel: 'self', href: '/v1/todos/2' }] })),
      page: 2,
      size: 1,
      total: 3,
      links: [
        { rel: 'self', href: '/v1/todos?status=open&sort=-title&page=2&size=1' },
        { rel: 'first', href: '/v1/todos?status=open&sort=-title&page=1&size=1' },
        { rel: 'prev', href: '/v1/todos?status=open&sort=-title&page=1&size=1' },
        { rel: 'next', href: '/v1/todos?status=open&sort=-title&page=3&size=1' },
        { rel: 'last', href: '/v1/todos?status=open&sort=-title&page=3&size=1' },
      ],
    });
  });

  it("applies the parsed list query's `fields` to each item", async () => {
    const req = fakeRequest('GET', '/v1/todos?fields=title');
    const query = listQuery(req);
    expect(query.fields).toEqual(['title']);
    const body = (await run(req, 'list', () => new Page([todo(1), todo(2)], 2, query))) as { data: unknown[] };
    expect(body.data).toEqual([
      { id: 1, title: 'todo 1', links: [{ rel: 'self', href: '/v1/todos/1' }] },
      { id: 2, title: 'todo 2', links: [{ rel: 'self', href: '/v1/todos/2' }] },
    ]);
  });

  it('ListQueryPipe refuses a bad list query with 400, naming every bad parameter', () => {
    let outcome: unknown;
    try {
      listQuery(fakeRequest('GET', '/v1/todos?sort=password&colour=red'));
    } catch (error) {
      outcome = error;
    }
    expect400(outcome, ['colour', 'sort']);
  });

  it('passes a list result that is not a Page through unchanged', async () => {
    expect(await run(fakeRequest('GET', '/v1/todos'), 'list', () => ({ plain: true }))).toEqual({ plain: true });
  });

  it('applies `fields` to a read and refuses any other query parameter', async () => {
    expect(await run(fakeRequest('GET', '/v1/todos/1?fields=status'), 'read', () => todo(1))).toEqual({
      id: 1,
      status: 'open',
      links: [{ rel: 'self', href: '/v1/todos/1' }],
    });
    expect(await run(fakeRequest('GET', '/v1/todos/1'), 'read', () => todo(1))).toEqual(todo(1));
    expect400(await run(fakeRequest('GET', '/v1/todos/1?expand=owner'), 'read', () => todo(1)), ['expand']);
    expect400(await run(fakeRequest('GET', '/v1/todos/1?fields=secret'), 'read', () => todo(1)), ['fields']);
  });

  it("sets Location to a created resource's self link, in the version that serves the request", async () => {
    const v1 = new FakeResponse();
    await run(fakeRequest('POST', '/v1/todos'), 'create', () => todo(7), v1);
    expect(v1.headers.location).toBe('/v1/todos/7');
    const v2 = new FakeResponse();
    const body = await run(fakeRequest('POST', '/v2/todos'), 'create', () => todo(8), v2);
    expect(v2.headers.location).toBe('/v2/todos/8');
    expect(body).toEqual({ id: 8, title: 'todo 8', status: 'open', links: [{ rel: 'self', href: '/v2/todos/8' }] });
    const none = new FakeResponse();
    await run(fakeRequest('POST', '/v1/todos'), 'create', () => ({ id: 1 }), none);
    expect(none.headers.location).toBeUndefined();
  });

  it('refuses query parameters on operations that declare none; a protocol operation reads its own', async () => {
    expect400(await run(fakeRequest('DELETE', '/v1/todos/1?force=1'), 'remove', () => undefined), ['force']);
    expect400(await run(fakeRequest('POST', '/v1/todos?a=1&b=2'), 'create', () => todo(1)), ['a', 'b']);
    expect(await run(fakeRequest('GET', '/v1/oauth/authorize?client_id=x&state=y'), 'authorize', () => 'page')).toBe('page');
    expect(await run(fakeRequest('DELETE', '/v1/todos/1'), 'remove', () => undefined)).toBeUndefined();
  });

  it('leaves other context types alone', async () => {
    const context = httpContext(fakeRequest('GET', '/v1/todos?anything=1'), undefined, TodosController, 'remove');
    context.setType('rpc');
    expect(
      await lastValueFrom(
        chain(
          context,
          handler(() => 'untouched'),
        ),
      ),
    ).toBe('untouched');
  });
});

describe('BodylessOperationInterceptor (docs/wire.md#request-bodies: unknown properties → 400)', () => {
  /** The outcome for a request with `body` to `method`: the handler's value, or the exception thrown. */
  async function run(method: keyof TodosController, body: unknown) {
    try {
      const req = fakeRequest('POST', '/v1/logout', { body });
      return await lastValueFrom(
        new BodylessOperationInterceptor().intercept(
          httpContext(req, undefined, TodosController, method),
          handler(() => 'handled'),
        ),
      );
    } catch (error) {
      return error;
    }
  }

  it('refuses a body with properties sent to an operation that reads none, naming each property', async () => {
    const outcome = await run('remove', { reason: 'x', force: true });
    expect(outcome).toBeInstanceOf(ApiException);
    const error = outcome as ApiException;
    expect([error.getStatus(), error.message]).toEqual([400, 'this operation takes no request body']);
    expect(error.details).toEqual([
      { field: 'reason', message: 'reason is not an accepted property' },
      { field: 'force', message: 'force is not an accepted property' },
    ]);
  });

  it('lets no body and an empty object through', async () => {
    expect(await run('remove', undefined)).toBe('handled');
    expect(await run('remove', {})).toBe('handled');
  });

  it('lets a body through to an operation that reads it with @Body() or @Req()', async () => {
    expect(await run('create', { title: 'x' })).toBe('handled');
    expect(await run('authorize', { client_id: 'x' })).toBe('handled');
  });
});
