import { randomUUID } from 'node:crypto';
import { type BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DataSource, In, type EntityManager, type QueryDeepPartialEntity } from 'typeorm';
import { safeError } from '../logging/logging.js';
import { inSpan, type SpanAttributes } from '../observability/tracing/trace-context.js';
import type { Env } from '../config/env.validation.js';
import { EventRecord } from '../events/event.entity.js';
import { toEventPayload } from '../events/event-outbox.js';
import { WebhookDelivery } from './webhook-delivery.entity.js';
import { type AttemptMetricOutcome, countDeliveryAttempt } from './webhook-metrics.js';
import { type AttemptOutcome, sendAttempt } from './webhook-sender.js';
import { WebhookSubscription, type WebhookApiVersion } from './webhook-subscription.entity.js';
import { leaseMs, retryDelayMs, sqlTime } from './webhook-times.js';
import type { UrlRules } from './webhook-url.js';

/** A delivery this process claimed: what its attempt needs. */
export interface Claimed {
  id: number;
  token: string;
  subscriptionId: number;
  /** Attempts including this one. */
  attempts: number;
  eventId: string;
  url: string;
  secrets: string[];
  apiVersion: WebhookApiVersion;
}

/**
 * The due query of the claim: ids of at most `limit` deliveries of enabled webhooks that are
 * `pending` with `next_attempt_at` ≤ the one parameter (now), or `delivering` with an expired lease
 * (`next_attempt_at` holds the lease's end then), oldest first. On PostgreSQL the rows are locked
 * and rows other claims hold are skipped (`FOR UPDATE OF d SKIP LOCKED`). Served by the index
 * (`status`, `next_attempt_at`). On SQLite each status is its own range of that index, read in
 * order and cut at `limit`, and only those (at most 2 × `limit`) rows are sorted together: one
 * `status IN (…)` range would be sorted whole first, every due row of the backlog (200–300 ms for
 * 300,000, at each poll and at the worker's start).
 */
export function dueDeliveriesSql(postgres: boolean, limit: number): string {
  const n = Math.trunc(limit);
  if (postgres) {
    return `SELECT d.id FROM webhook_deliveries d INNER JOIN webhook_subscriptions w ON w.id = d.subscription_id
    WHERE d.status IN ('pending', 'delivering') AND d.next_attempt_at <= $1 AND w.enabled = TRUE
    ORDER BY d.next_attempt_at, d.id LIMIT ${n} FOR UPDATE OF d SKIP LOCKED`;
  }
  const oldest = (
    status: string,
  ) => `SELECT * FROM (SELECT d.id, d.next_attempt_at FROM webhook_deliveries d INNER JOIN webhook_subscriptions w ON w.id = d.subscription_id
    WHERE d.status = '${status}' AND d.next_attempt_at <= (SELECT at FROM due) AND w.enabled = TRUE ORDER BY d.next_attempt_at, d.id LIMIT ${n})`;
  return `WITH due(at) AS (SELECT ?) SELECT id FROM (${oldest('pending')} UNION ALL ${oldest('delivering')}) ORDER BY next_attempt_at, id LIMIT ${n}`;
}

/**
 * The first attributes of a delivery attempt's span: the HTTP client conventions' method, server
 * address and port (never the URL's path or query: they can carry the receiver's secrets), and
 * which webhook, delivery, attempt and event it is.
 */
export function deliverySpanAttributes(claimed: Pick<Claimed, 'id' | 'subscriptionId' | 'attempts' | 'eventId' | 'url'>, eventType: string): SpanAttributes {
  const attributes: SpanAttributes = {
    'http.request.method': 'POST',
    'messaging.message.id': claimed.eventId,
    'resource_api.event.type': eventType,
    'resource_api.webhook.id': claimed.subscriptionId,
    'resource_api.webhook.delivery.id': claimed.id,
    'resource_api.webhook.delivery.attempt': claimed.attempts,
  };
  try {
    const url = new URL(claimed.url);
    attributes['server.address'] = url.hostname;
    attributes['server.port'] = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  } catch {
    // a stored URL that no longer parses: the attempt fails and says so
  }
  return attributes;
}

