import { randomUUID } from 'node:crypto';
import { type BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DataSource, In } from 'typeorm';
import { type Env, mailFromOf } from '../config/env.validation.js';
import { safeError } from '../logging/logging.js';
import { leaseMs, retryDelayMs, sqlTime } from '../webhooks/webhook-times.js';
import { MailMessage } from './mail-message.entity.js';
import { classifySendError, createMailTransport, type MailTransport, SMTP_TIMEOUT_MS } from './mail-transport.js';

/** Mails one process sends at the same time. */
export const MAIL_CONCURRENCY = 4;

/**
 * The due query of the claim: ids of at most `limit` mails that are `pending` with
 * `next_attempt_at` ≤ the one parameter (now), or `sending` with an expired lease (a process that
 * died holding it), oldest first. On PostgreSQL the rows are locked and rows other claims hold are
 * skipped (`FOR UPDATE SKIP LOCKED`), so several processes never claim the same mail. Served by
 * the index (`status`, `next_attempt_at`); on SQLite each status is its own range of it, as the
 * webhook worker's query does.
 */
export function dueMailSql(postgres: boolean, limit: number): string {
  const n = Math.trunc(limit);
  if (postgres) {
    return `SELECT id FROM mail_outbox WHERE status IN ('pending', 'sending') AND next_attempt_at <= $1
    ORDER BY next_attempt_at, id LIMIT ${n} FOR UPDATE SKIP LOCKED`;
  }
  const oldest = (status: string) =>
    `SELECT * FROM (SELECT id, next_attempt_at FROM mail_outbox WHERE status = '${status}' AND next_attempt_at <= (SELECT at FROM due) ORDER BY next_attempt_at, id LIMIT ${n})`;
  return `WITH due(at) AS (SELECT ?) SELECT id FROM (${oldest('pending')} UNION ALL ${oldest('sending')}) ORDER BY next_attempt_at, id LIMIT ${n}`;
}

/** A mail this process claimed. */
interface ClaimedMail {
  row: MailMessage;
  token: string;
}

/**
 * The mail worker (docs/operations.md#mail), the webhook worker's pattern for the mail outbox:
 * finds due mail every MAIL_POLL_INTERVAL_MS (and at once on {@link wake}), claims at most
 * {@link MAIL_CONCURRENCY} in one short transaction — on PostgreSQL `FOR UPDATE SKIP LOCKED`, then
 * `sending` with a random claim token and a lease (`next_attempt_at` holds its end) — and sends
 * each through the transport (SMTP_URL, else `.eml` files).
 *
 * Never lost, never sent twice by a retry: the mail is marked `sent` (its body cleared) right after
 * the server accepted it, with an UPDATE conditional on the claim token; a 4xx or a connection
 * failure puts it back to `pending` after the MAIL_RETRY_SCHEDULE's delay (±10 % jitter); a 5xx
 * refusal of the envelope or message, or the last attempt failing, marks it `failed`. A mail
 * still due after its `discard_after` is marked `failed` unsent. Only a process that dies between
 * the server's acceptance and that UPDATE sends a mail again, with the same `Message-ID`. Logs
 * carry the mail's id and the reason, never its address or body.
 */
@Injectable()
export class MailWorker implements BeforeApplicationShutdown {
  private readonly logger = new Logger('Mail');
  private readonly inFlight = new Map<number, Promise<void>>();
  private transport: MailTransport | undefined;
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

  /** True once started and until shutdown. */
  get isRunning(): boolean {
    return this.running && !this.stopping;
  }

  /** Starts polling (idempotent), the first look at once; logs where mail goes (host and port, or the folder). */
  start(): void {
    if (this.running || this.stopping) return;
    this.transport = createMailTransport(this.config.get('SMTP_URL', { infer: true }));
    this.logger.log(`mail goes to ${this.transport.target}`);
    this.running = true;
    this.wake();
  }

  /** Looks for due mail now (after a commit that queued some); no-op when not running. */
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

