import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectRepository } from '@nestjs/typeorm';
import { In, LessThan, Repository } from 'typeorm';
import { safeError } from '../common/logging.js';
import type { Env } from '../config/env.validation.js';
import { runsBackgroundWork } from '../config/process-role.js';
import { ADVISORY_LOCK_KEYS, inExclusiveBatch } from '../database/advisory-lock.js';
import { EventRecord } from './event.entity.js';

/** Rows deleted per statement: bounded, so a large backlog never holds long locks or a long transaction. */
export const PRUNE_BATCH = 1000;

/** How often each instance running the background work prunes (milliseconds): hourly; the first run is a minute after start. */
export const PRUNE_INTERVAL_MS = 3_600_000;
const FIRST_PRUNE_MS = 60_000;

/**
 * The event log's retention (docs/events.md): events older than `EVENT_RETENTION_DAYS` days are
 * deleted, in batches of {@link PRUNE_BATCH} oldest first, by an unref'd timer on every instance
 * whose ROLE runs the background work (`all`, `worker`; stopped on shutdown). Each batch is a
 * SELECT of ids and one `DELETE … WHERE id IN (…)`. On PostgreSQL each batch is a transaction that
 * first takes the advisory lock {@link ADVISORY_LOCK_KEYS}.eventRetention without waiting
 * ({@link inExclusiveBatch}): while another instance prunes, this run ends at once, so the job
 * runs on one instance at a time (docs/operations.md#roles-api-and-worker).
 */
@Injectable()
export class EventRetention implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(EventRetention.name);
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private running?: Promise<number>;

  constructor(
    @InjectRepository(EventRecord) private readonly events: Repository<EventRecord>,
    private readonly config: ConfigService<Env, true>,
  ) {}

  /** Starts the timer (ROLE `all` or `worker`; none for `api`): the first run a minute after start, then hourly. */
  onApplicationBootstrap(): void {
    if (!runsBackgroundWork(this.config.get('ROLE', { infer: true }))) return;
    this.timer = setTimeout(() => {
      this.tick();
      this.timer = setInterval(() => this.tick(), PRUNE_INTERVAL_MS).unref();
    }, FIRST_PRUNE_MS).unref();
  }

  /** Stops the timer and waits for a run in progress. */
  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.timer);
    await this.running?.catch(() => 0);
  }

  /**
   * Deletes the events created before `now` − EVENT_RETENTION_DAYS, batch after batch until none
   * is left (or the process is shutting down, or — PostgreSQL — another instance holds the
   * retention lock). Returns how many rows this call deleted.
   * @throws what the database throws (the timer logs it and tries again at the next run)
   */
  async prune(now: Date = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - this.config.get('EVENT_RETENTION_DAYS', { infer: true }) * 86_400_000);
    let deleted = 0;
    while (!this.stopped) {
      const run = await inExclusiveBatch(this.events.manager.connection, ADVISORY_LOCK_KEYS.eventRetention, async (manager) => {
        const events = manager.getRepository(EventRecord);
        const batch = await events.find({ select: { id: true }, where: { created_at: LessThan(cutoff) }, order: { created_at: 'ASC', id: 'ASC' }, take: PRUNE_BATCH });
        if (batch.length === 0) return { found: 0, affected: 0 };
        const result = await events.delete({ id: In(batch.map((row) => row.id)) });
        return { found: batch.length, affected: result.affected ?? 0 };
      });
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
        if (deleted > 0) this.logger.log(`event retention: deleted ${deleted} events older than ${this.config.get('EVENT_RETENTION_DAYS', { infer: true })} days`);
      })
      .catch((error: unknown) => this.logger.warn(`event retention: pruning failed, retried at the next run: ${safeError(error).message}`))
      .finally(() => (this.running = undefined));
  }
}
