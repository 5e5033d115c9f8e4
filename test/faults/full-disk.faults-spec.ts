import { afterAll, describe, expect, it } from '@jest/globals';
import { statSync } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import path from 'node:path';
import { loggedErrors, mountSmallFilesystem, type SmallFilesystem, startFaultServer } from './infra.js';
import { CLEAN, LOAD_AFTER_MS, LOAD_BEFORE_MS, Scenario, sleep, WRITERS } from './scenario.js';

/**
 * The filesystem holding the SQLite file (MiB): far more than the load writes before the disk is
 * filled (about 45 MiB on a quiet machine), so that freeing the filler frees room for the database
 * again — a disk the database itself has filled cannot recover without an operator.
 */
const DISK_MB = 256;
/** Characters added to each todo's content (six times that to an article's body): the database file must grow while the disk is full, not only reuse its WAL. */
const CONTENT_PADDING = 9_000;
/** How long the disk stays full (ms). */
const FULL_MS = 5_000;

/** Appends zeros to `file` until the filesystem refuses (ENOSPC); resolves with the bytes written. */
async function fill(file: string): Promise<number> {
  const handle = await open(file, 'a');
  const chunk = Buffer.alloc(1024 * 1024);
  let written = 0;
  try {
    for (;;) {
      const { bytesWritten } = await handle.write(chunk, 0, chunk.length);
      written += bytesWritten;
      if (bytesWritten < chunk.length) break;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  }
  // the last pages: smaller writes until not even 4 KiB fits
  for (let size = 512 * 1024; size >= 4096; size /= 2) {
    try {
      for (;;) written += (await handle.write(chunk, 0, size)).bytesWritten;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
    }
  }
  await handle.close();
  return written;
}

let disk: SmallFilesystem | undefined;
try {
  disk = mountSmallFilesystem(DISK_MB);
} catch (error) {
  process.stdout.write(`\nfault suite: full-disk scenario skipped: no small filesystem can be mounted here (${(error as Error).message})\n`);
}

/**
 * Fault 6: the disk of the SQLite file fills up under load (a filler file takes every free byte of
 * a small filesystem mounted for the test: a tmpfs, else a loop-mounted ext4 image) for
 * {@link FULL_MS}, then the filler is removed. Writes refused meanwhile must be 503 (with
 * Retry-After), never 500; writes succeed again without a restart; the audit is clean. Skipped,
 * with the reason printed, where nothing can be mounted.
 */
(disk ? describe : describe.skip)('fault: full disk under SQLite', () => {
  const cleanups: Array<() => unknown> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    disk?.unmount();
  });

  it('writes refused with 503 while the disk is full, never 500; writes succeed again once space is freed; audit clean', async () => {
    const dir = disk!.dir;
    const server = await startFaultServer(dir, {});
    cleanups.push(() => server.process.kill());
    const target = { url: server.base };
    const scenario = new Scenario('full-disk', CONTENT_PADDING);
    cleanups.push(() => scenario.abort());
    await scenario.addWriters(WRITERS, [target]);
    scenario.start();
    await sleep(LOAD_BEFORE_MS);

    const sizes = () =>
      ['app.sqlite', 'app.sqlite-wal'].map((name) => Math.round((statSync(path.join(dir, name), { throwIfNoEntry: false })?.size ?? 0) / 1024)).join('+');
    const sizesBefore = sizes();
    const filler = path.join(dir, 'filler');
    const fillingAt = Date.now();
    let filled = await fill(filler);
    const fullAt = Date.now();
    // top the filler up while the disk is to stay full: space the database gives back is taken again
    while (Date.now() < fullAt + FULL_MS) {
      await sleep(200);
      filled += await fill(filler);
    }
    const sizesFull = sizes();
    await unlink(filler);
    const freedAt = Date.now();
    await sleep(LOAD_AFTER_MS);
    await scenario.stop();
    const report = await scenario.audit(target.url);

    const whileFull = scenario.ledger.attempts().filter(({ attempt }) => attempt.at >= fullAt && attempt.at + attempt.ms <= freedAt);
    const refusedWhileFull = whileFull.filter(({ attempt }) => (attempt.status ?? 0) >= 500 || attempt.failure);
    const missingRetryAfter = scenario.ledger.attempts().filter(({ attempt }) => attempt.status === 503 && !attempt.retryAfter).length;
    const recovered = scenario.endedAfter(freedAt, (attempt, op) => op.kind === 'create-todo' && attempt.status === 201 && attempt.at >= freedAt)[0];
    scenario.summary(
      report,
      {
        filesystem: disk!.kind.replace(/ /g, '_'),
        fillerMiB: Math.round(filled / 1048576),
        dbWalKiB: `${sizesBefore}>${sizesFull}`,
        fillMs: fullAt - fillingAt,
        triesWhileFull: whileFull.length,
        failedWhileFull: refusedWhileFull.length,
        first5xxMs: scenario.endedAfter(fillingAt, (attempt) => (attempt.status ?? 0) >= 500).map(({ endedAt }) => endedAt - fillingAt)[0],
        missingRetryAfter,
        recoveredMs: recovered ? recovered.endedAt - freedAt : undefined,
      },
      loggedErrors(server.process.output()),
    );
    expect({
      // the fault took effect: some write could not be made while the disk was full
      writesFailedWhileFull: refusedWhileFull.length > 0,
      missingRetryAfter,
      recoveredWithoutRestart: recovered !== undefined && server.process.child.exitCode === null,
      ...scenario.verdict(report),
    }).toEqual({ writesFailedWhileFull: true, missingRetryAfter: 0, recoveredWithoutRestart: true, ...CLEAN });
  });
});
