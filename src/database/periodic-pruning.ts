import type { Logger } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import { safeError } from '../logging/logging.js';
import { inExclusiveBatch } from './advisory-lock.js';

/** Rows a pruning batch deletes at most: bounded, so a large backlog never holds long locks or a long transaction. */
export const PRUNE_BATCH = 1000;

/** How often an instance running the background work prunes (milliseconds): hourly; the first run is a minute after start. */
export const PRUNE_INTERVAL_MS = 3_600_000;
const FIRST_PRUNE_MS = 60_000;

/** What one batch found (rows selected, at most {@link PRUNE_BATCH}) and deleted. */
export interface PruneBatch {
  found: number;
  affected: number;
}

/**
 * A periodic deletion of old rows (the event retention, the idempotency-record pruning): `batch`
 * selects at most {@link PRUNE_BATCH} rows that are old at `now` and deletes them; {@link prune} runs batches until one
 * finds fewer, the job stops, or — PostgreSQL — another instance holds the job's advisory lock
 * `lockKey` (each batch is its own transaction that takes it first: {@link inExclusiveBatch}), so
 * the job runs on one instance at a time (docs/operations.md#roles-api-and-worker). {@link start}
 * runs it from an unref'd timer — a minute after start, then every {@link PRUNE_INTERVAL_MS} — and
 * logs each run that deleted rows (`describe(deleted)`) or failed (retried at the next run).
 */
export class PeriodicPruning {
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private running?: Promise<number>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly lockKey: number,
    private readonly logger: Logger,
    private readonly name: string,
    private readonly batch: (manager: EntityManager, now: Date) => Promise<PruneBatch>,
    private readonly describe: (deleted: number) => string,
  ) {}

  /** Starts the timer: the first run a minute after start, then every {@link PRUNE_INTERVAL_MS}. */
  start(): void {
    this.timer = setTimeout(() => {
      this.tick();
      this.timer = setInterval(() => this.tick(), PRUNE_INTERVAL_MS).unref();
    }, FIRST_PRUNE_MS).unref();
  }

  /** Stops the timer and any further batch, and waits for a run in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.timer);
    await this.running?.catch(() => 0);
  }

  /**
   * Runs batches for `now` until one finds fewer than {@link PRUNE_BATCH} rows (or the job is
   * stopped, or another instance holds the lock). Returns how many rows this call deleted.
   * @throws what the database throws (the timer logs it and tries again at the next run)
   */
  async prune(now: Date = new Date()): Promise<number> {
    let deleted = 0;
    while (!this.stopped) {
      const run = await inExclusiveBatch(this.dataSource, this.lockKey, (manager) => this.batch(manager, now));
      if (!run.locked) break;
      deleted += run.value.affected;
      if (run.value.found < PRUNE_BATCH) break;
    }
    return deleted;
  }

  private tick(): void {
    if (this.stopped || this.running) return;
    this.running = this.prune();
    this.running
      .then((deleted) => {
        if (deleted > 0) this.logger.log(this.describe(deleted));
      })
      .catch((error: unknown) => this.logger.warn(`${this.name}: pruning failed, retried at the next run: ${safeError(error).message}`))
      .finally(() => (this.running = undefined));
  }
}
