import { Injectable, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import { shutdownTracing, tracingActive } from './trace-context.js';

/** How long shutdown waits for the last spans to be exported (a collector that is down must not hold the exit). */
export const TRACE_FLUSH_TIMEOUT_MS = 5000;

/**
 * Exports the spans still buffered when the application closes (SIGTERM/SIGINT or `app.close()`),
 * after the HTTP server drained: Nest runs `onApplicationShutdown` of the modules AppModule imports
 * after those of the modules they import (the database's included). Waits at most
 * {@link TRACE_FLUSH_TIMEOUT_MS}; a failed or late export is logged as a warning, never an error
 * of the shutdown. Does nothing while tracing is off.
 */
@Injectable()
export class TracingShutdown implements OnApplicationShutdown {
  private readonly logger = new Logger('Tracing');

  async onApplicationShutdown(): Promise<void> {
    if (!tracingActive()) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), TRACE_FLUSH_TIMEOUT_MS);
      timer.unref();
    });
    try {
      const outcome = await Promise.race([shutdownTracing().then(() => 'done' as const), late]);
      if (outcome === 'late') this.logger.warn(`spans not exported within ${TRACE_FLUSH_TIMEOUT_MS} ms of shutdown; dropped`);
    } catch (error) {
      this.logger.warn(`exporting the last spans failed: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Tracing's part of the application: the last spans exported on shutdown ({@link TracingShutdown}). Tracing itself starts in main.ts, before the application loads. */
@Module({ providers: [TracingShutdown] })
export class TracingModule {}
