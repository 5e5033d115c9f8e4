import type { ProcessRole } from './env.validation.js';

/**
 * True when a process of `role` serves the public API routes (`all`, `api`); a `worker` answers
 * them 404 (docs/operations.md#roles-api-and-worker).
 */
export function servesApi(role: ProcessRole): boolean {
  return role !== 'worker';
}

/**
 * True when a process of `role` runs the background work: webhook deliveries, the event
 * retention job and the idempotency-record pruning (`all`, `worker`); an `api` process runs none
 * of it (docs/operations.md#roles-api-and-worker).
 */
export function runsBackgroundWork(role: ProcessRole): boolean {
  return role !== 'api';
}

/** The only paths a `worker` serves on PORT: the probes and the scrape. Everything else answers 404. */
export const WORKER_PATHS: ReadonlySet<string> = new Set(['/health/live', '/health/ready', '/metrics']);
