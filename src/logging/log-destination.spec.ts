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

  it('writes no line but the first during the calls, and has written every line, in order, once the shutdown hook resolved', async () => {
    const { file, log } = open();
    const lines = Array.from({ length: 5000 }, (_, i) => `{"n":${i},"msg":"${'x'.repeat(200)}"}\n`);
    for (const line of lines) log.write(line);
    // asynchronous: the first write goes to the thread pool (it may have landed by now), every later
    // line waits in the buffer for that write's callback, which needs a turn of the event loop
    expect(['', lines[0]]).toContain(readFileSync(file, 'utf8'));
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
