import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project root (where `dist/src/main.js` is built). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Builds the application (`npm run build` → dist/) once per jest run: test files that start the
 * real server as a child process call it in `beforeAll` (allow it a few minutes on a busy machine).
 */
export function ensureBuilt(): void {
  const marker = path.join(os.tmpdir(), `resource-api-e2e-built-${process.pid}`);
  if (existsSync(marker)) return;
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'pipe' });
  writeFileSync(marker, '');
}

/** A running `node dist/src/main.js`. */
export interface ServerProcess {
  child: ChildProcess;
  /** The port it listens on (it was started with PORT=0). */
  port: number;
  /** `http://localhost:<port>` or `https://…` with TLS. */
  url: string;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves once `output()` contains `text`; rejects after `timeoutMs` or when the process exits first. */
  waitForOutput(text: string | RegExp, timeoutMs?: number): Promise<void>;
  /** Settles with the exit code and signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL if it still runs (for afterAll); resolves when it is gone. */
  kill(): Promise<void>;
}

/**
 * Rate limits out of reach (docs/limits.md#rates: every caller is limited): the default of every
 * server process, so suites doing many requests per user or address are not refused; a test of
 * the limits passes small ones in `env`. The per-API-key limit keeps its default (60 a minute).
 */
export const GENEROUS_RATE_LIMITS: Record<string, string> = {
  RATE_LIMIT_USER_PER_MINUTE: '1000000',
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: '1000000',
  RATE_LIMIT_REGISTRATIONS_PER_HOUR: '1000000',
  RATE_LIMIT_SIGN_INS_PER_MINUTE: '1000000',
  RATE_LIMIT_PASSWORD_CHANGES_PER_HOUR: '1000000',
};

/**
 * Starts the built server as a child process with a minimal environment — NODE_ENV=test,
 * PORT=0, LOG_LEVEL=info (its log tells the port), a JWT secret, a fresh SQLite file in `dir`,
 * SHUTDOWN_DELAY_MS=0 (SIGTERM drains at once) and {@link GENEROUS_RATE_LIMITS} — overridden by `env`. Resolves once it logs that
 * it listens; rejects with its output when it exits first or does not start within `timeoutMs`.
 */
export async function startServer(dir: string, env: Record<string, string> = {}, timeoutMs = 60_000): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      NODE_ENV: 'test',
      PORT: '0',
      LOG_LEVEL: 'info',
      JWT_SECRET: 'spawned-server-test-secret-of-at-least-32-bytes',
      DATABASE_URL: `sqlite:${path.join(dir, 'app.sqlite')}`,
      // no lame-duck period on SIGTERM unless a test asks for one: it would only make the suite slower
      SHUTDOWN_DELAY_MS: '0',
      ...GENEROUS_RATE_LIMITS,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
      for (const listener of listeners) listener();
    }),
  );

  const waitForOutput = (text: string | RegExp, wait = 30_000) =>
    new Promise<void>((resolve, reject) => {
      const found = () => (typeof text === 'string' ? output.includes(text) : text.test(output));
      const check = () => {
        if (found()) finish(resolve);
        else if (done) finish(() => reject(new Error(`server exited before writing ${String(text)}; output:\n${output.slice(-4000)}`)));
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`server did not write ${String(text)} within ${wait} ms; output:\n${output.slice(-4000)}`))),
        wait,
      );
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        listeners.delete(check);
        settle();
      };
      listeners.add(check);
      check();
    });

  const kill = async () => {
    if (!done) {
      child.kill('SIGKILL');
      await exited;
    }
  };

  try {
    await waitForOutput(/listening on https?:\/\/localhost:\d+/, timeoutMs);
  } catch (error) {
    await kill();
    throw error;
  }
  const [, scheme, port] = /listening on (https?):\/\/localhost:(\d+)/.exec(output)!;
  return { child, port: Number(port), url: `${scheme}://localhost:${port}`, output: () => output, waitForOutput, exited, kill };
}
