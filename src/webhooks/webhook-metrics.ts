import type { DataSource } from 'typeorm';
import { counter, gauge, metricsEnabled } from '../observability/metrics/registry.js';

/**
 * What one delivery attempt came to, as `webhook_delivery_attempts_total` labels it: `delivered`
 * (2xx), `retry` (failed, another attempt scheduled), `failed` (failed for good: no attempt left,
 * or its event no longer exists), `gone` (410: the delivery failed and its webhook was disabled).
 */
export type AttemptMetricOutcome = 'delivered' | 'retry' | 'failed' | 'gone';

const attempts = counter(
  'webhook_delivery_attempts_total',
  'Webhook delivery attempts by outcome: delivered (2xx), retry (failed, another attempt scheduled), failed (failed for good), gone (410, the webhook disabled).',
  ['outcome'],
);
const attemptsBy: Record<AttemptMetricOutcome, ReturnType<typeof attempts.labels>> = {
  delivered: attempts.labels('delivered'),
  retry: attempts.labels('retry'),
  failed: attempts.labels('failed'),
  gone: attempts.labels('gone'),
};

/** Counts one recorded attempt (`webhook_delivery_attempts_total{outcome}`); nothing while metrics are off. */
export function countDeliveryAttempt(outcome: AttemptMetricOutcome): void {
  if (metricsEnabled()) attemptsBy[outcome].inc();
}

/** The outbox backlog at one instant: deliveries of enabled webhooks still to be made. */
export interface OutboxBacklog {
  /** Deliveries waiting for an attempt (`pending`: due, or a retry scheduled later). */
  pending: number;
  /** Deliveries claimed by a worker, their attempt in flight (`delivering`). */
  delivering: number;
  /** Seconds since the oldest due `pending` delivery became due; 0 when none is due (the worker keeps up). */
  oldestDueAgeSeconds: number;
}

/** The backlog query of {@link readOutboxBacklog}: per state, the count and the earliest `next_attempt_at`. */
export const OUTBOX_BACKLOG_SQL = `SELECT d.status AS status, COUNT(*) AS n, MIN(d.next_attempt_at) AS oldest FROM webhook_deliveries d
  INNER JOIN webhook_subscriptions w ON w.id = d.subscription_id WHERE d.status IN ('pending', 'delivering') AND w.enabled = TRUE GROUP BY d.status`;

/**
 * Reads the backlog of the delivery queue (docs/webhooks.md#watching-the-queue) at `now`: one grouped query over the
 * `pending` and `delivering` rows of enabled webhooks (a disabled webhook's deliveries wait for it
 * to be re-enabled and are not work), served by the index (`status`, `next_attempt_at`). The age
 * is `now` − the earliest `next_attempt_at` of the pending rows, when that is in the past.
 * @throws whatever the query throws (the database is down): the scrape then reports no value.
 */
export async function readOutboxBacklog(dataSource: DataSource, now: Date = new Date()): Promise<OutboxBacklog> {
  const rows: { status: string; n: number | string; oldest: Date | string | null }[] = await dataSource.query(OUTBOX_BACKLOG_SQL);
  const backlog: OutboxBacklog = { pending: 0, delivering: 0, oldestDueAgeSeconds: 0 };
  for (const row of rows) {
    if (row.status === 'delivering') backlog.delivering = Number(row.n);
    if (row.status !== 'pending') continue;
    backlog.pending = Number(row.n);
    if (row.oldest === null) continue;
    // SQLite gives TypeORM's UTC text (`YYYY-MM-DD HH:MM:SS.SSS`), PostgreSQL a Date
    const oldest = row.oldest instanceof Date ? row.oldest : new Date(`${String(row.oldest).replace(' ', 'T')}Z`);
    backlog.oldestDueAgeSeconds = Math.max(0, (now.getTime() - oldest.getTime()) / 1000);
  }
  return backlog;
}

/** The data source the backlog gauges read at a scrape (the latest application's; none after its shutdown). */
let watched: DataSource | undefined;
/** The backlog query in flight: the two gauges of one scrape (collected together) share it. */
let inFlight: Promise<OutboxBacklog | undefined> | undefined;

/**
 * The backlog for this scrape (one query, shared while in flight); undefined when it fails or no
 * database is watched. The query starts on the next turn of the event loop, once the scrape's
 * synchronous gauges have read the pool: its own connection never shows in
 * `db_client_connection_*`.
 */
function currentBacklog(): Promise<OutboxBacklog | undefined> {
  const dataSource = watched;
  if (dataSource === undefined || !dataSource.isInitialized) return Promise.resolve(undefined);
  inFlight ??= new Promise<void>((resolve) => setImmediate(resolve))
    .then(() => readOutboxBacklog(dataSource))
    .catch(() => undefined)
    .finally(() => {
      inFlight = undefined;
    });
  return inFlight;
}

let gaugesRegistered = false;

/**
 * Reports the outbox backlog of `dataSource` at each scrape (nothing on the delivery path):
 * `webhook_outbox_backlog{state="pending"|"delivering"}` and
 * `webhook_outbox_oldest_due_age_seconds` ({@link readOutboxBacklog}). A failing query (database
 * down) leaves no backlog series and an age of 0 for that scrape (the health and pool metrics show
 * the outage). Returns the function that stops watching (shutdown).
 */
export function watchOutboxBacklog(dataSource: DataSource): () => void {
  watched = dataSource;
  if (!gaugesRegistered) {
    gaugesRegistered = true;
    gauge(
      'webhook_outbox_backlog',
      'Webhook deliveries of enabled webhooks still to be made, by state: pending (waiting for an attempt, due or scheduled) or delivering (attempt in flight).',
      ['state'],
      async function () {
        const backlog = await currentBacklog();
        this.reset();
        if (backlog === undefined) return;
        this.labels('pending').set(backlog.pending);
        this.labels('delivering').set(backlog.delivering);
      },
    );
    gauge(
      'webhook_outbox_oldest_due_age_seconds',
      'Seconds since the oldest due pending webhook delivery became due (0: the worker keeps up).',
      [],
      async function () {
        const backlog = await currentBacklog();
        if (backlog === undefined) this.reset();
        else this.set(backlog.oldestDueAgeSeconds);
      },
    );
  }
  return () => {
    if (watched === dataSource) watched = undefined;
  };
}
