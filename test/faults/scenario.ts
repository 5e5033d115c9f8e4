import { type AuditReport, audit, auditCounts } from './audit.js';
import { type Attempt, Ledger, type LedgerStats, type Op } from './ledger.js';
import { register, type Target, Writer, type WriterControl } from './writer.js';

/** Concurrent writers per scenario (FAULTS_WRITERS, default 30). */
export const WRITERS = Number(process.env.FAULTS_WRITERS ?? 30);
/** How long writers run before a fault is injected (ms). */
export const LOAD_BEFORE_MS = 3_000;
/** How long writers go on after the fault is over (ms). */
export const LOAD_AFTER_MS = 3_000;
/** How long, once new operations stop, retries may go on (ms). */
export const DRAIN_MS = 30_000;
/** No operation is retried past this long after the writers start, whatever happens (ms). */
const HARD_LIMIT_MS = 180_000;

/** {@link Scenario.verdict} of a scenario that went right. */
export const CLEAN: Record<string, number> = {
  non503: 0,
  unresolved: 0,
  anomalies: 0,
  duplicates: 0,
  lost: 0,
  mismatched: 0,
  resurrected: 0,
  refusedPresent: 0,
  unexplained: 0,
  wrongTotals: 0,
};

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One fault scenario's load: {@link WRITERS} writers (each its own user and connection) sharing a
 * {@link Ledger}; {@link start} runs them, {@link stop} stops new operations and waits for the
 * retries of the current ones (bounded), {@link audit} reads everything back, {@link summary}
 * prints the one-line result.
 */
export class Scenario {
  readonly ledger = new Ledger();
  readonly writers: Writer[] = [];
  readonly control: WriterControl = { stopped: false, deadline: Date.now() + HARD_LIMIT_MS };
  private running: Promise<void>[] = [];

  /** `padding`: characters added to every todo's content, six times that to an article's body (see {@link Writer}). */
  constructor(
    readonly name: string,
    private readonly padding = 0,
  ) {}

  /**
   * Registers `count` users (through `targets[0]`, 6 at a time) and makes a writer of each, writer i
   * sending to `targets[i % targets.length]`.
   */
  async addWriters(count: number, targets: Target[]): Promise<void> {
    const tag = this.name.replace(/[^a-z0-9]/g, '').slice(0, 12);
    const indexes = Array.from({ length: count }, (_, i) => this.writers.length + i);
    for (let i = 0; i < indexes.length; i += 6) {
      const batch = indexes.slice(i, i + 6);
      const accounts = await Promise.all(batch.map((index) => register(targets[0].url, `f${tag}_${index}_${process.pid % 10000}`)));
      batch.forEach((index, j) => this.writers.push(new Writer(index, accounts[j], targets[index % targets.length], this.ledger, this.name, this.padding)));
    }
  }

  /** Starts every writer's loop. */
  start(): void {
    this.control.deadline = Date.now() + HARD_LIMIT_MS;
    this.running = this.writers.map((writer) => writer.run(this.control));
  }

  /** Stops new operations; resolves once every current one is final or `drainMs` passed. */
  async stop(drainMs = DRAIN_MS): Promise<void> {
    this.control.stopped = true;
    this.control.deadline = Math.min(this.control.deadline, Date.now() + drainMs);
    await Promise.all(this.running);
  }

  /** Stops everything at once and closes the writers' connections (afterAll, or after a failure). */
  async abort(): Promise<void> {
    this.control.stopped = true;
    this.control.deadline = 0;
    await Promise.all(this.running);
    for (const writer of this.writers) writer.close();
  }

  /** The read-back audit through `base` (see audit.ts). */
  audit(base: string): Promise<AuditReport> {
    return audit(base, this.writers, this.ledger);
  }

  /** Every try whose answer or failure came at or after `since` and satisfies `match`, in the order they ended. */
  endedAfter(since: number, match: (attempt: Attempt, op: Op) => boolean): Array<{ op: Op; attempt: Attempt; endedAt: number }> {
    return this.ledger
      .attempts()
      .map(({ op, attempt }) => ({ op, attempt, endedAt: attempt.at + attempt.ms }))
      .filter(({ op, attempt, endedAt }) => endedAt >= since && match(attempt, op))
      .sort((a, b) => a.endedAt - b.endedAt);
  }

  /** Milliseconds from `since` to the first 503 answer that ended after it; undefined when none did. */
  firstStatusAfter(since: number, status = 503): number | undefined {
    const first = this.endedAfter(since, (attempt) => attempt.status === status)[0];
    return first ? first.endedAt - since : undefined;
  }

  /**
   * The counts every scenario asserts to be 0: 5xx answers other than 503, operations left without
   * a final answer, unexpected answers, and each kind of audit finding. Compare with {@link CLEAN}.
   */
  verdict(report: AuditReport): Record<string, number> {
    return {
      non503: this.ledger.unexpected5xx().length,
      unresolved: this.ledger.stats().unresolved,
      anomalies: this.anomalies().length,
      ...auditCounts(report),
    };
  }

  /** Answers the writers did not expect, over all writers. */
  anomalies(): string[] {
    return this.writers.flatMap((writer) => writer.anomalies);
  }

  /**
   * Prints (and returns) the scenario's one-line summary — the ledger's counts, the audit's
   * findings, `extra` — and below it the first findings of each kind and `serverErrors` (see
   * loggedErrors in infra.ts).
   */
  summary(report: AuditReport | undefined, extra: Record<string, unknown> = {}, serverErrors: string[] = []): string {
    const stats: LedgerStats = this.ledger.stats();
    const fields: Record<string, unknown> = {
      ops: stats.ops,
      acknowledged: stats.acknowledged,
      retried: stats.retried,
      replayed: stats.replayed,
      '5xx': JSON.stringify(stats.fiveXx),
      '4xx_final': JSON.stringify(stats.fourXx),
      timeouts: stats.timeouts,
      cut: stats.cut,
      refused: stats.refused,
      unresolved: stats.unresolved,
      failures: JSON.stringify(stats.failures),
      ...(report ? { rows: report.rows, ...auditCounts(report) } : { audit: 'not run' }),
      anomalies: this.anomalies().length,
      ...extra,
    };
    const line = `faults[${this.name}] ${Object.entries(fields)
      .map(([key, value]) => `${key}=${value === undefined ? '-' : value}`)
      .join(' ')}`;
    const details: string[] = [];
    const show = (what: string, items: string[]) => {
      if (items.length > 0) details.push(`  ${what} (${items.length}): ${items.slice(0, 5).join(' | ')}`);
    };
    if (report) for (const [kind, items] of Object.entries(report)) if (Array.isArray(items)) show(kind, items);
    show('anomalies', this.anomalies());
    show(
      '5xx other than 503',
      this.ledger.unexpected5xx().map((entry) => `${entry.status} ${entry.code ?? ''} on ${entry.kind}`),
    );
    show('errors the service logged', serverErrors);
    process.stdout.write(`\n${line}\n${details.join('\n')}${details.length ? '\n' : ''}`);
    return line;
  }
}
