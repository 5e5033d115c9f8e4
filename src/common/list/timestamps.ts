/** `YYYY-MM-DD HH:MM:SS.SSS` with a day of 01–28: always a real instant, whose ISO form is the same digits. */
const SQLITE_TEXT = /^(\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])) ((?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3})$/;

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
  // TypeORM's own text of a valid instant (every day of every month is ≤ 28): rewritten, not parsed
  const own = SQLITE_TEXT.exec(text);
  if (own !== null) return `${own[1]}T${own[2]}Z`;
  if (/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)?$/.test(text)) return new Date(`${text.replace(' ', 'T')}Z`).toISOString();
  return new Date(text).toISOString();
}