/**
 * The delivery worker (docs/webhooks.md#delivery): finds due deliveries every WEBHOOK_POLL_INTERVAL_MS (and at once
 * when {@link wake} is called after a commit), claims at most WEBHOOK_CONCURRENCY at a time and
 * makes their attempts ({@link sendAttempt}); then records the outcome and schedules a retry per
 * WEBHOOK_RETRY_SCHEDULE, or marks the delivery failed and disables the webhook (410 at once;
 * after WEBHOOK_DISABLE_AFTER_FAILURES failed deliveries in a row).
 *
 * Claiming is one short transaction: select due rows (`pending`, or `delivering` with an expired
 * lease — a process that died holding it) — on PostgreSQL `FOR UPDATE OF d SKIP LOCKED`, so
 * several processes never claim the same row — then mark them `delivering` with a random claim
 * token and a lease of {@link leaseMs}; `next_attempt_at` then holds the lease's end, so one index
 * (`status`, `next_attempt_at`) serves the due query. Every completion is
 * `UPDATE … WHERE id = ? AND claim_token = ?`: a delivery whose lease expired and was claimed
 * again cannot be completed twice. SQLite has one writer and no row locks: run one process there.
 *
 * Started by {@link start} once the server listens (main.ts); deliveries survive restarts (they
 * are rows). On shutdown it stops claiming, waits for the attempts in flight (at most
 * SHUTDOWN_TIMEOUT_MS), aborts the rest and puts them back to `pending`, before the database closes.
 *
 * Observability (docs/operations.md#traces): with tracing on, each attempt is a CLIENT span `webhook delivery`
 * ({@link deliverySpanAttributes}) in the trace of the request that wrote the event, and the
 * receiver gets its `traceparent`; each recorded outcome counts in
 * `webhook_delivery_attempts_total{outcome}` (webhook-metrics.ts).
 */
