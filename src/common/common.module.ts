import { type MiddlewareConsumer, Module, type NestModule, RequestMethod, type Type } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { APP_FILTER, APP_INTERCEPTOR, APP_PIPE, DiscoveryModule, DiscoveryService, Reflector } from '@nestjs/core';
import { LoggerModule } from 'nestjs-pino';
import type { Env } from '../config/env.validation.js';
import { AllExceptionsFilter } from './filters/all-exceptions.filter.js';
import { IdempotencyInterceptor } from './idempotency/idempotency.interceptor.js';
import { IdempotencyRecords } from './idempotency/idempotency-records.js';
import { BodylessOperationInterceptor } from './interceptors/bodyless-operation.interceptor.js';
import { RESOURCE_INTERCEPTORS } from './interceptors/resource.interceptors.js';
import { loggerParams } from './logging.js';
import { WireMiddleware } from './middleware/wire.middleware.js';
import { ApiValidationPipe } from './pipes/api-validation.pipe.js';
import { RouteTableModule } from './routing/route-table.module.js';
import { DEPRECATED_VERSION, deprecationDates, deprecationMiddleware } from './versioning/deprecation.js';

/**
 * The request pipeline every resource shares, registered globally here (not in main.ts) so that
 * tests booting AppModule run exactly what production runs: wire middleware (request id; body
 * media type, encoding, size, UTF-8, depth, text rules — the query and path rules run before, in
 * configureApp), logging, the validation pipe, the resource
 * interceptors (caching, query rules, envelope, Location, ETag, served version and preconditions:
 * interceptors/resource.interceptors.ts) after the refusal of a
 * body sent to an operation that takes none and the `Idempotency-Key` replay (idempotency/), the one exception
 * filter, and the deprecation headers on every route of a controller marked `@DeprecatedVersion()`.
 */
@Module({
  imports: [
    DiscoveryModule,
    RouteTableModule,
    LoggerModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService<Env, true>) => loggerParams(config.get('LOG_LEVEL', { infer: true })),
    }),
  ],
  providers: [
    IdempotencyRecords,
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
    { provide: APP_PIPE, useClass: ApiValidationPipe },
    { provide: APP_INTERCEPTOR, useClass: BodylessOperationInterceptor },
    { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
    ...RESOURCE_INTERCEPTORS.map((useClass) => ({ provide: APP_INTERCEPTOR, useClass })),
  ],
})
export class CommonModule implements NestModule {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
    private readonly config: ConfigService<Env, true>,
  ) {}

  configure(consumer: MiddlewareConsumer): void {
    // first, so that responses refused by the wire rules (413, 415) carry the headers too
    const deprecated = this.discovery
      .getControllers()
      .map((wrapper) => wrapper.metatype)
      .filter((metatype): metatype is Type => !!metatype && this.reflector.get<boolean>(DEPRECATED_VERSION, metatype) === true);
    if (deprecated.length > 0) {
      const dates = deprecationDates({ V1_DEPRECATED_AT: this.config.get('V1_DEPRECATED_AT', { infer: true }), V1_SUNSET_AT: this.config.get('V1_SUNSET_AT', { infer: true }) });
      consumer.apply(deprecationMiddleware(dates)).forRoutes(...deprecated);
    }
    // `{/*path}` matches `/` too: the query rules recorded before routing hold on the root path as well
    consumer.apply(WireMiddleware).forRoutes({ path: '{/*path}', method: RequestMethod.ALL });
  }
}
