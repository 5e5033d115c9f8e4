import net, { type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { type FreshApp, loadFreshApp } from './fresh-app.js';

/**
 * Helpers of the mail e2e tests (docs/operations.md#mail): a real SMTP server on loopback whose
 * mails are parsed as a mailbox would, a log capture, and a fresh application that mails links to
 * {@link APP_URL} and runs its mail worker.
 */

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The APP_URL of {@link boot}'s application: the mailed links start with it. */
export const APP_URL = 'https://app.example.test/account';

/** Polls `check` every 50 ms until it returns true; fails after `timeoutMs` with `what`. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** A free TCP port on 127.0.0.1 (listened on, then closed). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A real SMTP server on 127.0.0.1 that keeps every mail it accepted, parsed; it can answer 451 to the next MAIL FROMs. */
export class Mailbox {
  readonly received: ParsedMail[] = [];
  /** MAIL FROM commands still to refuse with 451 (a server that is up but says "try again later"). */
  refuseNext = 0;
  refused = 0;
  private server: SMTPServer | undefined;

  constructor(readonly port: number) {}

  async start(): Promise<void> {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onMailFrom: (_address, _session, callback) => {
        if (this.refuseNext > 0) {
          this.refuseNext -= 1;
          this.refused += 1;
          return callback(Object.assign(new Error('4.3.2 try again later'), { responseCode: 451 }));
        }
        callback();
      },
      onData: (stream, _session, callback) => {
        simpleParser(stream).then(
          (mail) => {
            this.received.push(mail);
            callback();
          },
          (error: Error) => callback(error),
        );
      },
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', () => resolve()));
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The mails to `address`. */
  to(address: string): ParsedMail[] {
    return this.received.filter((mail) => addressesOf(mail).includes(address));
  }
}

/** The recipients of a parsed mail, lower-cased. */
export function addressesOf(mail: ParsedMail): string[] {
  const to = mail.to === undefined ? [] : Array.isArray(mail.to) ? mail.to : [mail.to];
  return to.flatMap((group) => group.value.map((entry) => (entry.address ?? '').toLowerCase()));
}

/** Collects every log line the application writes. */
export class Capture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  }
}

/** Boots a fresh application with `env`, logs at `info` into `capture`, and starts its mail worker. */
export async function boot(
  env: Record<string, string | undefined>,
  capture: Capture,
): Promise<{ fresh: FreshApp & { restoreEnv: () => void }; app: NestExpressApplication }> {
  const fresh = await loadFreshApp({
    APP_URL,
    MAIL_FROM: 'Resource API <no-reply@example.test>',
    MAIL_RETRY_SCHEDULE: '1,1,1,1,1,1',
    MAIL_POLL_INTERVAL_MS: '100',
    ...env,
  });
  const { PARAMS_PROVIDER_TOKEN } = await import('nestjs-pino');
  const { loggerParams } = await import('../../src/logging/logging.js');
  const { pinoHttp } = loggerParams('info') as { pinoHttp: object };
  const app = await fresh.createTestApp({ override: (builder) => builder.overrideProvider(PARAMS_PROVIDER_TOKEN).useValue({ pinoHttp: [pinoHttp, capture] }) });
  const { MailWorker } = await import('../../src/mail/mail-worker.js');
  app.get(MailWorker).start();
  return { fresh, app };
}

/** Empties the shared store (the throttles' counters) of `app`. */
export async function clearStore(app: NestExpressApplication): Promise<void> {
  const { SharedStore } = await import('../../src/store/shared-store.js');
  await app.get(SharedStore).clear();
}