@Injectable()
export class WebhookWorker implements BeforeApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  private readonly inFlight = new Map<number, { promise: Promise<void>; controller: AbortController }>();
  private running = false;
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private pollAgain = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: ConfigService<Env, true>,
  ) {}

  private get postgres(): boolean {
    return this.dataSource.options.type === 'postgres';
  }

  private get rules(): UrlRules {
    return {
      allowHttp: this.config.get('WEBHOOK_ALLOW_HTTP', { infer: true }),
      allowPrivateNetworks: this.config.get('WEBHOOK_ALLOW_PRIVATE_NETWORKS', { infer: true }),
    };
  }

  /** True once started and until shutdown. */
  get isRunning(): boolean {
    return this.running && !this.stopping;
  }

  /** Starts polling (idempotent): the first look for due deliveries happens at once. */
  start(): void {
    if (this.running || this.stopping) return;
    this.running = true;
    this.wake();
  }

  /** Looks for due deliveries now (after a commit that created some); no-op when not running. */
  wake(): void {
    if (!this.isRunning) return;
    if (this.polling) {
      this.pollAgain = true;
      return;
    }
    this.polling = this.poll().finally(() => {
      this.polling = undefined;
      if (this.pollAgain) {
        this.pollAgain = false;
        this.wake();
      } else this.schedule();
    });
  }

  /** Stops claiming, lets the attempts in flight finish (at most SHUTDOWN_TIMEOUT_MS), releases the others' leases. */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.running || this.stopping) return;
    this.stopping = true;
    clearTimeout(this.timer);
    await this.polling;
    const pending = [...this.inFlight.values()];
    if (pending.length === 0) return;
    const timeoutMs = this.config.get('SHUTDOWN_TIMEOUT_MS', { infer: true });
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([Promise.allSettled(pending.map((p) => p.promise)), deadline]);
    clearTimeout(timer);
    for (const entry of this.inFlight.values()) entry.controller.abort();
    await Promise.allSettled([...this.inFlight.values()].map((p) => p.promise));
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (!this.isRunning) return;
    this.timer = setTimeout(() => this.wake(), this.config.get('WEBHOOK_POLL_INTERVAL_MS', { infer: true }));
    this.timer.unref();
  }

  /** Claims as many due deliveries as there are free slots and starts their attempts. */
  private async poll(): Promise<void> {
    try {
      const free = this.config.get('WEBHOOK_CONCURRENCY', { infer: true }) - this.inFlight.size;
      if (free <= 0) return;
      const claimed = await this.claim(free);
      for (const delivery of claimed) this.run(delivery);
      if (claimed.length === free) this.pollAgain = true;
    } catch (error) {
      this.logger.warn({ msg: 'webhook poll failed', err: safeError(error) });
    }
  }

  /** The claim transaction (see the class comment); returns what the attempts need. */
  private async claim(limit: number): Promise<Claimed[]> {
    const now = new Date();
    const lease = new Date(now.getTime() + leaseMs(this.config.get('WEBHOOK_TIMEOUT_MS', { infer: true })));
    const token = randomUUID();
    const ids = await this.dataSource.transaction(async (manager) => {
      const rows: { id: number | string }[] = await manager.query(dueDeliveriesSql(this.postgres, limit), [sqlTime(this.postgres, now)]);
      const found = rows.map((row) => Number(row.id));
      if (found.length === 0) return found;
      await manager
        .createQueryBuilder()
        .update(WebhookDelivery)
        .set({
          status: 'delivering',
          claim_token: token,
          lease_expires_at: lease,
          next_attempt_at: lease,
          last_attempt_at: now,
          attempts: () => 'attempts + 1',
        })
        .whereInIds(found)
        .execute();
      return found;
    });
    if (ids.length === 0) return [];
    const deliveries = await this.dataSource.getRepository(WebhookDelivery).find({ where: { id: In(ids), claim_token: token } });
    const subscriptions = new Map(
      (await this.dataSource.getRepository(WebhookSubscription).find({ where: { id: In([...new Set(deliveries.map((d) => d.subscription_id))]) } })).map(
        (s) => [s.id, s],
      ),
    );
    return deliveries.flatMap((delivery) => {
      const subscription = subscriptions.get(delivery.subscription_id);
      if (!subscription) return [];
      const graceUntil = subscription.previous_secret_expires_at;
      const inGrace = subscription.previous_secret !== null && graceUntil !== null && new Date(graceUntil).getTime() > now.getTime();
      return [
        {
          id: delivery.id,
          token,
          subscriptionId: subscription.id,
          attempts: delivery.attempts,
          eventId: delivery.event_id,
          url: subscription.url,
          secrets: inGrace ? [subscription.secret, subscription.previous_secret as string] : [subscription.secret],
          apiVersion: subscription.api_version,
        },
      ];
    });
  }

  /** Makes one claimed delivery's attempt and records its outcome, in the background. */
  private run(claimed: Claimed): void {
    const controller = new AbortController();
    const promise = (async () => {
      if (this.stopping) return this.release(claimed);
      const event = await this.dataSource.getRepository(EventRecord).findOne({ where: { event_id: claimed.eventId } });
      if (!event) return this.complete(claimed, { result: 'failed', statusCode: null, error: 'event no longer exists' }, true);
      const body = JSON.stringify(toEventPayload(event, claimed.apiVersion));
      const outcome = await inSpan(
        'webhook delivery',
        { kind: 'client', parent: event.traceparent, attributes: deliverySpanAttributes(claimed, event.type) },
        async (span) => {
          const result = await sendAttempt(
            {
              url: claimed.url,
              id: claimed.eventId,
              body,
              secrets: claimed.secrets,
              timeoutMs: this.config.get('WEBHOOK_TIMEOUT_MS', { infer: true }),
              rules: this.rules,
            },
            controller.signal,
          );
          if (result.statusCode !== null) span.setAttributes({ 'http.response.status_code': result.statusCode });
          if (result.result === 'gone') span.fail('HTTP 410');
          else if (result.result === 'failed') span.fail(result.error);
          return result;
        },
      );
      if (controller.signal.aborted && outcome.result === 'failed') return this.release(claimed);
      await this.complete(claimed, outcome, false);
    })()
      .catch((error: unknown) => this.logger.warn({ msg: 'webhook delivery could not be recorded', delivery_id: claimed.id, err: safeError(error) }))
      .finally(() => {
        this.inFlight.delete(claimed.id);
        this.wake();
      });
    this.inFlight.set(claimed.id, { promise, controller });
  }

  /** Puts a claimed delivery back to `pending`, due now (shutdown). */
  private async release(claimed: Claimed): Promise<void> {
    await this.dataSource
      .createQueryBuilder()
      .update(WebhookDelivery)
      .set({ status: 'pending', next_attempt_at: new Date(), lease_expires_at: null, claim_token: null })
      .where('id = :id AND claim_token = :token', { id: claimed.id, token: claimed.token })
      .execute();
  }

  /**
   * Records an attempt's outcome, only while this claim still holds the delivery: delivered (the
   * webhook's failure count reset); gone (410: the delivery failed, the webhook disabled at once);
   * failed with a retry left (pending again at now + the schedule's delay with jitter); failed for
   * good (`final`, or no retry left: the webhook's failure count +1, disabled when it reaches
   * WEBHOOK_DISABLE_AFTER_FAILURES). Once committed, the attempt counts in
   * `webhook_delivery_attempts_total{outcome}` (not when the claim was lost: the other claim counts it).
   */
  private async complete(claimed: Claimed, outcome: AttemptOutcome, final: boolean): Promise<void> {
    const now = new Date();
    const claim = 'id = :id AND claim_token = :token';
    const params = { id: claimed.id, token: claimed.token };
    const done = { lease_expires_at: null, claim_token: null, last_status_code: outcome.statusCode };
    let recorded: AttemptMetricOutcome | undefined;
    await this.dataSource.transaction(async (manager) => {
      recorded = undefined;
      const update = () => manager.createQueryBuilder().update(WebhookDelivery);
      if (outcome.result === 'delivered') {
        const result = await update()
          .set({ ...done, status: 'delivered', delivered_at: now, next_attempt_at: null, last_error: null })
          .where(claim, params)
          .execute();
        if (result.affected) {
          recorded = 'delivered';
          await this.updateSubscription(manager, claimed.subscriptionId, 'consecutive_failures > 0', { consecutive_failures: 0 });
        }
        return;
      }
      if (outcome.result === 'gone') {
        const result = await update()
          .set({ ...done, status: 'failed', next_attempt_at: null, last_error: 'HTTP 410 (webhook disabled)' })
          .where(claim, params)
          .execute();
        if (result.affected) {
          recorded = 'gone';
          await this.updateSubscription(manager, claimed.subscriptionId, 'enabled = TRUE', {
            enabled: false,
            disabled_reason: 'the endpoint answered 410 Gone',
          });
        }
        return;
      }
      const delay = final ? null : retryDelayMs(this.config.get('WEBHOOK_RETRY_SCHEDULE', { infer: true }), claimed.attempts);
      const error = outcome.error.slice(0, 200);
      if (delay !== null) {
        const result = await update()
          .set({ ...done, status: 'pending', next_attempt_at: new Date(now.getTime() + delay), last_error: error })
          .where(claim, params)
          .execute();
        if (result.affected) recorded = 'retry';
        return;
      }
      const result = await update()
        .set({ ...done, status: 'failed', next_attempt_at: null, last_error: error })
        .where(claim, params)
        .execute();
      if (!result.affected) return;
      recorded = 'failed';
      await this.updateSubscription(manager, claimed.subscriptionId, 'TRUE', { consecutive_failures: () => 'consecutive_failures + 1' });
      const limit = Math.trunc(this.config.get('WEBHOOK_DISABLE_AFTER_FAILURES', { infer: true }));
      await this.updateSubscription(manager, claimed.subscriptionId, `enabled = TRUE AND consecutive_failures >= ${limit}`, {
        enabled: false,
        disabled_reason: `${limit} deliveries in a row failed after their last attempt`,
      });
    });
    if (recorded !== undefined) countDeliveryAttempt(recorded);
  }

  /** One conditional UPDATE of a webhook (its version and `updated_at` move with it: its representation changed). */
  private async updateSubscription(manager: EntityManager, id: number, condition: string, set: Record<string, unknown>): Promise<void> {
    await manager
      .createQueryBuilder()
      .update(WebhookSubscription)
      .set({ ...set, updated_at: new Date() } as QueryDeepPartialEntity<WebhookSubscription>)
      .where(`id = :id AND ${condition}`, { id })
      .execute();
  }
}
