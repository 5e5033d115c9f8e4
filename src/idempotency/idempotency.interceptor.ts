import { type CallHandler, type ExecutionContext, Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { InjectDataSource } from '@nestjs/typeorm';
import { from, lastValueFrom, type Observable } from 'rxjs';
import { DataSource } from 'typeorm';
import type { AuthUser } from '../common/caller/auth-user.js';
import type { Env } from '../config/env.validation.js';
import { RequestTransaction } from '../database/request-transaction.js';
import { SharedStore } from '../store/shared-store.js';
import {
  callerScope,
  keyInProgress,
  keyReusedForAnotherRequest,
  openRecord,
  parseIdempotencyKey,
  REPLAYED_HEADER,
  requestFingerprint,
  sealRecord,
  storeKeys,
  type StoredResponse,
} from './idempotency-key.js';
import { IdempotencyRecords, type KeptResponse } from './idempotency-records.js';
import { IDEMPOTENT } from '../common/decorators/idempotent.decorator.js';
import type { PipelineRoute, RouteInterceptor } from '../common/interceptors/route-pipeline.interceptor.js';

/**
 * How long the lock of a running first request lives (ms): it is removed when the request ends;
 * this bound only matters when the process dies meanwhile (retries then get 409 until it passes).
 * It is no guarantee of its own: the record's primary key is (a request that runs after the lock
 * expired and finds the first one committed meanwhile rolls back and replays it).
 */
export const LOCK_TTL_MS = 10_000;

/**
 * The response headers kept with a first response and sent again on a replay: the resource's
 * `Location` and `ETag`, and the caching headers the resource interceptors set (a replay does not run
 * it, so without them a replay would lose `Cache-Control: private, no-cache` and `Vary`).
 */
const KEPT_HEADERS = ['Location', 'ETag', 'Cache-Control', 'Vary'];

/** One request's key: the caller's scope, the client's key, the record's primary key (`digest`) and the lock's name. */
interface Slot {
  scope: string;
  key: string;
  digest: string;
  lock: string;
}

/** Whether `error` is the unique violation of another request's record for the same key. */
function isDuplicateKey(error: unknown): boolean {
  const code = (error as { driverError?: { code?: unknown }; code?: unknown } | null)?.driverError?.code ?? (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/**
 * `Idempotency-Key` on the operations marked {@link Idempotent} (draft-ietf-httpapi-idempotency-key-header;
 * docs/writes.md#retrying-safely-idempotency-key). Runs after authentication, outside the resource interceptors (so the
 * `Location` it sets is seen and kept), before the validation pipe and the handler:
 * - no header → the operation runs as usual; a malformed one (empty, > 255 characters, not
 *   printable ASCII, sent twice) → 400 naming the header;
 * - a record for (caller, key) and the same request (method, versioned path and query, canonical
 *   body: {@link requestFingerprint}) → its response again (status, `Location`, `ETag`, the same
 *   body bytes) with `Idempotent-Replayed: true`, the handler not run; a different request → 422;
 * - else the key is locked (one slot in the {@link SharedStore}: Redis with `REDIS_URL`, else the
 *   process) — a concurrent request with the key → 409 `conflict` with `Retry-After: 1` — and the
 *   handler runs inside one {@link RequestTransaction}: on a 2xx result the record (the response,
 *   encrypted: {@link sealRecord}) is inserted in that same transaction, which then commits, and
 *   only then is the response sent. The record lives exactly as long as the write it describes:
 *   a key whose write committed is never executed again (for IDEMPOTENCY_TTL seconds), whatever
 *   fails after the COMMIT — the response, the process, Redis. An error (4xx, 5xx, a failed
 *   COMMIT) rolls everything back and frees the key for a retry.
 * Keys are per caller ({@link callerScope}). Kept bodies are never logged.
 * @throws 400, 409, 422 as above; 503 when the database or Redis does not answer.
 */
@Injectable()
export class IdempotencyInterceptor implements RouteInterceptor {
  private readonly logger = new Logger(IdempotencyInterceptor.name);
  private readonly marked = new Map<Function, boolean>();
  private readonly ttlMs: number;

  constructor(
    private readonly reflector: Reflector,
    private readonly store: SharedStore,
    private readonly records: IdempotencyRecords,
    @InjectDataSource() private readonly dataSource: DataSource,
    config: ConfigService<Env, true>,
  ) {
    this.ttlMs = config.get('IDEMPOTENCY_TTL', { infer: true }) * 1000;
  }

  /** Only on the operations marked {@link Idempotent}. */
  appliesTo(route: PipelineRoute): boolean {
    return this.isIdempotent(route.handler);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http' || !this.isIdempotent(context.getHandler())) return next.handle();
    const http = context.switchToHttp();
    const req = http.getRequest<Request & { user?: AuthUser }>();
    const key = parseIdempotencyKey(req.rawHeaders);
    if (key === undefined) return next.handle();
    const res = http.getResponse<Response>();
    const scope = callerScope(req.user, req.ip);
    const slot: Slot = { scope, key, ...storeKeys(scope, key) };
    // req.url carries the API version however it was chosen (path, Accept, subdomain), and the query
    const fingerprint = requestFingerprint(req.method, req.baseUrl + req.url, req.body);
    return from(this.execute(slot, fingerprint, res, next));
  }

  /** Whether the handler is marked {@link Idempotent} (looked up once per handler). */
  private isIdempotent(handler: Function): boolean {
    let marked = this.marked.get(handler);
    if (marked === undefined) {
      marked = this.reflector.get<boolean>(IDEMPOTENT, handler) === true;
      this.marked.set(handler, marked);
    }
    return marked;
  }

  /** The kept response (replayed), or the handler's result once it committed with its record. */
  private async execute(slot: Slot, fingerprint: string, res: Response, next: CallHandler): Promise<unknown> {
    const found = await this.lookup(slot, fingerprint);
    if (found) return this.replay(res, found);
    const claim = await this.store.acquire([{ key: slot.lock, limit: 1, windowMs: LOCK_TTL_MS }]);
    try {
      // the first request may have finished between the lookup and the claim
      const after = await this.lookup(slot, fingerprint);
      if (after) return this.replay(res, after);
      if (!claim.acquired) throw keyInProgress();
      return await this.run(slot, fingerprint, res, next);
    } finally {
      if (claim.acquired) await this.release(slot);
    }
  }

  /** The kept response of (caller, key) when it was for this request; null when none. @throws 422 for another request. */
  private async lookup(slot: Slot, fingerprint: string): Promise<StoredResponse | null> {
    const kept = await this.records.find(slot.digest);
    if (!kept) return null;
    if (kept.fingerprint !== fingerprint) throw keyReusedForAnotherRequest();
    const stored = openRecord(kept.response, slot.scope, slot.key);
    // a record that does not decrypt cannot be replayed, and must not be executed again
    if (!stored) throw keyReusedForAnotherRequest();
    return stored;
  }

  /**
   * Runs the handler in one request transaction, inserts the record of its response in it and
   * commits; returns the result to send. Any error rolls back; a record another request with the
   * key committed meanwhile is replayed instead.
   */
  private async run(slot: Slot, fingerprint: string, res: Response, next: CallHandler): Promise<unknown> {
    const transaction = new RequestTransaction(this.dataSource);
    try {
      const result: unknown = await transaction.run(() => lastValueFrom(next.handle(), { defaultValue: undefined }));
      const headers: Record<string, string> = {};
      for (const name of KEPT_HEADERS) {
        const value = res.getHeader(name);
        if (typeof value === 'string') headers[name] = value;
      }
      const body = result === undefined ? null : JSON.stringify(result);
      const kept: KeptResponse = { fingerprint, response: sealRecord({ fingerprint, headers, body }, slot.scope, slot.key) };
      await transaction.run(() => this.records.insert(slot.digest, kept, this.ttlMs));
      await transaction.commit();
      return result;
    } catch (error) {
      await transaction.rollback();
      if (isDuplicateKey(error)) {
        const first = await this.lookup(slot, fingerprint);
        if (first) return this.replay(res, first);
      }
      throw error;
    }
  }

  /** Frees the key's lock (a store failure is logged: the lock then ends after LOCK_TTL_MS). */
  private async release(slot: Slot): Promise<void> {
    try {
      await this.store.delete(slot.lock);
    } catch (error) {
      this.logger.warn(`idempotency: the lock could not be released: ${(error as Error).message}`);
    }
  }

  /** Sends a kept response again: its headers, `Idempotent-Replayed: true`, and its body (parsed, so the same serialiser writes the same bytes). */
  private replay(res: Response, stored: StoredResponse): unknown {
    for (const [name, value] of Object.entries(stored.headers)) {
      // `Vary` is merged with what this request's middleware set (e.g. `Origin`), not replaced
      if (name === 'Vary') res.vary(value);
      else res.setHeader(name, value);
    }
    res.setHeader(REPLAYED_HEADER, 'true');
    return stored.body === null ? undefined : JSON.parse(stored.body);
  }
}
