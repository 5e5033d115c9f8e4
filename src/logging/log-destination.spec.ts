import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { StdoutLog } from './log-destination.js';

describe('StdoutLog (docs/operations.md#logs: lines written asynchronously, none lost at shutdown)', () => {
  let dir: string | undefined;
  let fd: number | undefined;
  afterEach(() => {
    if (fd !== undefined) closeSync(fd);
    if (dir) rmSync(dir, { recursive: true, force: true });
    fd = dir = undefined;
  });

  function open(): { file: string; log: StdoutLog } {
    dir = mkdtempSync(path.join(os.tmpdir(), 'stdout-log-'));
    const file = path.join(dir, 'out.log');
    fd = openSync(file, 'a');
    return { file, log: new StdoutLog(fd) };
  }

  it('does not write a line during the call, and has written every line, in order, once the shutdown hook resolved', async () => {
    const { file, log } = open();
    const lines = Array.from({ length: 5000 }, (_, i) => `{"n":${i},"msg":"${'x'.repeat(200)}"}\n`);
    log.write(lines[0]);
    // asynchronous: the first line is handed to the thread pool, not written inside write()
    expect(readFileSync(file, 'utf8')).toBe('');
    for (const line of lines.slice(1)) log.write(line);
    await log.onApplicationShutdown();
    expect(readFileSync(file, 'utf8')).toBe(lines.join(''));
  });

  it('writes the lines logged after the shutdown hook at once (the last hooks’ lines reach the descriptor before exit)', async () => {
    const { file, log } = open();
    log.write('before\n');
    await log.onApplicationShutdown();
    log.write('after\n');
    expect(readFileSync(file, 'utf8')).toBe('before\nafter\n');
    // a second shutdown (close() after a signal) changes nothing
    await log.onApplicationShutdown();
    log.write('again\n');
    expect(readFileSync(file, 'utf8')).toBe('before\nafter\nagain\n');
  });

  it('resolves the shutdown hook at once when nothing is pending', async () => {
    const { log } = open();
    const started = performance.now();
    await log.onApplicationShutdown();
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
