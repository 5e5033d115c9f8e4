import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startServer, type ServerProcess } from '../setup/server-process.js';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A free TCP port on 127.0.0.1 (bound once and released). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves once a TCP connection to 127.0.0.1:`port` succeeds; rejects after `timeoutMs`. */
async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await canConnect(port))) {
    if (Date.now() > until) throw new Error(`nothing listens on port ${port} after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** Whether a TCP connection to 127.0.0.1:`port` is accepted now. */
export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * A PostgreSQL cluster of its own (Debian's postgresql-common: `pg_createcluster`), on a free port
 * of 127.0.0.1 with trust authentication, so a test can stop and start its server without touching
 * any other cluster. {@link drop} removes it (stopping it first).
 */
export class PgCluster {
  private constructor(
    readonly version: string,
    readonly name: string,
    readonly port: number,
  ) {}

  /** Creates and starts a cluster named `ra_faults_<pid>_<tag>`. */
  static async create(tag: string): Promise<PgCluster> {
    const version = /(\d+)/.exec(execFileSync('pg_config', ['--version'], { encoding: 'utf8' }))![1];
    const cluster = new PgCluster(version, `ra_faults_${process.pid}_${tag}`, await freePort());
    await run('pg_createcluster', [version, cluster.name, '--port', String(cluster.port), '--', '--auth=trust']);
    await cluster.start();
    return cluster;
  }

  /** Starts the server; resolves once it accepts connections. */
  async start(): Promise<void> {
    await run('pg_ctlcluster', ['--skip-systemctl-redirect', this.version, this.name, 'start']);
    await waitForPort(this.port, 30_000);
  }

  /** Stops the server (`fast`: sessions are terminated, then a checkpoint; `immediate`: no checkpoint). */
  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await run('pg_ctlcluster', ['--skip-systemctl-redirect', this.version, this.name, 'stop', '-m', mode]);
  }

  /** Creates database `name`; resolves with its postgres:// URL. */
  async createDatabase(name: string): Promise<string> {
    await run('psql', [
      '-h',
      '127.0.0.1',
      '-p',
      String(this.port),
      '-U',
      'postgres',
      '-d',
      'postgres',
      '-v',
      'ON_ERROR_STOP=1',
      '-q',
      '-c',
      `CREATE DATABASE ${name}`,
    ]);
    return `postgres://postgres@127.0.0.1:${this.port}/${name}`;
  }

  /** Stops (immediately) and deletes the cluster and its files. */
  async drop(): Promise<void> {
    await run('pg_dropcluster', ['--stop', this.version, this.name]).catch(async () => {
      await this.stop('immediate').catch(() => undefined);
      await run('pg_dropcluster', [this.version, this.name]);
    });
  }
}

/**
 * A Redis server of its own (a child process on a free port of 127.0.0.1, nothing saved to disk), so
 * a test can kill it and start it again empty.
 */
export class RedisServer {
  private child: ChildProcess | undefined;
  private readonly dir = mkdtempSync(path.join(os.tmpdir(), 'resource-api-faults-redis-'));

  private constructor(readonly port: number) {}

  /** Starts a Redis server on a free port. */
  static async create(): Promise<RedisServer> {
    const redis = new RedisServer(await freePort());
    await redis.start();
    return redis;
  }

  /** `redis://127.0.0.1:<port>/<db>`. */
  url(db = 0): string {
    return `redis://127.0.0.1:${this.port}/${db}`;
  }

