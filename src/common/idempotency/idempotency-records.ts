import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In, LessThanOrEqual, MoreThan } from 'typeorm';
import type { Env } from '../../config/env.validation.js';
import { runsBackgroundWork } from '../../config/process-role.js';
import { ADVISORY_LOCK_KEYS, inExclusiveBatch } from '../../database/advisory-lock.js';
import { safeError } from '../logging.js';
import { IdempotencyRecord } from './idempotency-record.entity.js';

/** Expired records deleted per statement: bounded, so a large backlog never holds long locks. */
export const PRUNE_BATCH = 1000;

/** How often each instance running the background work prunes expired records (milliseconds): hourly; the first run a minute after start. */
export const PRUNE_INTERVAL_MS = 3_600_000;
const FIRST_PRUNE_MS = 60_000;

/** A record as the idempotency interceptor reads it: the first request's fingerprint and its sealed response. */
export interface KeptResponse {
  fingerprint: string;
  response: string;
}

/**
 * The idempotency records in the database (docs/writes.md#retrying-safely-idempotency-key): looked up
 * before a keyed request runs, inserted inside its request transaction, and pruned once expired by
 * an unref'd timer on every instance whose ROLE runs the background work (`all`, `worker`; stopped
 * on shutdown). On PostgreSQL each pruning batch is a transaction that first takes the advisory
 * lock {@link ADVISORY_LOCK_KEYS}.idempotencyPruning without waiting ({@link inExclusiveBatch}):
 * one instance prunes at a time (docs/operations.md#roles-api-and-worker).
 */
@Injectable()
export class IdempotencyRecords implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(IdempotencyRecords.name);
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private running?: Promise<number>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: ConfigService<Env, true>,
  ) {}

  /**
   * The unexpired record of `keyHash`, or null. One primary-key lookup.
   * @throws what the database throws (unavailable → 503)
   */
  async find(keyHash: string, now = new Date()): Promise<KeptResponse | null> {
    const row = await this.dataSource.getRepository(IdempotencyRecord).findOne({
      select: { fingerprint: true, response: true },
      where: { key_hash: keyHash, expires_at: MoreThan(now) },
    });
    return row ? { fingerprint: row.fingerprint, response: row.response } : null;
  }

  /**
   * Inserts the record of `keyHash` (an expired one of the same key is replaced), kept for `ttlMs`
   * milliseconds. Called inside the request's transaction, so it commits with the request's writes.
   * @throws a unique violation (23505 / SQLITE_CONSTRAINT_PRIMARYKEY) when another request with the
   *   key committed first — the caller rolls back and replays that one's response
   */
  async insert(keyHash: string, kept: KeptResponse, ttlMs: number, now = new Date()): Promise<void> {
    const records = this.dataSource.getRepository(IdempotencyRecord);
    await records.delete({ key_hash: keyHash, expires_at: LessThanOrEqual(now) });
    await records.insert({ key_hash: keyHash, fingerprint: kept.fingerprint, response: kept.response, created_at: now, expires_at: new Date(now.getTime() + ttlMs) });
  }

  /** Starts the pruning timer (ROLE `all` or `worker`; none for `api`): the first run a minute after start, then hourly. */
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
   * Deletes the records expired at `now`, {@link PRUNE_BATCH} at a time, oldest first (served by
   * idx_idempotency_keys_expires_at), until none is left (or the process is shutting down, or —
   * PostgreSQL — another instance holds the pruning lock). Returns how many rows this call deleted.
   * @throws what the database throws (the timer logs it and tries again at the next run)
   */
  async prune(now: Date = new Date()): Promise<number> {
    let deleted = 0;
    while (!this.stopped) {
      const run = await inExclusiveBatch(this.dataSource, ADVISORY_LOCK_KEYS.idempotencyPruning, async (manager) => {
        const records = manager.getRepository(IdempotencyRecord);
        const batch = await records.find({ select: { key_hash: true }, where: { expires_at: LessThanOrEqual(now) }, order: { expires_at: 'ASC' }, take: PRUNE_BATCH });
        let affected = 0;
        for (let i = 0; i < batch.length; i += 100) {
          const keys = batch.slice(i, i + 100).map((row) => row.key_hash);
          const result = await records.delete({ key_hash: In(keys), expires_at: LessThanOrEqual(now) });
          affected += result.affected ?? 0;
        }
        return { found: batch.length, affected };
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
        if (deleted > 0) this.logger.log(`idempotency: pruned ${deleted} expired keys`);
      })
      .catch((error: unknown) => this.logger.warn(`idempotency: pruning failed, retried at the next run: ${safeError(error).message}`))
      .finally(() => (this.running = undefined));
  }
}
