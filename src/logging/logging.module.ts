import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { LoggerModule } from 'nestjs-pino';
import type { Env } from '../config/env.validation.js';
import { StdoutLog } from './log-destination.js';
import { loggerParams } from './logging.js';

/**
 * The one logging path (README.md#logs): nestjs-pino configured by {@link loggerParams} at
 * LOG_LEVEL — one short redacted JSON line per request, and the application's own lines through the
 * same pino instance — written to standard output asynchronously by {@link StdoutLog}, made once
 * and flushed by the shutdown hooks. nestjs-pino's module is global, so its request logger is
 * mounted before every module's middleware (the wire rules included), wherever this module is imported.
 */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      providers: [{ provide: StdoutLog, useFactory: () => new StdoutLog() }],
      inject: [ConfigService, StdoutLog],
      useFactory: (config: ConfigService<Env, true>, stdout: StdoutLog) => loggerParams(config.get('LOG_LEVEL', { infer: true }), stdout),
    }),
  ],
})
export class LoggingModule {}