  /** Starts the server (empty: no RDB, no AOF); resolves once it accepts connections. */
  async start(): Promise<void> {
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir], {
      stdio: 'ignore',
    });
    await waitForPort(this.port, 10_000);
  }

  /** Kills the server (SIGKILL: a crash); resolves once it is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }

  /** Kills the server and removes its folder (afterAll). */
  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The environment every fault-suite server gets (on top of startServer's): one JWT secret for all instances and restarts. */
export const SERVER_ENV: Record<string, string> = {
  JWT_SECRET: 'fault-suite-secret-that-is-at-least-32-bytes-long',
  ACCESS_TOKEN_TTL: '3600',
  SHUTDOWN_TIMEOUT_MS: '10000',
  // the lame-duck period between SIGTERM and closing the listening socket (ignored by builds without it)
  SHUTDOWN_DELAY_MS: '1000',
};

/** A started server and the loopback base URL the writers use (`http://127.0.0.1:<port>`). */
export interface FaultServer {
  process: ServerProcess;
  port: number;
  base: string;
}

/** Starts `node dist/src/main.js` with {@link SERVER_ENV} and `env` (PORT for a restart on the same port). */
export async function startFaultServer(dir: string, env: Record<string, string>): Promise<FaultServer> {
  const server = await startServer(dir, { ...SERVER_ENV, ...env }, 90_000);
  return { process: server, port: server.port, base: `http://127.0.0.1:${server.port}` };
}

/** When a server stopped accepting connections, as seen by a probe connecting every 10 ms. */
export interface ListeningProbe {
  /** The last time a probe connection was accepted. */
  lastAcceptedAt: number;
  /** The first time a probe connection was refused. */
  firstRefusedAt: number;
}

/** Connects to `port` every 10 ms until a connection is refused; resolves with the last accepted and the first refused time. */
export async function probeUntilRefused(port: number, timeoutMs = 60_000): Promise<ListeningProbe> {
  let lastAcceptedAt = 0;
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const at = Date.now();
    if (!(await canConnect(port))) return { lastAcceptedAt, firstRefusedAt: at };
    lastAcceptedAt = at;
    await sleep(10);
  }
  throw new Error(`port ${port} still accepts connections after ${timeoutMs} ms`);
}

/** A small filesystem mounted for a test; {@link unmount} removes it and its folder. */
export interface SmallFilesystem {
  dir: string;
  /** How it was made (`tmpfs`, `loop-mounted ext4 image`). */
  kind: string;
  unmount(): void;
}

/**
 * Mounts a filesystem of `sizeMb` MiB on a fresh temporary folder: a tmpfs, else an ext4 image on
 * a loop device. Throws with the reasons when neither works here (no privilege to mount).
 */
export function mountSmallFilesystem(sizeMb: number): SmallFilesystem {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'resource-api-faults-disk-'));
  const reasons: string[] = [];
  const message = (error: unknown) => ((error as { stderr?: Buffer }).stderr?.toString().trim() || String(error)).split('\n')[0];
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir], { stdio: 'pipe' });
    return { dir, kind: 'tmpfs', unmount: () => unmount(dir) };
  } catch (error) {
    reasons.push(`mount -t tmpfs: ${message(error)}`);
  }
  const image = `${dir}.img`;
  try {
    execFileSync('truncate', ['-s', `${sizeMb}M`, image], { stdio: 'pipe' });
    execFileSync('mkfs.ext4', ['-q', '-F', image], { stdio: 'pipe' });
    execFileSync('mount', ['-o', 'loop', image, dir], { stdio: 'pipe' });
    return {
      dir,
      kind: 'loop-mounted ext4 image',
      unmount: () => {
        unmount(dir);
        rmSync(image, { force: true });
      },
    };
  } catch (error) {
    reasons.push(`loop-mounted ext4 image: ${message(error)}`);
    rmSync(image, { force: true });
  }
  rmSync(dir, { recursive: true, force: true });
  throw new Error(reasons.join('; '));
}

function unmount(dir: string): void {
  try {
    execFileSync('umount', [dir], { stdio: 'pipe' });
  } catch {
    execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
  }
  rmSync(dir, { recursive: true, force: true });
}

/** A fresh temporary folder for a scenario's SQLite file and the like. */
export function scratchDir(name: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), `resource-api-faults-${name}-`));
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * The distinct errors a server logged at level error (50) or above — `type: message (code)` of the
 * logged `err`, else the log message — at most `limit`, with how often each occurred.
 */
export function loggedErrors(output: string, limit = 5): string[] {
  const counts = new Map<string, number>();
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    let entry: { level?: number; msg?: string; err?: { type?: string; message?: string; code?: string } };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue;
    }
    if ((entry.level ?? 0) < 50) continue;
    const text = entry.err
      ? `${entry.err.type ?? 'Error'}: ${(entry.err.message ?? '').slice(0, 160)}${entry.err.code ? ` (${entry.err.code})` : ''}`
      : String(entry.msg).slice(0, 160);
    counts.set(text, (counts.get(text) ?? 0) + 1);
  }
  return [...counts].slice(0, limit).map(([text, count]) => `${count}× ${text}`);
}
