import { type Attributes, context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { InstrumentationBase, type InstrumentationConfig, InstrumentationNodeModuleDefinition } from '@opentelemetry/instrumentation';
import { ATTR_DB_COLLECTION_NAME, ATTR_DB_OPERATION_NAME, ATTR_DB_QUERY_TEXT, ATTR_DB_SYSTEM_NAME, ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import { summarizeSql } from './sql-summary.js';

/** The statement methods that execute a prepared statement at once (`iterate` runs lazily and is not traced). */
const EXECUTING_METHODS = ['run', 'get', 'all'] as const;

/**
 * The span name and attributes of a SQLite statement: {@link summarizeSql}'s name, and
 * `db.system.name` = `sqlite`, `db.query.text` (the text as prepared: parameters are `?`
 * placeholders, so no value ever reaches a span), `db.operation.name` and `db.collection.name`.
 */
export function sqliteSpan(sql: string): { name: string; attributes: Attributes } {
  const { name, operation, table } = summarizeSql(sql);
  return {
    name,
    attributes: {
      [ATTR_DB_SYSTEM_NAME]: 'sqlite',
      [ATTR_DB_QUERY_TEXT]: sql,
      [ATTR_DB_OPERATION_NAME]: operation,
      ...(table ? { [ATTR_DB_COLLECTION_NAME]: table } : {}),
    },
  };
}

/** The shape of a better-sqlite3 prepared statement, as far as the spans need it. */
interface Statement {
  source: string;
  run(...params: unknown[]): unknown;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown;
}

/** The better-sqlite3 `Database` constructor, as far as it is patched here. */
interface DatabaseConstructor {
  prototype: { prepare(sql: string): Statement; exec(sql: string): unknown };
}

/**
 * OpenTelemetry instrumentation of better-sqlite3 (OpenTelemetry has none): a CLIENT span for
 * every SQL statement executed — a prepared statement's `run`, `get` or `all`, and `exec` — named
 * and described by {@link sqliteSpan}; a failing statement's span has status ERROR, its
 * `error.type` (the SQLite code) and the exception event. Spans are made only inside a traced
 * operation (an active span, as for the PostgreSQL spans), so start-up and migrations add none.
 *
 * Hooks better-sqlite3 when it is `require`d: `Database.prototype.exec` at once,
 * and the native statement prototype on the first `prepare`. Loaded only when tracing is on.
 */
export class BetterSqlite3Instrumentation extends InstrumentationBase<InstrumentationConfig> {
  /** The statement prototypes patched, to undo on disable. */
  private readonly statementPrototypes = new Set<Statement>();

  constructor(config: InstrumentationConfig = {}) {
    super('resource-api-instrumentation-better-sqlite3', '1.0.0', config);
  }

  protected init(): InstrumentationNodeModuleDefinition[] {
    return [
      new InstrumentationNodeModuleDefinition(
        'better-sqlite3',
        ['>=13 <14'],
        (exports: DatabaseConstructor) => this.patch(exports),
        (exports?: DatabaseConstructor) => this.unpatch(exports),
      ),
    ];
  }

  private patch(Database: DatabaseConstructor): DatabaseConstructor {
    const instrumentation = this;
    this._wrap(
      Database.prototype,
      'exec',
      (original) =>
        function exec(this: unknown, sql: string) {
          return instrumentation.traced(sql, () => original.call(this, sql));
        },
    );
    this._wrap(
      Database.prototype,
      'prepare',
      (original) =>
        function prepare(this: unknown, sql: string) {
          const statement = original.call(this, sql);
          instrumentation.patchStatements(Object.getPrototypeOf(statement) as Statement);
          return statement;
        },
    );
    return Database;
  }

  private unpatch(Database?: DatabaseConstructor): void {
    if (Database) {
      this._unwrap(Database.prototype, 'exec');
      this._unwrap(Database.prototype, 'prepare');
    }
    for (const proto of this.statementPrototypes) this._massUnwrap([proto], [...EXECUTING_METHODS]);
    this.statementPrototypes.clear();
  }

  /** Wraps `run`, `get` and `all` of the (native) statement prototype, once. */
  private patchStatements(proto: Statement): void {
    if (this.statementPrototypes.has(proto)) return;
    this.statementPrototypes.add(proto);
    const instrumentation = this;
    this._massWrap(
      [proto],
      [...EXECUTING_METHODS],
      (original) =>
        function execute(this: Statement, ...params: unknown[]) {
          return instrumentation.traced(this.source, () => (original as (...args: unknown[]) => unknown).apply(this, params));
        } as never,
    );
  }

  /** Runs `execute` (synchronous, as better-sqlite3 is) inside a span for `sql`, or plainly outside a traced operation. */
  private traced<T>(sql: string, execute: () => T): T {
    const parent = context.active();
    if (!this.isEnabled() || trace.getSpan(parent) === undefined) return execute();
    const { name, attributes } = sqliteSpan(sql);
    const span = this.tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
    try {
      return execute();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      span.setAttribute(ATTR_ERROR_TYPE, typeof code === 'string' ? code : error instanceof Error ? error.name : 'Error');
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  }
}
