import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Body, type CallHandler, Controller, type ExecutionContext, Get, Post, SetMetadata } from '@nestjs/common';
import { catchError, lastValueFrom, map, type Observable, of } from 'rxjs';
import { OPERATION_QUERY } from '../decorators/operation.decorators.js';
import { BodylessOperationInterceptor } from './bodyless-operation.interceptor.js';
import { type PipelineRoute, type RouteInterceptor, RoutePipelineInterceptor } from './route-pipeline.interceptor.js';

@Controller('things')
class ThingsController {
  @Get()
  @SetMetadata(OPERATION_QUERY, { kind: 'list', spec: {} })
  list(): void {}

  @Post()
  @SetMetadata(OPERATION_QUERY, { kind: 'create' })
  create(@Body() _body: unknown): void {}

  @Get('plain')
  plain(): void {}
}

/** An interceptor that records its name on the way in and appends it to the answer on the way out. */
function recorder(name: string, log: string[], appliesTo?: (route: PipelineRoute) => boolean): RouteInterceptor {
  return {
    appliesTo,
    intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
      log.push(name);
      return next.handle().pipe(map((answer) => `${String(answer)}<${name}`));
    },
  };
}

function contextOf(handler: Function): ExecutionContext {
  return { getHandler: () => handler, getClass: () => ThingsController } as unknown as ExecutionContext;
}

describe('RoutePipelineInterceptor', () => {
  const log: string[] = [];
  const pipeline = new RoutePipelineInterceptor([
    recorder('outer', log),
    recorder('lists', log, (route) => route.operation?.kind === 'list'),
    recorder('creates', log, (route) => route.operation?.kind === 'create'),
    recorder('inner', log),
  ]);
  const handle = (): Observable<unknown> => of('answer');

  it('runs on each route only the interceptors that apply to it, outermost first, the answer passing back innermost first', async () => {
    const proto = ThingsController.prototype;
    log.length = 0;
    await expect(lastValueFrom(pipeline.intercept(contextOf(proto.list), { handle }))).resolves.toBe('answer<inner<lists<outer');
    expect(log).toEqual(['outer', 'lists', 'inner']);
    log.length = 0;
    await expect(lastValueFrom(pipeline.intercept(contextOf(proto.create), { handle }))).resolves.toBe('answer<inner<creates<outer');
    expect(log).toEqual(['outer', 'creates', 'inner']);
    log.length = 0;
    await expect(lastValueFrom(pipeline.intercept(contextOf(proto.plain), { handle }))).resolves.toBe('answer<inner<outer');
    expect(log).toEqual(['outer', 'inner']);
  });

  it('works the chain out once per route', () => {
    const proto = ThingsController.prototype;
    expect(pipeline.interceptorsOf(proto.list, ThingsController)).toBe(pipeline.interceptorsOf(proto.list, ThingsController));
    expect(pipeline.interceptorsOf(proto.list, ThingsController)).toHaveLength(3);
  });

  it('turns an inner interceptor’s throw into an error the outer ones see', async () => {
    const seen: unknown[] = [];
    const failing = new RoutePipelineInterceptor([
      {
        intercept: (_context, next) =>
          next.handle().pipe(
            catchError((error: unknown) => {
              seen.push(error);
              throw error;
            }),
          ),
      },
      {
        intercept: () => {
          throw new Error('refused');
        },
      },
    ]);
    await expect(lastValueFrom(failing.intercept(contextOf(ThingsController.prototype.plain), { handle }))).rejects.toThrow('refused');
    expect(seen).toHaveLength(1);
  });

  it('attaches the body check only to routes that read no body', () => {
    const bodyless = new BodylessOperationInterceptor();
    const route = (handler: Function): PipelineRoute => ({ handler, controller: ThingsController, operation: null });
    expect(bodyless.appliesTo(route(ThingsController.prototype.create))).toBe(false);
    expect(bodyless.appliesTo(route(ThingsController.prototype.plain))).toBe(true);
  });
});
