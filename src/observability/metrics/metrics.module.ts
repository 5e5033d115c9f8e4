import { Injectable, Logger, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { Env } from '../../config/env.validation.js';
import { instrumentDatabase } from './db-metrics.js';
import { MetricsController } from './metrics.controller.js';
import { type MetricsServer, startMetricsServer } from './metrics-server.js';
import { metricsAccess } from './metrics-access.js';
import { enableMetrics, gauge } from './registry.js';

/**
 * Starts what METRICS and SERVER_TIMING configure once the application is initialised: the
 * runtime defaults ({@link enableMetrics}), the database hooks and pool gauges
 * ({@link instrumentDatabase}), the role gauge `service_role_info{role}` (1 for this process's
 * ROLE), and — with METRICS_PORT — the separate metrics listener (its
 * port logged: `metrics on http://localhost:<port>/metrics`). On shutdown it closes that
 * listener and detaches the gauges. The HTTP middleware is installed by configureApp
 * (app.setup.ts), before routing.
 */
@Injectable()
export class MetricsLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');
  private server?: MetricsServer;
  private detach?: () => void;

  constructor(
    private readonly config: ConfigService<Env, true>,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /** The port of the METRICS_PORT listener while it runs (the chosen one for `0`), else undefined. */
  get metricsPort(): number | undefined {
    return this.server?.port;
  }

  /** @throws the listen error of METRICS_PORT (port in use): start-up fails with it. */
  async onApplicationBootstrap(): Promise<void> {
    const metrics = this.config.get('METRICS', { infer: true });
    const serverTiming = this.config.get('SERVER_TIMING', { infer: true });
    if (metrics) enableMetrics();
    const roles = gauge('service_role_info', 'What this process runs (ROLE): all, api or worker; the series of its role is 1.', ['role']);
    roles.reset();
    roles.labels(this.config.get('ROLE', { infer: true })).set(1);
    this.detach = instrumentDatabase(this.dataSource, { metrics, serverTiming });
    const port = this.config.get('METRICS_PORT', { infer: true });
    if (metrics && port !== undefined) {
      this.server = await startMetricsServer(
        port,
        metricsAccess({
          METRICS: true,
          NODE_ENV: this.config.get('NODE_ENV', { infer: true }),
          METRICS_TOKEN: this.config.get('METRICS_TOKEN', { infer: true }),
          METRICS_PORT: port,
        }),
      );
      this.logger.log(`metrics on http://localhost:${this.server.port}/metrics`);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.detach?.();
    await this.server?.close();
    this.server = undefined;
  }
}

/** Prometheus metrics (README.md#metrics): `GET /metrics` ({@link MetricsController}) and {@link MetricsLifecycle}. The registry API for other modules is in registry.ts. */
@Module({ controllers: [MetricsController], providers: [MetricsLifecycle] })
export class MetricsModule {}
