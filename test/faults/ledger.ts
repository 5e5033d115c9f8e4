import type { FailureKind } from './http.js';

/** What a writer's operation does. */
export type OpKind =
  /** POST /v1/todos with a fresh key: must exist once when acknowledged. */
  | 'create-todo'
  /** PATCH /v1/todos/{id} with the current ETag in If-Match. */
  | 'patch-todo'
  /** DELETE /v1/todos/{id}. */
  | 'delete-todo'
  /** POST /v1/articles (published) with a fresh key. */
  | 'create-article'
  /** POST /v1/articles/{id}/comments with a fresh key. */
  | 'create-comment'
  /** POST /v1/todos with a fresh key and an invalid body: must be refused (422) and leave nothing. */
  | 'refused-create'
  /** PATCH /v1/todos/{id} with an If-Match that is never current: must be refused (412) and change nothing. */
  | 'stale-patch';

/** One try of an operation: an answer (status) or a failure (kind). */
export interface Attempt {
  /** When it started (ms since the epoch). */
  at: number;
  /** When the request went out on an established connection; undefined when it never did. */
  sentAt?: number;
  /** Until the answer or the failure. */
  ms: number;
  /** The base URL it went to. */
  target: string;
  status?: number;
  /** The `code` of an error body. */
  code?: string;
  failure?: FailureKind;
  /** The failure's error code (ECONNRESET, …). */
  error?: string;
  /** The Retry-After header of the answer. */
  retryAfter?: string;
  replayed?: boolean;
  reused?: boolean;
}

/** One operation of one writer, with every try and its final answer. */
export interface Op {
  /** Idempotency-Key for creates; a unique label for the rest. */
  key: string;
  kind: OpKind;
  writer: number;
  method: string;
  path: string;
  body: unknown;
  attempts: Attempt[];
  /** The last answer that ended the retries (a non-5xx answer); undefined while unresolved. */
  final?: { status: number; body: any; headers: Record<string, unknown> };
}

/** Counts over a ledger: what the summary line prints. */
export interface LedgerStats {
  ops: number;
  /** Operations whose final answer is 2xx. */
  acknowledged: number;
  /** Operations tried more than once. */
  retried: number;
  /** 5xx answers over all tries, by status. */
  fiveXx: Record<number, number>;
  /** Final 4xx answers by status (refused operations). */
  fourXx: Record<number, number>;
  timeouts: number;
  /** Connections closed or reset before the answer was complete. */
  cut: number;
  /** Connection attempts refused (the server was not listening). */
  refused: number;
  /** Operations without a final non-5xx answer when the time budget ended. */
  unresolved: number;
  /** Answers replayed from a stored response (Idempotent-Replayed: true). */
  replayed: number;
  /** Failed tries by kind and error code (`cut:ECONNRESET`, …). */
  failures: Record<string, number>;
}

/** Every operation of a scenario's writers, in the order they started. */
export class Ledger {
  readonly ops: Op[] = [];

  /** Adds an operation (before its first try) and returns it. */
  open(op: Omit<Op, 'attempts' | 'final'>): Op {
    const entry: Op = { ...op, attempts: [] };
    this.ops.push(entry);
    return entry;
  }

  /** Every try of every operation, with its operation. */
  attempts(): Array<{ op: Op; attempt: Attempt }> {
    return this.ops.flatMap((op) => op.attempts.map((attempt) => ({ op, attempt })));
  }

  /** The counts of {@link LedgerStats}. */
  stats(): LedgerStats {
    const stats: LedgerStats = {
      ops: this.ops.length,
      acknowledged: 0,
      retried: 0,
      fiveXx: {},
      fourXx: {},
      timeouts: 0,
      cut: 0,
      refused: 0,
      unresolved: 0,
      replayed: 0,
      failures: {},
    };
    for (const op of this.ops) {
      if (op.attempts.length > 1) stats.retried += 1;
      if (!op.final) stats.unresolved += 1;
      else if (op.final.status < 300) stats.acknowledged += 1;
      else if (op.final.status >= 400) stats.fourXx[op.final.status] = (stats.fourXx[op.final.status] ?? 0) + 1;
      for (const attempt of op.attempts) {
        if (attempt.status !== undefined && attempt.status >= 500) stats.fiveXx[attempt.status] = (stats.fiveXx[attempt.status] ?? 0) + 1;
        if (attempt.failure === 'timeout') stats.timeouts += 1;
        if (attempt.failure === 'cut') stats.cut += 1;
        if (attempt.failure === 'refused') stats.refused += 1;
        if (attempt.replayed) stats.replayed += 1;
        if (attempt.failure) stats.failures[`${attempt.failure}:${attempt.error}`] = (stats.failures[`${attempt.failure}:${attempt.error}`] ?? 0) + 1;
      }
    }
    return stats;
  }

  /** 5xx answers other than 503 (a 500 is never the right answer to a fault), with their error codes. */
  unexpected5xx(): Array<{ status: number; code?: string; kind: OpKind; at: number }> {
    return this.attempts()
      .filter(({ attempt }) => attempt.status !== undefined && attempt.status >= 500 && attempt.status !== 503)
      .map(({ op, attempt }) => ({ status: attempt.status!, code: attempt.code, kind: op.kind, at: attempt.at }));
  }

  /** Whether an operation had a try whose outcome is unknown (a failure or a 5xx): it may have been applied. */
  static uncertain(op: Op): boolean {
    return op.attempts.some(
      (attempt) => attempt.failure === 'timeout' || attempt.failure === 'cut' || attempt.failure === 'other' || (attempt.status ?? 0) >= 500,
    );
  }
}
