import type { OnApplicationShutdown } from '@nestjs/common';
import { type DestinationStream, destination } from 'pino';

/** The longest the shutdown waits for the log's pending lines to be written (a reader that stopped reading must not hold the exit). */
export const LOG_DRAIN_TIMEOUT_MS = 2000;

/** A pino destination as `pino.destination` makes it (sonic-boom). */
type SonicBoom = ReturnType<typeof destination>;

/**
 * Resolves once every line `stream` was given so far is written to its file descriptor (its
 * `drain`: no write in flight, nothing buffered), or after `timeoutMs`. Writing an empty chunk
 * makes an idle stream report `drain` too, so it never waits for nothing.
 */
export function drained(stream: SonicBoom, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      stream.off('drain', done);
      stream.off('error', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    stream.on('drain', done);
    stream.on('error', done);
    stream.write('');
  });
}

/**
 * Where the log lines go (docs/operations.md#logs): a file descriptor (standard output by default)
 * written asynchronously — a line is appended to a buffer and written by the thread pool, so a
 * request no longer waits for the write of its line (pino's `destination({ sync: false })`).
 *
 * Nothing is lost at exit: {@link onApplicationShutdown} (Nest's shutdown hooks, which SIGTERM and
 * SIGINT run) waits until every line so far is written ({@link drained}, at most
 * {@link LOG_DRAIN_TIMEOUT_MS}) and from then on writes synchronously, so the lines of the last
 * hooks reach the descriptor before `process.exit`; pino writes what an exit without the hooks
 * leaves buffered synchronously, at `exit`.
 */
export class StdoutLog implements DestinationStream, OnApplicationShutdown {
  private readonly buffered: SonicBoom;
  private direct?: SonicBoom;

  /** `fd`: the file descriptor the lines are written to (1, standard output, unless a test says otherwise). */
  constructor(private readonly fd = 1) {
    this.buffered = destination({ dest: fd, sync: false });
  }

  /** Takes one line (pino's destination interface); written later, or at once after shutdown began. */
  write(line: string): void {
    if (this.direct) this.direct.write(line);
    else this.buffered.write(line);
  }

  /** Writes everything pending, then switches to synchronous writes for the lines still to come. */
  async onApplicationShutdown(): Promise<void> {
    if (this.direct) return;
    await drained(this.buffered, LOG_DRAIN_TIMEOUT_MS);
    this.direct = destination({ dest: this.fd, sync: true });
  }
}
