import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** The PgBouncer program: PGBOUNCER_PATH, else Debian's (`bash scripts/ci-install.sh pgbouncer`). */
export const PGBOUNCER_PATH = process.env.PGBOUNCER_PATH || '/usr/sbin/pgbouncer';

/** A PgBouncer of the test's own, started by {@link startPgBouncer}. */
export interface PgBouncer {
  /** The port it listens on, on 127.0.0.1. */
  port: number;
  /** `url` with its host and port replaced by this PgBouncer's. */
  through(url: string): string;
  /** What it logged so far (for a failing test's message). */
  log(): string;
  /** Stops it (SIGTERM to its process, then SIGKILL after 3 s) and removes its folder. */
  stop(): Promise<void>;
}

/** A free TCP port of 127.0.0.1 (free when asked: another process may take it before it is used). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves once 127.0.0.1:`port` accepts a connection; rejects after `ms` milliseconds or when `child` exits. */
async function listening(port: number, child: ChildProcess, ms: number, log: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`pgbouncer exited (${child.exitCode ?? child.signalCode}): ${log()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`pgbouncer did not listen on ${port} within ${ms} ms: ${log()}`);
}

/**
 * Starts Debian's PgBouncer ({@link PGBOUNCER_PATH}) in the foreground as a child of the test, with a
 * configuration of its own in a temporary folder: `pool_mode = transaction`, `auth_type = trust`
 * (the test database trusts 127.0.0.1 too; `upstream.user` is the one user it lets in), every
 * database forwarded to `upstream`'s host and port, listening on a
 * free port of 127.0.0.1, at most `poolSize` server connections per database and user (default 4),
 * and `server_login_retry = 1` (seconds before it tries the server again after a failed connect;
 * 15 by default), so a test sees it serve again soon after an outage. Nothing of the machine's own
 * PgBouncer (its service, /etc/pgbouncer) is used. As root it runs as `nobody` (PgBouncer refuses
 * to run as root). Returns once it accepts connections.
 * @throws when the program is missing, exits, or does not listen within 10 s
 */
export async function startPgBouncer(upstream: { host: string; port: number; user: string }, poolSize = 4): Promise<PgBouncer> {
  if (!existsSync(PGBOUNCER_PATH)) throw new Error(`no PgBouncer at ${PGBOUNCER_PATH} (bash scripts/ci-install.sh pgbouncer)`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'resource-api-pgbouncer-'));
  const port = await freePort();
  const logFile = path.join(dir, 'pgbouncer.log');
  // auth_type = trust still wants the user in the auth file (without a password)
  writeFileSync(path.join(dir, 'users.txt'), `"${upstream.user.replace(/"/g, '""')}" ""\n`);
  writeFileSync(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${upstream.host} port=${upstream.port}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${poolSize}`,
      'max_client_conn = 200',
      'server_login_retry = 1',
      `logfile = ${logFile}`,
      '',
    ].join('\n'),
  );
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { uid, gid } = { uid: 65534, gid: 65534 }; // nobody:nogroup
    chownSync(dir, uid, gid);
    for (const file of ['users.txt', 'pgbouncer.ini']) chownSync(path.join(dir, file), uid, gid);
  }
  const child = spawn(PGBOUNCER_PATH, [...(asRoot ? ['-u', 'nobody'] : []), path.join(dir, 'pgbouncer.ini')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const log = () => `${existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''}${stderr}`.slice(-4000);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await listening(port, child, 10_000, log);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    port,
    through: (url) => {
      const via = new URL(url);
      via.hostname = '127.0.0.1';
      via.port = String(port);
      return via.toString();
    },
    log,
    stop,
  };
}
