import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { EntityManager } from 'typeorm';
import { type Env, mailFromOf } from '../config/env.validation.js';
import { insertRow } from '../database/insert-row.js';
import { MailMessage } from './mail-message.entity.js';
import { MailWorker } from './mail-worker.js';

/** A mail to queue: one recipient, a subject and a plain-text body. */
export interface NewMail {
  to: string;
  subject: string;
  text: string;
  /** Not sent after this instant (a link that no longer works by then); undefined: no limit. */
  discardAfter?: Date;
}

/**
 * The mail outbox (docs/operations.md#mail): {@link enqueue} writes the mail in the caller's
 * transaction, so it is sent exactly when the change that causes it commits; the mail worker sends
 * it. Call {@link wake} once that transaction committed, so that this process's worker sends at once
 * rather than at its next poll (MAIL_POLL_INTERVAL_MS; an API-only process's mail is sent by a
 * worker process at its next poll).
 */
@Injectable()
export class MailOutbox {
  private readonly domain: string;

  constructor(
    private readonly worker: MailWorker,
    config: ConfigService<Env, true>,
  ) {
    this.domain = messageIdDomain(mailFromOf({ MAIL_FROM: config.get('MAIL_FROM', { infer: true }) }));
  }

  /**
   * Inserts `mail` with `manager` (which must be in an active transaction) as `pending`, due now,
   * with its `Message-ID` (`<uuid@domain of MAIL_FROM>`), fixed for every attempt. Returns the row's id.
   * @throws Error (a programming error → 500) without an active transaction; what the insert throws.
   */
  async enqueue(manager: EntityManager, mail: NewMail): Promise<number> {
    if (!manager.queryRunner?.isTransactionActive) throw new Error('MailOutbox.enqueue: needs the entity manager of an active transaction');
    const now = new Date();
    return insertRow(manager.getRepository(MailMessage), {
      message_id: `<${randomUUID()}@${this.domain}>`,
      recipient: mail.to,
      subject: mail.subject,
      text_body: mail.text,
      status: 'pending',
      attempts: 0,
      next_attempt_at: now,
      claim_token: null,
      last_error: null,
      discard_after: mail.discardAfter ?? null,
      sent_at: null,
      created_at: now,
    });
  }

  /** Tells this process's worker that mail was committed (no-op when it does not run here). */
  wake(): void {
    this.worker.wake();
  }
}

/** The domain of a `From` (`Name <a@example.com>` → `example.com`), for Message-IDs; `localhost` when there is none. */
export function messageIdDomain(from: string): string {
  const match = /@([^\s<>@]+?)>?$/.exec(from.trim());
  return match ? match[1].toLowerCase() : 'localhost';
}
