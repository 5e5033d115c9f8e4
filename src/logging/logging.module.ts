import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { LoggerModule } from 'nestjs-pino';
import type { Env } from '../config/env.validation.js';
import { loggerParams } from './logging.js';

/**
 * The one logging path (README.md#logs): nestjs-pino configured by {@link loggerParams} at
 * LOG_LEVEL — one redacted JSON line per request, and the application's own lines through the
 * same pino instance. nestjs-pino's module is global, so its request logger is mounted before
 * every module's middleware (the wire rules included), wherever this module is imported.
 */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService<Env, true>) => loggerParams(config.get('LOG_LEVEL', { infer: true })),
    }),
  ],
})
export class LoggingModule {}
