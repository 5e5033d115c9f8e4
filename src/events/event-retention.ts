import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, In, LessThan, Repository } from 'typeorm';
import type { Env } from '../config/env.validation.js';
import { runsBackgroundWork } from '../config/process-role.js';
import { ADVISORY_LOCK_KEYS } from '../database/advisory-lock.js';
import { PeriodicPruning, PRUNE_BATCH, type PruneBatch } from '../database/periodic-pruning.js';
import { EventRecord } from './event.entity.js';

export { PRUNE_BATCH, PRUNE_INTERVAL_MS } from '../database/periodic-pruning.js';

/**
 * The event log's retention (docs/events.md): events older than `EVENT_RETENTION_DAYS` days are
 * deleted, in batches of {@link PRUNE_BATCH} oldest first, by an unref'd timer on every instance
 * whose ROLE runs the background work (`all`, `worker`; stopped on shutdown). Each batch is a
 * SELECT of ids and one `DELETE … WHERE id IN (…)`; on PostgreSQL one instance prunes at a time
 * (the advisory lock {@link ADVISORY_LOCK_KEYS}.eventRetention; see {@link PeriodicPruning}).
 */
@Injectable()
export class EventRetention implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly pruning: PeriodicPruning;

  constructor(
    @InjectRepository(EventRecord) events: Repository<EventRecord>,
    private readonly config: ConfigService<Env, true>,
  ) {
    const days = () => config.get('EVENT_RETENTION_DAYS', { infer: true });
    const batch = (manager: EntityManager, now: Date) => oldEventsBatch(manager, new Date(now.getTime() - days() * 86_400_000));
    this.pruning = new PeriodicPruning(
      events.manager.connection,
      ADVISORY_LOCK_KEYS.eventRetention,
      new Logger(EventRetention.name),
      'event retention',
      batch,
      (deleted) => `event retention: deleted ${deleted} events older than ${days()} days`,
    );
  }

  /** Starts the timer (ROLE `all` or `worker`; none for `api`): the first run a minute after start, then hourly. */
  onApplicationBootstrap(): void {
    if (runsBackgroundWork(this.config.get('ROLE', { infer: true }))) this.pruning.start();
  }

  /** Stops the timer and waits for a run in progress. */
  onApplicationShutdown(): Promise<void> {
    return this.pruning.stop();
  }

  /**
   * Deletes the events created before `now` − EVENT_RETENTION_DAYS, batch after batch until none
   * is left (or the process is shutting down, or — PostgreSQL — another instance holds the
   * retention lock). Returns how many rows this call deleted.
   * @throws what the database throws (the timer logs it and tries again at the next run)
   */
  prune(now: Date = new Date()): Promise<number> {
    return this.pruning.prune(now);
  }
}

/** One retention batch: the oldest {@link PRUNE_BATCH} events created before `cutoff`, deleted by id. */
async function oldEventsBatch(manager: EntityManager, cutoff: Date): Promise<PruneBatch> {
  const events = manager.getRepository(EventRecord);
  const batch = await events.find({
    select: { id: true },
    where: { created_at: LessThan(cutoff) },
    order: { created_at: 'ASC', id: 'ASC' },
    take: PRUNE_BATCH,
  });
  if (batch.length === 0) return { found: 0, affected: 0 };
  const result = await events.delete({ id: In(batch.map((row) => row.id)) });
  return { found: batch.length, affected: result.affected ?? 0 };
}
