import { type MiddlewareConsumer, Module, type NestModule, RequestMethod } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { APP_FILTER, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { LoggerModule } from 'nestjs-pino';
import type { Env } from '../config/env.validation.js';
import { AllExceptionsFilter } from './filters/all-exceptions.filter.js';
import { ResourceInterceptor } from './interceptors/resource.interceptor.js';
import { loggerParams } from './logging.js';
import { WireMiddleware } from './middleware/wire.middleware.js';
import { ApiValidationPipe } from './pipes/api-validation.pipe.js';

/**
 * The request pipeline every resource shares, registered globally here (not in main.ts) so that
 * tests booting AppModule run exactly what production runs: wire middleware (request id,
 * credentials in query, body media type/size/JSON), logging, the validation pipe, the resource
 * interceptor (list grammar, envelope, fields, Location) and the one exception filter.
 */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService<Env, true>) => loggerParams(config.get('LOG_LEVEL', { infer: true })),
    }),
  ],
  providers: [
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
    { provide: APP_PIPE, useClass: ApiValidationPipe },
    { provide: APP_INTERCEPTOR, useClass: ResourceInterceptor },
  ],
})
export class CommonModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(WireMiddleware).forRoutes({ path: '*path', method: RequestMethod.ALL });
  }
}
