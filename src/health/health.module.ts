import { Module, type OnModuleInit } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { GracefulShutdown } from './graceful-shutdown.js';
import { HealthController } from './health.controller.js';
import { ReadinessChecks } from './readiness-checks.js';

/**
 * Health and lifecycle (docs/operations.md#health): `GET /health/live`, `GET /health/ready` (the database, plus
 * every probe other modules register in {@link ReadinessChecks}) and the graceful shutdown of
 * the HTTP server ({@link GracefulShutdown}). Exports ReadinessChecks: import HealthModule to add
 * a readiness probe.
 */
@Module({
  imports: [TerminusModule.forRoot({ errorLogStyle: 'json' })],
  controllers: [HealthController],
  providers: [ReadinessChecks, GracefulShutdown],
  exports: [ReadinessChecks],
})
export class HealthModule implements OnModuleInit {
  constructor(
    private readonly readiness: ReadinessChecks,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /** Registers the database probe: `SELECT 1` through the pool (bounded by the pool's own timeouts too). */
  onModuleInit(): void {
    this.readiness.register('database', () => this.dataSource.query('SELECT 1'));
  }
}
