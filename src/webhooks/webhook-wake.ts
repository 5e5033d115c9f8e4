import { createRequire } from 'node:module';
import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type pg from 'pg';
import { safeError } from '../logging/logging.js';
import type { Env } from '../config/env.validation.js';
import { gauge } from '../observability/metrics/registry.js';
import { WebhookWorker } from './webhook-worker.js';

const require = createRequire(import.meta.url);

/**
 * The PostgreSQL notification channel that wakes the webhook workers: the fan-out sends
 * `NOTIFY resource_api_webhooks` in every transaction that inserted deliveries (PostgreSQL delivers
 * it at the commit, never after a rollback), and every process running the worker LISTENs on it.
 */
export const WEBHOOK_WAKE_CHANNEL = 'resource_api_webhooks';

/** The statement the fan-out runs in a transaction that inserted deliveries (PostgreSQL only). */
export const NOTIFY_WORKERS_SQL = `NOTIFY ${WEBHOOK_WAKE_CHANNEL}`;

/** Milliseconds between two checks of the LISTEN connection (`SELECT 1`): a dead one is found and replaced within about this long. */
export const LISTEN_HEARTBEAT_MS = 15_000;

/** The longest wait between two reconnection attempts (milliseconds); they start at 500 ms and double. */
export const LISTEN_MAX_BACKOFF_MS = 30_000;

/** The listener of the process, for the `webhook_listener_up` gauge. */
let current: WebhookWakeListener | undefined;

/**
 * The wake-up of the webhook worker across processes (docs/operations.md#roles-api-and-worker),
 * PostgreSQL only: one dedicated `pg` client — not a pool connection, so a transaction-mode pooler
 * in front of the pool does not matter — connected to DATABASE_LISTEN_URL (default DATABASE_URL;
 * `application_name` `resource-api-listen`) runs `LISTEN resource_api_webhooks`; each notification
 * calls {@link WebhookWorker.wake}, so a delivery an API-only process created is attempted at once
 * instead of at the next poll. Polling (WEBHOOK_POLL_INTERVAL_MS) stays the fallback.
 *
 * When the connection breaks (error, end, or a failed `SELECT 1` every {@link LISTEN_HEARTBEAT_MS})
 * it reconnects after 0.5 s, 1 s, 2 s … at most {@link LISTEN_MAX_BACKOFF_MS}, and wakes the worker
 * once connected again (notifications sent meanwhile are lost). Started by {@link start} in the
 * processes that run the worker (ROLE `all`, `worker`); closed on shutdown. On SQLite it never
 * connects: the fan-out wakes the worker in process.
 */
@Injectable()
export class WebhookWakeListener implements OnApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  private client: pg.Client | undefined;
  private connected = false;
  private started = false;
  private stopped = false;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly worker: WebhookWorker,
    private readonly config: ConfigService<Env, true>,
  ) {}

  /** True while the LISTEN connection is up and listening. */
  get isListening(): boolean {
    return this.connected;
  }

  /** Connects and LISTENs (idempotent; nothing on SQLite). Returns at once; the connection is made in the background. */
  start(): void {
    if (this.started || this.stopped || this.config.get('DATABASE_LISTEN_URL', { infer: true }) === undefined) return;
    this.started = true;
    current = this;
    gauge(
      'webhook_listener_up',
      'Whether the LISTEN connection that wakes the webhook worker is up (1) or reconnecting (0); only in processes running the worker on PostgreSQL.',
      [],
      function () {
        this.set(current?.isListening ? 1 : 0);
      },
    );
    void this.connect();
  }

  /**
   * A readiness probe: resolves when the LISTEN connection is up and answers `SELECT 1`.
   * @throws Error when it is down or reconnecting, or the query fails
   */
  async probe(): Promise<void> {
    if (!this.connected || !this.client) throw new Error('the LISTEN connection is down');
    await this.client.query('SELECT 1');
  }

  /** Stops reconnecting and closes the connection. */
  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.connected = false;
    clearTimeout(this.retryTimer);
    clearInterval(this.heartbeat);
    if (current === this) current = undefined;
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const { Client } = require('pg') as typeof pg;
    const timeoutMs = this.config.get('DB_QUERY_TIMEOUT_MS', { infer: true });
    const client = new Client({
      connectionString: this.config.get('DATABASE_LISTEN_URL', { infer: true }),
      application_name: 'resource-api-listen',
      connectionTimeoutMillis: timeoutMs,
      statement_timeout: timeoutMs,
      query_timeout: timeoutMs + 1000,
      keepAlive: true,
    });
    this.client = client;
    let failed = false;
    const fail = (error?: unknown) => {
      if (failed) return;
      failed = true;
      this.connected = false;
      clearInterval(this.heartbeat);
      client.removeAllListeners('notification');
      void client.end().catch(() => undefined);
      if (this.stopped) return;
      const delayMs = Math.min(LISTEN_MAX_BACKOFF_MS, 500 * 2 ** this.failures);
      this.failures += 1;
      this.logger.warn({
        msg: `webhook wake-up: LISTEN connection lost; reconnecting in ${delayMs} ms (polling goes on)`,
        err: error === undefined ? undefined : safeError(error),
      });
      this.retryTimer = setTimeout(() => void this.connect(), delayMs);
      this.retryTimer.unref();
    };
    client.on('error', fail);
    client.on('end', () => fail());
    client.on('notification', (message) => {
      if (message.channel === WEBHOOK_WAKE_CHANNEL) this.worker.wake();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${WEBHOOK_WAKE_CHANNEL}`);
    } catch (error) {
      fail(error);
      return;
    }
    if (failed) return;
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.connected = true;
    this.failures = 0;
    this.logger.log(`webhook wake-up: listening on ${WEBHOOK_WAKE_CHANNEL}`);
    this.heartbeat = setInterval(() => {
      client.query('SELECT 1').catch(fail);
    }, LISTEN_HEARTBEAT_MS);
    this.heartbeat.unref();
    // what was notified while not listening is lost: look for due deliveries now
    this.worker.wake();
  }
}
