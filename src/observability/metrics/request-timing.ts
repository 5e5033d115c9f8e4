import { AsyncLocalStorage } from 'node:async_hooks';

/** The time one request spent so far in database statements, in milliseconds (summed, so overlapping statements count each). */
export interface RequestTiming {
  dbMs: number;
}

const current = new AsyncLocalStorage<RequestTiming>();

/**
 * Runs `handle` — and everything it awaits — with `timing` as the current request's timing, so
 * that {@link addDbTime} accumulates the request's database time into it. Used by the
 * Server-Timing middleware only (SERVER_TIMING=true); without it no context is entered.
 */
export function runWithTiming<T>(timing: RequestTiming, handle: () => T): T {
  return current.run(timing, handle);
}

/** Adds `ms` milliseconds of database time to the current request's timing; nothing outside a timed request. */
export function addDbTime(ms: number): void {
  const timing = current.getStore();
  if (timing !== undefined) timing.dbMs += ms;
}

