/**
 * Process helpers for the benchmark (Linux): spawning servers pinned to a CPU core, reading their
 * CPU time and peak memory from /proc, pinning PostgreSQL backends, waiting for readiness.
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Clock ticks per second of /proc/<pid>/stat times (`getconf CLK_TCK`, 100 on Linux). */
export const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

/** True when `taskset` exists (util-linux); without it nothing is pinned. */
export const HAS_TASKSET = (() => {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** Number of online CPUs. */
export function cpuCount() {
  try {
    return Number(execFileSync('nproc').toString().trim());
  } catch {
    return 1;
  }
}

/** Pins every thread of `pid` to `core` (taskset -a -p -c). Returns false when it could not. */
export function pin(pid, core) {
  if (!HAS_TASKSET) return false;
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(core), String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** User + system CPU time of `pid` (all its threads) in microseconds, or 0 when it is gone. */
export function cpuMicros(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state): utime is field 14, stime field 15
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLK_TCK;
  } catch {
    return 0;
  }
}

/** `VmHWM` (peak resident set) and `VmRSS` of `pid` in bytes. */
export function memory(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0) * 1024;
    return { peak: kb('VmHWM'), rss: kb('VmRSS') };
  } catch {
    return { peak: 0, rss: 0 };
  }
}

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const children = new Set();

/**
 * Rate limits a benchmark never reaches (docs/limits.md#rates): the limiter still counts every
 * request — its cost is part of what is measured — but refuses none.
 */
export const BENCH_RATE_LIMITS = {
  RATE_LIMIT_PER_MINUTE: '1000000',
  RATE_LIMIT_USER_PER_MINUTE: '1000000',
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: '1000000',
  RATE_LIMIT_REGISTRATIONS_PER_HOUR: '1000000',
  RATE_LIMIT_SIGN_INS_PER_MINUTE: '1000000',
  RATE_LIMIT_PASSWORD_CHANGES_PER_HOUR: '1000000',
};

/**
 * Spawns `node <args>` pinned to `core` (via taskset when present) with exactly `env` (plus PATH,
 * HOME and SHUTDOWN_DELAY_MS=0: a benchmark's service has no load balancer to wait for, so it stops
 * without a lame-duck period unless `env` says otherwise; and {@link BENCH_RATE_LIMITS}), stdout and stderr to `logFile`. Returns the ChildProcess; it is stopped by
 * {@link stopAll} on exit.
 */
export function spawnNode(args, env, core, logFile) {
  mkdirSync(path.dirname(logFile), { recursive: true });
  const fd = openSync(logFile, 'w');
  const command = HAS_TASKSET ? 'taskset' : process.execPath;
  const argv = HAS_TASKSET ? ['-c', String(core), process.execPath, ...args] : args;
  const child = spawn(command, argv, {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, SHUTDOWN_DELAY_MS: '0', ...BENCH_RATE_LIMITS, ...env },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Stops `child` (SIGTERM, then SIGKILL after `graceMs`) and resolves when it has exited. */
export function stop(child, graceMs = 15_000) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Stops every child still running (used on exit and on SIGINT). */
export async function stopAll() {
  await Promise.all([...children].map((child) => stop(child, 5000)));
}

/** Polls `url` until it answers 200 (every `everyMs`); rejects after `timeoutMs` or when `child` exits. */
export async function waitReady(url, child, timeoutMs = 120_000, everyMs = 20) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`process exited with ${child.exitCode} before ${url} was ready`);
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  throw new Error(`${url} not ready after ${timeoutMs} ms`);
}

/**
 * The node arguments `npm start` runs the service with (package.json `scripts.start`: its V8 flags,
 * then `dist/src/main.js`), so that the benchmarks measure the service as it is started.
 */
export function serviceArgs() {
  const start = JSON.parse(readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '../../package.json'), 'utf8')).scripts.start;
  const words = start.trim().split(/\s+/);
  if (words[0] !== 'node' || !words.at(-1).endsWith('.js')) throw new Error(`package.json scripts.start is not "node [flags] <script>": ${start}`);
  return words.slice(1);
}
