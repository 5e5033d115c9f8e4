/**
 * Patterns of the wire formats the e2e tests assert, in one place (docs/wire.md).
 */

/** A timestamp as the API writes it: UTC, ISO 8601 with exactly three fractional digits and `Z` (`2026-11-27T03:28:45.123Z`). */
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
