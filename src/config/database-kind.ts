/**
 * Which database the process talks to, decided once from `DATABASE_URL` (docs/operations.md#configuration). Entity
 * decorators are evaluated at import time, before Nest's ConfigModule exists, so column types that
 * differ between drivers are chosen here; this file and env.validation.ts are the only readers of
 * process.env.
 */
export const isPostgres = /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '');

/** Column type for UTC timestamps with millisecond precision: `timestamptz` or SQLite `datetime`. */
export const TIMESTAMP_TYPE = isPostgres ? 'timestamptz' : 'datetime';
