import {
  type DynamicModule,
  type MiddlewareConsumer,
  Module,
  type NestModule,
  type OnApplicationBootstrap,
  RequestMethod,
  type Type,
  VERSION_NEUTRAL,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { APP_FILTER, APP_INTERCEPTOR, APP_PIPE, DiscoveryModule, DiscoveryService, HttpAdapterHost, Reflector } from '@nestjs/core';
import { indexRoutes } from './routing/route-index.js';
import { applicationControllers, applicationRoutes } from './routing/route-handlers.js';
import type { Env } from '../config/env.validation.js';
import { AllExceptionsFilter } from './filters/all-exceptions.filter.js';
import { BodylessOperationInterceptor } from './interceptors/bodyless-operation.interceptor.js';
import { RESOURCE_INTERCEPTORS } from './interceptors/resource.interceptors.js';
import { type RouteInterceptor, RoutePipelineInterceptor } from './interceptors/route-pipeline.interceptor.js';
import { formBodyRoutes, markFormBody } from './middleware/form-body.js';
import { WireMiddleware } from './middleware/wire.middleware.js';
import { ApiValidationPipe } from './pipes/api-validation.pipe.js';
import { RouteTableModule } from './routing/route-table.module.js';
import { DEPRECATED_VERSION, deprecationDates, deprecationMiddleware } from './versioning/deprecation.js';

/** What the application plugs into the shared pipeline ({@link CommonModule.forRoot}). */
export interface PipelineOptions {
  /** The modules providing {@link interceptors}. */
  imports: DynamicModule['imports'];
  /** Interceptors run, in this order, after the refusal of a body sent to an operation that takes none and before (outside) the resource interceptors; each on the routes its `appliesTo` takes. */
  interceptors: Type<RouteInterceptor>[];
}

/**
 * The request pipeline every resource shares, registered globally here (not in main.ts) so that
 * tests booting AppModule run exactly what production runs: wire middleware (request id; body
 * media type, encoding, size, UTF-8, depth, text rules — the query and path rules run before, in
 * configureApp), the validation pipe, the resource
 * interceptors (caching, query rules, envelope, Location, ETag, served version:
 * interceptors/resource.interceptors.ts) after the refusal of a
 * body sent to an operation that takes none and the interceptors the application plugs in with
 * {@link forRoot} (the `Idempotency-Key` replay, src/idempotency/), the one exception
 * filter, and the deprecation headers on every route of a controller marked `@DeprecatedVersion()`.
 */
@Module({
  imports: [DiscoveryModule, RouteTableModule],
  providers: [
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
    { provide: APP_PIPE, useClass: ApiValidationPipe },
  ],
})
export class CommonModule implements NestModule, OnApplicationBootstrap {
  /**
   * The pipeline with the application's own interceptors, in one list run by one global
   * interceptor ({@link RoutePipelineInterceptor}: on each route only those its metadata calls
   * for) — the body check, then `options.interceptors` (imported from `options.imports`, so
   * `common/` imports none of them), then the resource interceptors
   * (interceptors/resource.interceptors.ts).
   */
  static forRoot(options: PipelineOptions): DynamicModule {
    const pipeline = [BodylessOperationInterceptor, ...options.interceptors, ...RESOURCE_INTERCEPTORS];
    return {
      module: CommonModule,
      imports: options.imports,
      providers: [
        BodylessOperationInterceptor,
        ...RESOURCE_INTERCEPTORS,
        {
          provide: RoutePipelineInterceptor,
          useFactory: (...interceptors: RouteInterceptor[]) => new RoutePipelineInterceptor(interceptors),
          inject: pipeline,
        },
        { provide: APP_INTERCEPTOR, useExisting: RoutePipelineInterceptor },
      ],
    };
  }

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
    private readonly config: ConfigService<Env, true>,
    private readonly pipeline: RoutePipelineInterceptor,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  /** Once every route is registered: the routes indexed by their first path segments (routing/route-index.ts). */
  onApplicationBootstrap(): void {
    const instance = this.adapterHost.httpAdapter?.getInstance<{ router?: Parameters<typeof indexRoutes>[0] }>();
    if (instance?.router) indexRoutes(instance.router);
  }

  configure(consumer: MiddlewareConsumer): void {
    // each route's interceptors, worked out now rather than on its first request
    for (const { handler, controller } of applicationRoutes(this.discovery)) this.pipeline.interceptorsOf(handler, controller);
    const controllers = applicationControllers(this.discovery);
    // first, so that responses refused by the wire rules (413, 415) carry the headers too
    const deprecated = controllers.filter((metatype) => this.reflector.get<boolean>(DEPRECATED_VERSION, metatype) === true);
    if (deprecated.length > 0) {
      const dates = deprecationDates({
        V1_DEPRECATED_AT: this.config.get('V1_DEPRECATED_AT', { infer: true }),
        V1_SUNSET_AT: this.config.get('V1_SUNSET_AT', { infer: true }),
      });
      consumer.apply(deprecationMiddleware(dates)).forRoutes(...deprecated);
    }
    // the routes of `@FormBody()` operations are marked before the wire rules read the body
    const forms = formBodyRoutes(controllers);
    if (forms.length > 0) consumer.apply(markFormBody).forRoutes(...forms);
    // `{/*path}` matches `/` too: the query rules recorded before routing hold on the root path as well;
    // version-neutral, it is mounted once (with the versions, once more per version path, each a layer every request passes)
    consumer.apply(WireMiddleware).forRoutes({ path: '{/*path}', method: RequestMethod.ALL, version: VERSION_NEUTRAL });
  }
}
