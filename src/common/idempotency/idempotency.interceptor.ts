import { type CallHandler, type ExecutionContext, Injectable, Logger, type NestInterceptor } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { catchError, from, mergeMap, type Observable, of, throwError } from 'rxjs';
import type { AuthUser } from '../../auth/auth-user.js';
import type { Env } from '../../config/env.validation.js';
import { SharedStore } from '../../store/shared-store.js';
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
import { IDEMPOTENT } from './idempotent.decorator.js';

/**
 * How long the lock of a running first request lives (ms): it is removed when the request ends;
 * this bound only matters when the process dies meanwhile (retries then get 409 until it passes).
 */
export const LOCK_TTL_MS = 60_000;

/**
 * The response headers kept with a first response and sent again on a replay: the resource's
 * `Location` and `ETag`, and the caching headers the ResourceInterceptor set (a replay does not run
 * it, so without them a replay would lose `Cache-Control: private, no-cache` and `Vary`).
 */
const KEPT_HEADERS = ['Location', 'ETag', 'Cache-Control', 'Vary'];

/** One request's place in the store: the caller's scope, the client's key, the store names. */
interface Slot {
  scope: string;
  key: string;
  record: string;
  lock: string;
}

/**
 * `Idempotency-Key` on the operations marked {@link Idempotent} (draft-ietf-httpapi-idempotency-key-header;
 * docs/writes.md "Retrying safely"). Runs after authentication, outside ResourceInterceptor (so the
 * `Location` it sets is seen and kept), before the validation pipe and the handler:
 * - no header → the operation runs as usual; a malformed one (empty, > 255 characters, not
 *   printable ASCII, sent twice) → 400 naming the header;
 * - a stored response for (caller, key) and the same request (method, versioned path and query,
 *   canonical body: {@link requestFingerprint}) → that response again (status, `Location`, `ETag`, the same
 *   body bytes) with `Idempotent-Replayed: true`, the handler not run; a different request → 422;
 * - else the key is locked (one slot in the {@link SharedStore}, atomic there: Redis with
 *   `REDIS_URL`, else the process) — a concurrent request with the key → 409 `conflict` with
 *   `Retry-After: 1` — and the handler runs: a 2xx response is stored (encrypted, see
 *   {@link sealRecord}) for IDEMPOTENCY_TTL seconds; an error stores nothing (every write here is one
 *   transaction, so an error means nothing was written) and frees the key for a corrected retry.
 * Keys are per caller ({@link callerScope}). Stored bodies are never logged.
 * @throws 400, 409, 422 as above; 503 when Redis does not answer before the handler ran.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private readonly logger = new Logger(IdempotencyInterceptor.name);
  private readonly marked = new Map<Function, boolean>();
  private readonly ttlMs: number;

  constructor(
    private readonly reflector: Reflector,
    private readonly store: SharedStore,
    config: ConfigService<Env, true>,
  ) {
    this.ttlMs = config.get('IDEMPOTENCY_TTL', { infer: true }) * 1000;
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
    const handled = next.handle();
    return from(this.begin(slot, fingerprint)).pipe(
      mergeMap((stored) => (stored ? of(this.replay(res, stored)) : this.run(handled, slot, fingerprint, res))),
    );
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

  /**
   * The stored response to replay, or null once this request holds the key's lock.
   * @throws 422 for a stored response of another request; 409 while another request holds the lock.
   */
  private async begin(slot: Slot, fingerprint: string): Promise<StoredResponse | null> {
    const found = await this.lookup(slot, fingerprint);
    if (found) return found;
    const claim = await this.store.acquire([{ key: slot.lock, limit: 1, windowMs: LOCK_TTL_MS }]);
    // the first request may have finished between the lookup and the claim
    let after: StoredResponse | null;
    try {
      after = await this.lookup(slot, fingerprint);
    } catch (error) {
      if (claim.acquired) await this.release(slot);
      throw error;
    }
    if (after) {
      if (claim.acquired) await this.release(slot);
      return after;
    }
    if (!claim.acquired) throw keyInProgress();
    return null;
  }

  /** The stored response of (caller, key) when it was for this request; null when none. @throws 422 for another request. */
  private async lookup(slot: Slot, fingerprint: string): Promise<StoredResponse | null> {
    const sealed = await this.store.get(slot.record);
    const stored = sealed === null ? null : openRecord(sealed, slot.scope, slot.key);
    if (stored && stored.fingerprint !== fingerprint) throw keyReusedForAnotherRequest();
    return stored;
  }

  /** Runs the handler holding the lock: a result is stored before it is sent; an error frees the key. */
  private run(handled: Observable<unknown>, slot: Slot, fingerprint: string, res: Response): Observable<unknown> {
    return handled.pipe(
      mergeMap(async (result) => {
        const headers: Record<string, string> = {};
        for (const name of KEPT_HEADERS) {
          const value = res.getHeader(name);
          if (typeof value === 'string') headers[name] = value;
        }
        const body = result === undefined ? null : JSON.stringify(result);
        await this.remember(slot, { fingerprint, headers, body });
        return result;
      }),
      catchError((error: unknown) => from(this.release(slot)).pipe(mergeMap(() => throwError(() => error)))),
    );
  }

  /**
   * Stores the first response, then frees the lock. A store failure is logged (without the body)
   * and swallowed: the write is done, so its response is sent; a retry may then run again.
   */
  private async remember(slot: Slot, stored: StoredResponse): Promise<void> {
    try {
      await this.store.set(slot.record, sealRecord(stored, slot.scope, slot.key), this.ttlMs);
    } catch (error) {
      this.logger.warn(`idempotency: the response could not be stored: ${(error as Error).message}`);
    }
    // the lock goes whether or not the record was stored, so a retry is not refused until LOCK_TTL_MS
    await this.release(slot);
  }

  /** Frees the key's lock (a store failure is logged: the lock then ends after LOCK_TTL_MS). */
  private async release(slot: Slot): Promise<void> {
    try {
      await this.store.delete(slot.lock);
    } catch (error) {
      this.logger.warn(`idempotency: the lock could not be released: ${(error as Error).message}`);
    }
  }

  /** Sends a stored response again: its headers, `Idempotent-Replayed: true`, and its body (parsed, so the same serialiser writes the same bytes). */
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
