/**
 * The delay before retry number `retry` (1-based) of a delivery, in milliseconds, from
 * WEBHOOK_RETRY_SCHEDULE (seconds): the schedule's entry with ±10 % jitter (`random` in [0, 1)),
 * so that deliveries failed together do not all come back at the same instant; null when the
 * schedule has no such retry (the attempt was the last).
 */
export function retryDelayMs(schedule: readonly number[], retry: number, random: number = Math.random()): number | null {
  if (retry < 1 || retry > schedule.length) return null;
  const base = schedule[retry - 1] * 1000;
  return Math.max(0, Math.round(base * (0.9 + 0.2 * random)));
}

/**
 * How long a claimed delivery stays leased (ms): twice the attempt timeout plus 30 s. An attempt
 * ends within the timeout (sendAttempt enforces it from its start), so a lease only expires when
 * its process died; and even then completion is conditional on the claim token, so a re-claimed
 * delivery is never completed twice.
 */
export function leaseMs(timeoutMs: number): number {
  return 2 * timeoutMs + 30_000;
}

/** A timestamp as raw SQL compares it: a `Date` on PostgreSQL, TypeORM's UTC text `YYYY-MM-DD HH:MM:SS.SSS` on SQLite. */
export function sqlTime(postgres: boolean, at: Date): Date | string {
  return postgres ? at : at.toISOString().replace('T', ' ').replace('Z', '');
}
