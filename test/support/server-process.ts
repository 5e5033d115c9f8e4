import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/** The built server (`npm run test:e2e` builds it first, as `npm start` does). */
export const SERVER_ENTRY = path.resolve('dist/src/main.js');

/** A free TCP port on the loopback interface. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A running `node dist/src/main.js` child process. */
export interface ServerProcess {
  port: number;
  /** `http://127.0.0.1:<port>` */
  url: string;
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  /** Sends `signal` (default SIGTERM) and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts the built server as a real process on a free port with `env` added to a minimal
 * environment (PATH, NODE_ENV=test, LOG_LEVEL=silent unless given), and resolves once it accepts
 * HTTP requests. @throws when it exits or is not answering within `timeoutMs`.
 */
export async function startServer(env: Record<string, string>, timeoutMs = 30_000): Promise<ServerProcess> {
  if (!existsSync(SERVER_ENTRY)) throw new Error(`${SERVER_ENTRY} is missing: run npm run build (npm run test:e2e does)`);
  const port = Number(env.PORT ?? (await freePort()));
  let output = '';
  const child = spawn(process.execPath, [SERVER_ENTRY], {
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', LOG_LEVEL: 'silent', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let hasExited = false;
  void exited.then(() => (hasExited = true));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (hasExited) throw new Error(`server exited during start-up: ${output}`);
    try {
      await fetch(`${url}/v1/todos`);
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`server not answering on ${url} after ${timeoutMs} ms: ${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    port,
    url,
    child,
    output: () => output,
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (!hasExited) child.kill(signal);
      return exited;
    },
  };
}
