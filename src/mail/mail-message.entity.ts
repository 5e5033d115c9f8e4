import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { TIMESTAMP_TYPE } from '../config/database-kind.js';

/**
 * Mail statuses: `pending` (an attempt is due at `next_attempt_at`), `sending` (claimed by a worker
 * until `next_attempt_at`, the lease's end), `sent` (the SMTP server accepted it), `failed` (refused
 * for good, every attempt used, or no longer worth sending after `discard_after`).
 */
export const MAIL_STATUSES = ['pending', 'sending', 'sent', 'failed'] as const;
export type MailStatus = (typeof MAIL_STATUSES)[number];

/**
 * One mail in the outbox (docs/operations.md#mail): written in the transaction of the change that
 * causes it, sent by the mail worker. The body (`text_body`, which may carry a one-time link) is
 * kept only until the mail is sent or given up, then cleared; `message_id` stays the same over
 * every attempt.
 */
@Entity('mail_outbox')
@Index('idx_mail_outbox_status_next_attempt_at', ['status', 'next_attempt_at'])
export class MailMessage {
  @PrimaryGeneratedColumn()
  id: number;

  /** The `Message-ID` header, `<…@…>`: the same on every attempt, so a receiver can tell a repeat. */
  @Column({ type: 'varchar', length: 255 })
  message_id: string;

  /** The one recipient's address. Never logged. */
  @Column({ type: 'varchar', length: 254 })
  recipient: string;

  @Column({ type: 'varchar', length: 200 })
  subject: string;

  /** The text part; null once the mail is sent or given up. */
  @Column({ type: 'text', nullable: true })
  text_body: string | null;

  @Column({ type: 'varchar', length: 16, default: 'pending' })
  status: MailStatus;

  /** Attempts started so far. */
  @Column({ type: 'integer', default: 0 })
  attempts: number;

  /** When the next attempt is due (pending); the lease's end while sending; null when done. */
  @Column({ type: TIMESTAMP_TYPE, nullable: true })
  next_attempt_at: Date | null;

  /** Random token of the claim that holds the lease: completion is conditional on it. */
  @Column({ type: 'varchar', length: 36, nullable: true })
  claim_token: string | null;

  /** Short reason of the last failure (`SMTP 451`, `ECONNECTION`…); never the server's text, which can quote the address. */
  @Column({ type: 'varchar', length: 200, nullable: true })
  last_error: string | null;

  /** After this the mail is not sent any more (a reset link whose token expired); null: no limit. */
  @Column({ type: TIMESTAMP_TYPE, nullable: true })
  discard_after: Date | null;

  @Column({ type: TIMESTAMP_TYPE, nullable: true })
  sent_at: Date | null;

  @Column({ type: TIMESTAMP_TYPE })
  created_at: Date;
}