  /** Stops claiming and waits for the sends in flight (each ends within the SMTP timeouts); their leases end the others. */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.running || this.stopping) return;
    this.stopping = true;
    clearTimeout(this.timer);
    await this.polling;
    await Promise.allSettled([...this.inFlight.values()]);
    this.transport?.close();
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (!this.isRunning) return;
    this.timer = setTimeout(() => this.wake(), this.config.get('MAIL_POLL_INTERVAL_MS', { infer: true }));
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    try {
      const free = MAIL_CONCURRENCY - this.inFlight.size;
      if (free <= 0) return;
      const claimed = await this.claim(free);
      for (const mail of claimed) this.run(mail);
      if (claimed.length === free) this.pollAgain = true;
    } catch (error) {
      this.logger.warn({ msg: 'mail poll failed', err: safeError(error) });
    }
  }

  /** The claim transaction (see the class comment). */
  private async claim(limit: number): Promise<ClaimedMail[]> {
    const now = new Date();
    const lease = new Date(now.getTime() + leaseMs(SMTP_TIMEOUT_MS * 3));
    const token = randomUUID();
    const ids = await this.dataSource.transaction(async (manager) => {
      const rows: { id: number | string }[] = await manager.query(dueMailSql(this.postgres, limit), [sqlTime(this.postgres, now)]);
      const found = rows.map((row) => Number(row.id));
      if (found.length === 0) return found;
      await manager
        .createQueryBuilder()
        .update(MailMessage)
        .set({ status: 'sending', claim_token: token, next_attempt_at: lease, attempts: () => 'attempts + 1' })
        .whereInIds(found)
        .execute();
      return found;
    });
    if (ids.length === 0) return [];
    const rows = await this.dataSource.getRepository(MailMessage).find({ where: { id: In(ids), claim_token: token } });
    return rows.map((row) => ({ row, token }));
  }

  /** Sends one claimed mail and records the outcome, in the background. */
  private run({ row, token }: ClaimedMail): void {
    const promise = (async () => {
      const now = new Date();
      if (row.text_body === null || (row.discard_after !== null && new Date(row.discard_after).getTime() <= now.getTime())) {
        await this.finish(row.id, token, { status: 'failed', last_error: 'expired before it could be sent' });
        this.logger.warn({ msg: 'mail given up: expired before it could be sent', mail_id: row.id });
        return;
      }
      try {
        await this.transport!.send({
          messageId: row.message_id,
          from: mailFromOf({ MAIL_FROM: this.config.get('MAIL_FROM', { infer: true }) }),
          to: row.recipient,
          subject: row.subject,
          text: row.text_body,
        });
      } catch (error) {
        await this.failed(row, token, error);
        return;
      }
      await this.finish(row.id, token, { status: 'sent', sent_at: new Date(), last_error: null });
      this.logger.log({ msg: 'mail sent', mail_id: row.id, attempt: row.attempts });
    })()
      .catch((error: unknown) => this.logger.warn({ msg: 'mail outcome could not be recorded', mail_id: row.id, err: safeError(error) }))
      .finally(() => {
        this.inFlight.delete(row.id);
        this.wake();
      });
    this.inFlight.set(row.id, promise);
  }

  /** A refused or failed attempt: pending again after the schedule's delay, or failed for good (see the class comment). */
  private async failed(row: MailMessage, token: string, error: unknown): Promise<void> {
    const { permanent, reason } = classifySendError(error);
    const delay = permanent ? null : retryDelayMs(this.config.get('MAIL_RETRY_SCHEDULE', { infer: true }), row.attempts);
    if (delay === null) {
      await this.finish(row.id, token, { status: 'failed', last_error: reason });
      this.logger.warn({ msg: `mail given up after ${row.attempts} attempt(s): ${reason}`, mail_id: row.id });
      return;
    }
    await this.dataSource
      .createQueryBuilder()
      .update(MailMessage)
      .set({ status: 'pending', claim_token: null, next_attempt_at: new Date(Date.now() + delay), last_error: reason })
      .where('id = :id AND claim_token = :token', { id: row.id, token })
      .execute();
    this.logger.warn({ msg: `mail attempt ${row.attempts} failed: ${reason}; retry in ${Math.round(delay / 1000)} s`, mail_id: row.id });
  }

  /** Ends a mail (sent or failed) while this claim still holds it: no lease, no next attempt, the body cleared. */
  private async finish(id: number, token: string, set: Pick<MailMessage, 'status' | 'last_error'> & Partial<Pick<MailMessage, 'sent_at'>>): Promise<void> {
    await this.dataSource
      .createQueryBuilder()
      .update(MailMessage)
      .set({ ...set, claim_token: null, next_attempt_at: null, text_body: null })
      .where('id = :id AND claim_token = :token', { id, token })
      .execute();
  }
}
