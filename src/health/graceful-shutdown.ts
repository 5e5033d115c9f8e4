import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { type BeforeApplicationShutdown, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { HttpAdapterHost } from '@nestjs/core';
import type { Env } from '../config/env.validation.js';

/**
 * Graceful shutdown of the HTTP server (SPEC §10 shutdown). Nest calls
 * {@link beforeApplicationShutdown} when the application closes — on SIGTERM/SIGINT through the
 * shutdown hooks main.ts enables — before it closes the HTTP adapter and before the
 * `onApplicationShutdown` hooks (TypeORM closes the database there). It then:
 *
 * 1. turns readiness to 503 at once ({@link isShuttingDown}, read by `GET /health/ready`);
 * 2. stops accepting connections (`server.close()`), closes idle keep-alive connections, and
 *    answers every request still in flight or still arriving on an open connection with
 *    `Connection: close`, closing each connection once its response is finished;
 * 3. waits for the in-flight requests, at most SHUTDOWN_TIMEOUT_MS; past it the remaining
 *    connections are destroyed (their clients see a reset) and the shutdown goes on.
 *
 * Either way the database closes next and the process exits 0. Modules must release shared
 * resources in `onApplicationShutdown`, not `onModuleDestroy`, so in-flight requests can use them.
 */
@Injectable()
export class GracefulShutdown implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Shutdown');
  private readonly inFlight = new Set<ServerResponse>();
  private shuttingDown = false;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly config: ConfigService<Env, true>,
  ) {}

  /** True from the moment the application starts closing: readiness answers 503 from then on. */
  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Starts tracking requests in flight (each response until it is finished or its connection closes). */
  onApplicationBootstrap(): void {
    const server = this.server();
    server?.on('request', (_req: IncomingMessage, res: ServerResponse) => {
      this.inFlight.add(res);
      if (this.shuttingDown) this.closeAfter(res);
      res.once('close', () => this.inFlight.delete(res));
    });
  }

  /** Drains the HTTP server (see the class comment); resolves once it is closed. `signal` is only logged. */
  async beforeApplicationShutdown(signal?: string): Promise<void> {
    this.shuttingDown = true;
    const server = this.server();
    if (!server?.listening) return;
    const timeoutMs = this.config.get('SHUTDOWN_TIMEOUT_MS', { infer: true });
    this.logger.log(`${signal ?? 'close'}: not ready any more; draining ${this.inFlight.size} request(s) in flight (at most ${timeoutMs} ms)`);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.logger.warn(`shutdown timeout of ${timeoutMs} ms reached: closing ${this.inFlight.size} request(s) still in flight`);
        server.closeAllConnections();
      }, timeoutMs);
      server.close(() => {
        clearTimeout(timer);
        resolve();
      });
      for (const res of this.inFlight) this.closeAfter(res);
      server.closeIdleConnections();
    });
    this.logger.log('HTTP server closed');
  }

  /** Makes the connection of `res` close once the response is finished. */
  private closeAfter(res: ServerResponse): void {
    if (!res.headersSent) res.setHeader('Connection', 'close');
    // a response whose headers already went out keeps its connection: close it when it turns idle
    res.once('finish', () => setImmediate(() => this.server()?.closeIdleConnections()));
  }

  private server(): Server | undefined {
    return this.adapterHost.httpAdapter?.getHttpServer() as Server | undefined;
  }
}
