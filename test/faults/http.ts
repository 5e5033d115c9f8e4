import http, { type IncomingHttpHeaders } from 'node:http';

/** How an exchange ended without an answer. */
export type FailureKind = 'refused' | 'timeout' | 'cut' | 'other';

/** A complete HTTP answer. */
export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, or undefined (no body, or not JSON). */
  body: any;
  /** When the request went out on an established connection (ms since the epoch). */
  sentAt: number;
  /** When the last byte of the answer arrived. */
  answeredAt: number;
  /** Whether the request went out on a kept-alive connection of an earlier request. */
  reused: boolean;
}

/**
 * An exchange that ended without a complete answer: `refused` (no connection was ever made, so
 * nothing was sent), `timeout` (no complete answer within the request's timeout; the client gave
 * up and closed the connection), `cut` (the connection was closed or reset by the other side
 * before the answer was complete) or `other`.
 */
export class HttpFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    readonly code: string,
    /** When the request went out on an established connection; undefined when it never did. */
    readonly sentAt: number | undefined,
    readonly at: number,
    readonly reused: boolean,
  ) {
    super(`${kind} (${code})`);
  }
}

/** One request to send. */
export interface RequestSpec {
  method: string;
  path: string;
  headers?: Record<string, string>;
  /** Sent as JSON when set. */
  json?: unknown;
  /** Milliseconds until the client gives up (the connection is destroyed): a timeout. */
  timeoutMs: number;
}

/**
 * Sends one request to `base` (`http://127.0.0.1:<port>`) through `agent` and resolves with the
 * complete answer; rejects with an {@link HttpFailure} saying how it ended otherwise. A request
 * counts as sent once its connection is established (at once on a reused keep-alive connection).
 */
export function send(agent: http.Agent, base: string, spec: RequestSpec): Promise<Answer> {
  const url = new URL(spec.path, base);
  const payload = spec.json === undefined ? undefined : Buffer.from(JSON.stringify(spec.json));
  const headers: Record<string, string> = { Accept: 'application/json', ...spec.headers };
  if (payload) {
    headers['Content-Type'] = 'application/json';
    headers['Content-Length'] = String(payload.length);
  }
  return new Promise<Answer>((resolve, reject) => {
    let sentAt: number | undefined;
    let reused = false;
    let timedOut = false;
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname + url.search, method: spec.method, headers, agent });
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy(new Error('client timeout'));
    }, spec.timeoutMs);
    req.on('socket', (socket) => {
      reused = req.reusedSocket;
      if (socket.connecting) socket.once('connect', () => (sentAt = Date.now()));
      else sentAt = Date.now();
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('aborted', () => settle(() => reject(new HttpFailure(timedOut ? 'timeout' : 'cut', 'ABORTED', sentAt, Date.now(), reused))));
      res.on('error', () => undefined);
      res.on('end', () => {
        if (!res.complete) return; // 'aborted' or 'close' settle it
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          body = undefined;
        }
        settle(() => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, sentAt: sentAt ?? Date.now(), answeredAt: Date.now(), reused }));
      });
      res.on('close', () => {
        if (!res.complete) settle(() => reject(new HttpFailure(timedOut ? 'timeout' : 'cut', 'INCOMPLETE', sentAt, Date.now(), reused)));
      });
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      const code = error.code ?? error.message;
      let kind: FailureKind;
      if (timedOut) kind = 'timeout';
      else if (code === 'ECONNREFUSED') kind = 'refused';
      else if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED' || /socket hang up/.test(error.message)) kind = 'cut';
      else kind = 'other';
      settle(() => reject(new HttpFailure(kind, code, kind === 'refused' ? undefined : sentAt, Date.now(), reused)));
    });
    req.end(payload);
  });
}

/** A keep-alive agent holding at most one connection: one writer, one connection. */
export function writerAgent(): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets: 1 });
}
