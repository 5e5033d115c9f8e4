import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager, In, LessThanOrEqual, MoreThan } from 'typeorm';
import type { Env } from '../config/env.validation.js';
import { runsBackgroundWork } from '../config/process-role.js';
import { ADVISORY_LOCK_KEYS } from '../database/advisory-lock.js';
import { PeriodicPruning, PRUNE_BATCH, type PruneBatch } from '../database/periodic-pruning.js';
import { IdempotencyRecord } from './idempotency-record.entity.js';

/** A record as the idempotency interceptor reads it: the first request's fingerprint and its sealed response. */
export interface KeptResponse {
  fingerprint: string;
  response: string;
}

/**
 * The idempotency records in the database (docs/writes.md#retrying-safely-idempotency-key): looked up
 * before a keyed request runs, inserted inside its request transaction, and pruned once expired by
 * an unref'd timer on every instance whose ROLE runs the background work (`all`, `worker`; stopped
 * on shutdown), one instance at a time on PostgreSQL (the advisory lock
 * {@link ADVISORY_LOCK_KEYS}.idempotencyPruning; see {@link PeriodicPruning}).
 */
@Injectable()
export class IdempotencyRecords implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly pruning: PeriodicPruning;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: ConfigService<Env, true>,
  ) {
    const logger = new Logger(IdempotencyRecords.name);
    this.pruning = new PeriodicPruning(
      dataSource,
      ADVISORY_LOCK_KEYS.idempotencyPruning,
      logger,
      'idempotency',
      expiredBatch,
      (deleted) => `idempotency: pruned ${deleted} expired keys`,
    );
  }

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
    await records.insert({
      key_hash: keyHash,
      fingerprint: kept.fingerprint,
      response: kept.response,
      created_at: now,
      expires_at: new Date(now.getTime() + ttlMs),
    });
  }

  /** Starts the pruning timer (ROLE `all` or `worker`; none for `api`): the first run a minute after start, then hourly. */
  onApplicationBootstrap(): void {
    if (runsBackgroundWork(this.config.get('ROLE', { infer: true }))) this.pruning.start();
  }

  /** Stops the timer and waits for a run in progress. */
  onApplicationShutdown(): Promise<void> {
    return this.pruning.stop();
  }

  /**
   * Deletes the records expired at `now`, {@link PRUNE_BATCH} at a time, oldest first (served by
   * idx_idempotency_keys_expires_at), until none is left (or the process is shutting down, or —
   * PostgreSQL — another instance holds the pruning lock). Returns how many rows this call deleted.
   * @throws what the database throws (the timer logs it and tries again at the next run)
   */
  prune(now: Date = new Date()): Promise<number> {
    return this.pruning.prune(now);
  }
}

/** One pruning batch: the oldest {@link PRUNE_BATCH} records expired at `now`, deleted 100 keys per statement. */
async function expiredBatch(manager: EntityManager, now: Date): Promise<PruneBatch> {
  const records = manager.getRepository(IdempotencyRecord);
  const batch = await records.find({
    select: { key_hash: true },
    where: { expires_at: LessThanOrEqual(now) },
    order: { expires_at: 'ASC' },
    take: PRUNE_BATCH,
  });
  let affected = 0;
  for (let i = 0; i < batch.length; i += 100) {
    const keys = batch.slice(i, i + 100).map((row) => row.key_hash);
    const result = await records.delete({ key_hash: In(keys), expires_at: LessThanOrEqual(now) });
    affected += result.affected ?? 0;
  }
  return { found: batch.length, affected };
}
