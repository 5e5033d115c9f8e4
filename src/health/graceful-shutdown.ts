import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import net from 'node:net';
import { type BeforeApplicationShutdown, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { HttpAdapterHost } from '@nestjs/core';
import type { Env } from '../config/env.validation.js';

/**
 * Graceful shutdown of the HTTP server (README "Shutdown", docs/operations.md#shutdown). Nest runs
 * {@link onModuleDestroy} first when the application closes — on SIGTERM/SIGINT through the
 * shutdown hooks main.ts enables — which starts the shutdown; {@link beforeApplicationShutdown}
 * waits for it, so the database (closed by `onApplicationShutdown` hooks, after Nest closes the
 * HTTP adapter) is open until the last request is answered. The shutdown:
 *
 * 1. turns readiness to 503 at once ({@link isShuttingDown}, read by `GET /health/ready`);
 * 2. lame duck: keeps serving as usual — listening, keep-alive — for SHUTDOWN_DELAY_MS, so a load
 *    balancer polling readiness moves the traffic away first;
 * 3. drain: stops listening (the net-level close: new connections are refused, open ones are not
 *    touched) and answers every request in flight or still arriving on an open connection with
 *    `Connection: close`, so each connection ends after its next response; a connection that
 *    stays idle ends at Node's keep-alive timeout (5 s). An idle connection is never closed
 *    actively: its client may be sending the next request at that very moment;
 * 4. the drain ends when the last connection has ended, or at SHUTDOWN_TIMEOUT_MS (counted from
 *    its start), when the remaining connections are destroyed (their clients see a reset).
 *
 * Either way the database closes next and the process exits 0. Modules must release shared
 * resources in `onApplicationShutdown`, not `onModuleDestroy`, so the requests of the lame duck
 * and the drain can use them.
 */
@Injectable()
export class GracefulShutdown implements OnApplicationBootstrap, OnModuleDestroy, BeforeApplicationShutdown {
  private readonly logger = new Logger('Shutdown');
  /** Responses of the requests received and not finished yet. */
  private readonly inFlight = new Set<ServerResponse>();
  /** Every open connection (the TCP socket, also under TLS). */
  private readonly connections = new Set<net.Socket>();
  private shuttingDown = false;
  private draining = false;
  /** Responses finished since the drain started. */
  private answeredDuringDrain = 0;
  private shutdown: Promise<void> | undefined;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly config: ConfigService<Env, true>,
  ) {}

  /** True from the moment the application starts closing: readiness answers 503 from then on. */
  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /**
   * Tracks the open connections and the requests in flight (from the moment Node has parsed a
   * request's head until its response is finished or its connection closes). The `request`
   * listener goes before the application's, so a response sent synchronously is counted and
   * marked too.
   */
  onApplicationBootstrap(): void {
    const server = this.server();
    server?.prependListener('connection', (socket: net.Socket) => {
      this.connections.add(socket);
      socket.once('close', () => this.connections.delete(socket));
    });
    server?.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
      this.inFlight.add(res);
      res.once('close', () => this.inFlight.delete(res));
      if (this.draining) this.closeAfter(res);
    });
  }

  /** Starts the shutdown (readiness 503 at once, then lame duck and drain; see the class comment) without waiting for it. */
  onModuleDestroy(): void {
    void this.begin();
  }

  /**
   * Resolves once the HTTP server has drained: at most SHUTDOWN_DELAY_MS + SHUTDOWN_TIMEOUT_MS
   * after the shutdown started. Starts it if {@link onModuleDestroy} did not. Never rejects.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.begin();
  }

  /** The shutdown, started once. */
  private begin(): Promise<void> {
    this.shutdown ??= this.run();
    return this.shutdown;
  }

  private async run(): Promise<void> {
    this.shuttingDown = true;
    const server = this.server();
    if (!server?.listening) {
      this.logger.log('shutting down: not ready any more; not listening, nothing to drain');
      return;
    }
    const delayMs = this.config.get('SHUTDOWN_DELAY_MS', { infer: true });
    if (delayMs > 0) {
      this.logger.log(`shutting down: not ready any more; serving as usual for ${delayMs} ms (SHUTDOWN_DELAY_MS) before draining`);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    } else {
      this.logger.log('shutting down: not ready any more');
    }
    // after this turn's poll phase: connections the kernel completed by now are accepted, not reset with the listener
    await new Promise((resolve) => setImmediate(resolve));
    await this.drain(server);
  }

  /** Stops listening and waits until every connection has ended (see the class comment, steps 3 and 4). */
  private async drain(server: Server): Promise<void> {
    const timeoutMs = this.config.get('SHUTDOWN_TIMEOUT_MS', { infer: true });
    this.draining = true;
    const inFlight = this.inFlight.size;
    for (const res of this.inFlight) this.closeAfter(res);
    let left = 0;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      // net.Server's close, not http.Server's: that one also closes the connections idle at this instant
      net.Server.prototype.close.call(server, () => resolve());
      this.logger.log(`not listening any more; draining ${inFlight} request(s) in flight on ${this.connections.size} connection(s) (at most ${timeoutMs} ms)`);
      timer = setTimeout(() => {
        left = this.inFlight.size;
        this.logger.warn(`shutdown timeout of ${timeoutMs} ms reached: closing ${this.connections.size} connection(s) with ${left} request(s) still in flight`);
        for (const socket of this.connections) socket.destroy();
      }, timeoutMs);
    });
    clearTimeout(timer);
    this.logger.log(`HTTP server closed: ${this.answeredDuringDrain} request(s) answered during the drain, ${left} left unanswered`);
  }

  /** Makes the connection of `res` end after this response (unless its head is out already: then after the next one). */
  private closeAfter(res: ServerResponse): void {
    if (!res.headersSent) res.setHeader('Connection', 'close');
    res.once('finish', () => (this.answeredDuringDrain += 1));
  }

  private server(): Server | undefined {
    return this.adapterHost.httpAdapter?.getHttpServer() as Server | undefined;
  }
}
