/**
 * Formats a timestamp read from either database as ISO 8601 UTC with milliseconds (docs/wire.md#responses).
 * PostgreSQL gives `Date`s; SQLite gives TypeORM's UTC text `YYYY-MM-DD HH:MM:SS.SSS`. Returns
 * `null` for null and `undefined` for a column that was not selected.
 */
export function toIso(value: unknown): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === null) return null;
  if (value instanceof Date) return value.toISOString();
  const text = String(value);
  if (/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)?$/.test(text)) return new Date(`${text.replace(' ', 'T')}Z`).toISOString();
  return new Date(text).toISOString();
}
