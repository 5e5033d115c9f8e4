import { requestContext, type RequestTiming } from '../../context/request-context.js';

export type { RequestTiming };

/**
 * Makes `timing` the current request's timing (the request context's `timing`), so that
 * {@link addDbTime} accumulates the request's database time into it. Used by the Server-Timing
 * middleware only (SERVER_TIMING=true), inside the request context the first middleware entered.
 */
export function startTiming(timing: RequestTiming): void {
  const context = requestContext();
  if (context !== undefined) context.timing = timing;
}

/** Adds `ms` milliseconds of database time to the current request's timing; nothing outside a timed request. */
export function addDbTime(ms: number): void {
  const timing = requestContext()?.timing;
  if (timing !== undefined) timing.dbMs += ms;
}
