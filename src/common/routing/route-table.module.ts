import { type HttpServer, type MiddlewareConsumer, Module, type NestModule } from '@nestjs/common';
import { HttpAdapterHost, MiddlewareBuilder } from '@nestjs/core';
import { RouteTable } from './route-table.js';

/**
 * Provides the {@link RouteTable} and fills it once at start-up: Nest hands every module's
 * `configure()` its `MiddlewareBuilder` while the application initialises (before any route is
 * registered or any request is served), and `getServedRoutes()` returns the routes of every
 * controller at the paths the router serves them at — version prefixes and global prefix
 * included, from the same metadata the router is built from (`PATH_METADATA`, `METHOD_METADATA`,
 * `VERSION_METADATA`, the versioning options). The router's matching rules come from the HTTP
 * adapter (`getRouteMatchingOptions()`). Import it where the table is injected (CommonModule).
 * @throws Error at start-up when Nest hands `configure()` something other than its
 *   MiddlewareBuilder (a Nest version without the served-routes list).
 */
@Module({ providers: [RouteTable], exports: [RouteTable] })
export class RouteTableModule implements NestModule {
  constructor(
    private readonly table: RouteTable,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  configure(consumer: MiddlewareConsumer): void {
    if (!(consumer instanceof MiddlewareBuilder) || typeof consumer.getServedRoutes !== 'function') {
      throw new Error('RouteTableModule: the MiddlewareConsumer is not a MiddlewareBuilder with getServedRoutes(); the route table cannot be built');
    }
    // declared by the HttpServer interface the adapters implement, not by AbstractHttpAdapter
    const adapter: HttpServer = this.adapterHost.httpAdapter;
    this.table.load(consumer.getServedRoutes(), adapter.getRouteMatchingOptions?.());
  }
}
