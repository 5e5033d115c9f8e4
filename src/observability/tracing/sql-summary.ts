/** What the spans of a SQL statement say about its text, worked out once per text. */
export interface SqlSummary {
  /** The span name: `<OPERATION> <table>` (`SELECT todos`), or the operation alone when no table shows. */
  name: string;
  /** The first keyword, upper case (`SELECT`, `INSERT`, `START`, …): `db.operation.name`. */
  operation: string;
  /** The first table the statement names (after FROM, INTO, UPDATE, JOIN or TABLE): `db.collection.name`. */
  table?: string;
}

/** At most this many distinct statement texts keep their summary (the service runs a bounded set of texts). */
const MAX_SUMMARIES = 500;

const summaries = new Map<string, SqlSummary>();

/**
 * The summary of a SQL text for its span, by the database semantic conventions (span name
 * `{db.operation.name} {target}`): a low-cardinality name — the operation and the first table,
 * never a value — for the SQL statements the service's ORM builds; a statement opening with a
 * common table expression (`WITH r AS (INSERT INTO "todos" …) …`) takes the operation of that
 * first expression. Memoised per text.
 */
export function summarizeSql(sql: string): SqlSummary {
  let summary = summaries.get(sql);
  if (summary) return summary;
  // a statement opening with a common table expression is named by the first one's statement:
  // `WITH r AS (INSERT INTO "todos" …), e AS (INSERT INTO "events" …) SELECT …` is an INSERT into todos
  const operation = (/^\s*WITH\s+[\w"]+\s+AS\s*\(\s*([A-Za-z]+)/i.exec(sql) ?? /^\s*([A-Za-z]+)/.exec(sql))?.[1]?.toUpperCase() ?? 'SQL';
  const table = /\b(?:FROM|INTO|UPDATE|JOIN|TABLE)\s+[`"[]?([A-Za-z_][\w$]*)/i.exec(sql)?.[1];
  summary = table ? { name: `${operation} ${table}`, operation, table } : { name: operation, operation };
  if (summaries.size < MAX_SUMMARIES) summaries.set(sql, summary);
  return summary;
}
