import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';

/** Where mail goes outside production without SMTP_URL: one `.eml` file per mail (docs/operations.md#mail). */
export const MAIL_DIRECTORY = path.join('data', 'mail');

/** Milliseconds the SMTP client waits to connect, for the greeting, and for each answer of the server. */
export const SMTP_TIMEOUT_MS = 30_000;

/** One mail as the transport sends it. */
export interface OutgoingMail {
  /** `<…@…>`, the same on every attempt. */
  messageId: string;
  from: string;
  to: string;
  subject: string;
  text: string;
}

/** Sends mail: resolves once the SMTP server accepted it (or the file is written); rejects otherwise. */
export interface MailTransport {
  /** Where it sends, for the start-up log line, never with credentials: `smtp://mail.example.com:587` or `data/mail/`. */
  readonly target: string;
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

/**
 * What a failed attempt tells the worker: `permanent` when the SMTP server refused the envelope or
 * the message with a 5xx (retrying cannot help), else a retry is worth it (a 4xx, a connection
 * that failed or timed out, an authentication the operator can fix). `reason` is short and safe to
 * store and log — the reply code or the error code, never the server's text (which can quote the
 * address).
 */
export function classifySendError(error: unknown): { permanent: boolean; reason: string } {
  const e = (error ?? {}) as { responseCode?: unknown; code?: unknown };
  const responseCode = typeof e.responseCode === 'number' ? e.responseCode : undefined;
  const code = typeof e.code === 'string' && /^[A-Z0-9_]{1,40}$/.test(e.code) ? e.code : undefined;
  const reason = [responseCode !== undefined ? `SMTP ${responseCode}` : undefined, code].filter(Boolean).join(' ') || 'send failed';
  const permanent = responseCode !== undefined && responseCode >= 500 && (code === 'EENVELOPE' || code === 'EMESSAGE');
  return { permanent, reason };
}

/**
 * The transport of SMTP_URL (`smtp://` STARTTLS when the server offers it, `smtps://` implicit TLS;
 * user and password from the URL), or, without it, `.eml` files under {@link MAIL_DIRECTORY}
 * (`<message id>.eml`, written whole or not at all), both through nodemailer. A new SMTP connection
 * per mail (no pool): the worker sends few, and a pool would hold a connection the server may drop.
 */
export function createMailTransport(smtpUrl: string | undefined, directory: string = MAIL_DIRECTORY): MailTransport {
  if (smtpUrl !== undefined) {
    const url = new URL(smtpUrl);
    const transporter: Transporter = nodemailer.createTransport({
      url: smtpUrl,
      connectionTimeout: SMTP_TIMEOUT_MS,
      greetingTimeout: SMTP_TIMEOUT_MS,
      socketTimeout: SMTP_TIMEOUT_MS,
      // nodemailer logs nothing of its own; the worker logs what it decides, without addresses
      logger: false,
    });
    const port = url.port || (url.protocol === 'smtps:' ? '465' : '587');
    return {
      target: `${url.protocol}//${url.hostname}:${port}`,
      send: async (mail) => {
        await transporter.sendMail(toMessage(mail));
      },
      close: () => transporter.close(),
    };
  }
  const transporter = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    target: `${directory}/`,
    send: async (mail) => {
      const info = (await transporter.sendMail(toMessage(mail))) as unknown as { message: Buffer };
      await mkdir(directory, { recursive: true });
      const file = path.join(directory, `${fileName(mail.messageId)}.eml`);
      await writeFile(`${file}.tmp`, info.message);
      await rename(`${file}.tmp`, file);
    },
    close: () => transporter.close(),
  };
}

/** The `.eml` file name of a Message-ID: its characters outside `[A-Za-z0-9._@-]` become `_`, the angle brackets dropped. */
export function fileName(messageId: string): string {
  return messageId.replace(/^<|>$/g, '').replace(/[^A-Za-z0-9._@-]/g, '_');
}

function toMessage(mail: OutgoingMail) {
  return { messageId: mail.messageId, from: mail.from, to: mail.to, subject: mail.subject, text: mail.text };
}
