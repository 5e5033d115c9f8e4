import { randomInt, randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type {
  DataSource,
  EntityManager,
  EntitySubscriberInterface,
  ObjectLiteral,
  QueryRunner,
  Repository,
  TransactionCommitEvent,
  TransactionRollbackEvent,
  TransactionStartEvent,
} from 'typeorm';
import { safeError } from '../logging/logging.js';
import { toIso } from '../common/list/timestamps.js';
import { requestContext } from '../context/request-context.js';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import { insertRow, insertStatement } from '../database/insert-row.js';
import type { PoolClientOptions } from '../database/pg-client.js';
import { currentTraceparent } from '../observability/tracing/trace-context.js';
import { EventRecord } from './event.entity.js';
import type { EventPayload } from './event-payload.response.js';
import type { EventType } from './event-types.js';

export { EventPayload } from './event-payload.response.js';

/** An event to append: what happened (`type`) to which resource, whose it is, and the resource in both API versions' shapes. */
export interface NewEvent {
  type: EventType;
  /** The user the event belongs to (docs/events.md, visibility); null: admins only. */
  ownerId: number | null;
  resourceId: number | null;
  /** The resource as `GET /v1/…` and `GET /v2/…` show it (links included, each for its version). */
  data: { v1: object; v2: object };
}

/** An appended event: {@link NewEvent} with its position (`seq`), public id (`evt_…`) and time. */
export interface StoredEvent {
  /** The position in the log (the row's integer id): ascending in insertion order. */
  seq: number;
  /** `evt_` + 32 hex digits. */
  id: string;
  type: EventType;
  ownerId: number | null;
  resourceId: number | null;
  createdAt: Date;
  data: { v1: object; v2: object };
}

/**
 * A listener's in-transaction write as one data-modifying statement that the outbox sends on
 * PostgreSQL in the same statement as the event's INSERT (a data-modifying CTE), instead of
 * calling `inTransaction`: one round trip for both, in the same transaction.
 */
export interface FoldedWrite {
  /** An `INSERT … SELECT …` (without RETURNING) whose values are the placeholders `param` returned. */
  sql: string;
  /** A channel notified (`pg_notify(channel, '')`, as `NOTIFY channel`) in the same statement when the write wrote a row. */
  notify?: string;
  /** Told how many rows the write wrote, right after the statement (a throw rolls the write back). */
  settled(rows: number): void;
}

/** What another module hooks into the outbox (webhooks: its deliveries). */
export interface OutboxListener {
  /** Runs inside the writing transaction, after the event row is inserted (webhooks: insert deliveries). A throw rolls the write back. */
  inTransaction?(manager: EntityManager, event: StoredEvent): Promise<void>;
  /**
   * On PostgreSQL, replaces `inTransaction`: the same write as a {@link FoldedWrite} for `event`
   * (its `seq` is not known yet and reads 0), its values passed through `param` (which returns
   * the placeholder, `$n`, of a value).
   */
  folded?(event: StoredEvent, param: (value: unknown) => string): FoldedWrite;
  /** Runs once after the transaction committed, with its events in order; never after a rollback. Must not throw (errors are logged). */
  afterCommit?(events: readonly StoredEvent[]): void;
}

/** One appended event not yet committed, with the transaction level (1: the outermost, 2+: savepoints) it was appended at. */
interface Pending {
  depth: number;
  event: StoredEvent;
}

/** What an outbox keeps per query runner: its current transaction level and the pending events. */
interface RunnerState {
  depth: number;
  pending: Pending[];
}

/** What an event gets as it is appended: its public id (`evt_` + 32 hex), its time, and its data in both versions as JSON text. */
function serialize(event: NewEvent): { id: string; createdAt: Date; v1: string; v2: string } {
  return { id: `evt_${randomUUID().replaceAll('-', '')}`, createdAt: new Date(), v1: JSON.stringify(event.data.v1), v2: JSON.stringify(event.data.v2) };
}

/** Positional parameters of a statement being built: `param(value)` appends a value after `initial` and returns its placeholder (`$n`). */
function placeholders(initial: readonly unknown[]): { params: unknown[]; param: (value: unknown) => string } {
  const params = [...initial];
  return {
    params,
    param: (value) => {
      params.push(value);
      return `$${params.length}`;
    },
  };
}

/** The state of `queryRunner` in `states` (created on first use; gone with the runner). */
function stateOf(queryRunner: QueryRunner, states: WeakMap<QueryRunner, RunnerState>): RunnerState {
  let state = states.get(queryRunner);
  if (state === undefined) states.set(queryRunner, (state = { depth: 0, pending: [] }));
  return state;
}

/**
 * The transactional outbox (docs/events.md): {@link append} writes an event row in the caller's
 * transaction, so the event commits or rolls back with the change it describes. Listeners run
 * inside that transaction (`inTransaction`) and once after it committed (`afterCommit`, never after
 * a rollback), through a TypeORM subscriber on the transaction events of every query runner: the
 * transaction's events wait on its query runner (`queryRunner.data`, with the transaction level
 * the subscriber counts from the start, commit and rollback events) until the outermost COMMIT
 * hands them over, or a ROLLBACK (to a savepoint: the events appended within it) drops them.
 */
@Injectable()
export class EventOutbox {
  private readonly logger = new Logger(EventOutbox.name);
  private readonly listeners: OutboxListener[] = [];
  /** This outbox's {@link RunnerState} of each query runner. */
  private readonly states = new WeakMap<QueryRunner, RunnerState>();

  constructor(@InjectDataSource() dataSource: DataSource) {
    const subscriber: EntitySubscriberInterface = {
      afterTransactionStart: (event: TransactionStartEvent) => {
        stateOf(event.queryRunner, this.states).depth += 1;
      },
      afterTransactionCommit: (event: TransactionCommitEvent) => this.committed(event.queryRunner),
      afterTransactionRollback: (event: TransactionRollbackEvent) => this.rolledBack(event.queryRunner),
    };
    dataSource.subscribers.push(subscriber);
  }

  /**
   * Inserts the event within `manager`'s active transaction (throws an Error if there is none) and
   * runs the listeners' inTransaction — on PostgreSQL, the listeners' folded writes in the same
   * statement as the event's INSERT instead (one round trip); returns the stored event (its id `evt_` + 32 hex, its time
   * now with millisecond precision, `data` as the JSON stored). The row keeps the active span's
   * `traceparent` (null while tracing is off), so that the event's deliveries continue the trace.
   * @throws Error (a programming error → 500) when `manager` has no active transaction; whatever the
   *   insert or a listener throws (the caller's transaction then rolls back).
   */
  async append(manager: EntityManager, event: NewEvent): Promise<StoredEvent> {
    const queryRunner = manager.queryRunner;
    if (!queryRunner?.isTransactionActive) throw new Error(`EventOutbox.append(${event.type}): needs the entity manager of an active transaction`);
    const { id, createdAt, v1, v2 } = serialize(event);
    const row = {
      event_id: id,
      type: event.type,
      owner_id: event.ownerId,
      resource_id: event.resourceId,
      created_at: createdAt,
      data_v1: v1,
      data_v2: v2,
      traceparent: currentTraceparent(),
    };
    // `data` as stored (plain JSON: what GET /events shows and webhooks deliver, nothing more)
    const data = { v1: JSON.parse(v1) as object, v2: JSON.parse(v2) as object };
    const stored: StoredEvent = { seq: 0, id, type: event.type, ownerId: event.ownerId, resourceId: event.resourceId, createdAt, data };
    const repository = manager.getRepository(EventRecord);
    if (manager.connection.options.type === 'postgres' && this.listeners.some((listener) => listener.folded)) {
      stored.seq = await this.insertFolded(manager, insertStatement(repository, row), stored);
    } else {
      stored.seq = await insertRow(repository, row);
      for (const listener of this.listeners) await listener.inTransaction?.(manager, stored);
    }
    const state = stateOf(queryRunner, this.states);
    state.pending.push({ depth: Math.max(state.depth, 1), event: stored });
    return stored;
  }

  /**
   * PostgreSQL: the event's INSERT (`statement`) and the listeners' folded writes in one statement
   * — `WITH e AS (INSERT … RETURNING "id"), w0 AS (INSERT … SELECT … RETURNING 1), … SELECT` the
   * event's id, each write's row count and, for a write that wrote rows and names a channel,
   * `pg_notify(channel, '')` — then each listener's `settled`; listeners without `folded` run
   * `inTransaction` after it. Returns the event's id (its `seq`).
   */
  private async insertFolded(manager: EntityManager, statement: { sql: string; parameters: unknown[] }, event: StoredEvent): Promise<number> {
    const { params, param } = placeholders(statement.parameters);
    const ctes = [`e AS (${statement.sql})`];
    const columns = ['(SELECT "id" FROM e) AS "id"'];
    const writes = this.foldWrites(event, ctes, columns, param);
    const [result] = await manager.query<Array<Record<string, number | string | null>>>(`WITH ${ctes.join(', ')} SELECT ${columns.join(', ')}`, params);
    for (const [i, listener] of this.listeners.entries()) {
      const write = writes[i];
      if (write) write.settled(Number(result[`w${i}`]));
      else await listener.inTransaction?.(manager, event);
    }
    return Number(result.id);
  }

  /**
   * Creates a row and its event atomically: inserts `row` into `repository`'s table, then appends
   * the event `eventOf(id)` describes for the new row's `id`; returns that id. On PostgreSQL, outside
   * a request transaction, it is one statement and one round trip — the row's INSERT, the event's and
   * the listeners' folded writes as data-modifying CTEs, atomic as any statement, without BEGIN and
   * COMMIT — and the listeners' `afterCommit` run once it returned. The event's data is written for
   * the id the database gives the row: `eventOf` is called with a random 16-digit stand-in, which
   * the statement replaces in the data's JSON text by the row's id (so `eventOf` must not compute
   * with the id beyond writing it). Elsewhere (SQLite; a keyed request's transaction, whose commit
   * the event must wait for; a listener whose write does not fold; behind a transaction-mode
   * pooler) the insert and {@link append} run in a transaction.
   * @throws what the inserts throw (a constraint violation, an unavailable database); nothing is then written.
   */
  async insertWithEvent<T extends ObjectLiteral>(
    repository: Repository<T>,
    row: QueryDeepPartialEntity<T>,
    eventOf: (id: number) => NewEvent,
  ): Promise<number> {
    if (!this.oneStatement(repository.manager)) {
      return repository.manager.transaction(async (manager) => {
        const id = await insertRow(manager.getRepository<T>(repository.target), row);
        await this.append(manager, eventOf(id));
        return id;
      });
    }
    const standIn = String(1_000_000_000_000_000 + randomInt(2 ** 47));
    const event = eventOf(Number(standIn));
    const statement = insertStatement(repository, row);
    const { params, param } = placeholders(statement.parameters);
    const { id, createdAt, v1, v2 } = serialize(event);
    const stored: StoredEvent = { seq: 0, id, type: event.type, ownerId: event.ownerId, resourceId: 0, createdAt, data: event.data };
    const withId = (json: string) => `replace(${param(json)}, ${param(standIn)}, (SELECT "id" FROM r)::text)`;
    const ctes = [
      `r AS (${statement.sql})`,
      `e AS (INSERT INTO "events" ("event_id", "type", "owner_id", "resource_id", "created_at", "data_v1", "data_v2", "traceparent")
        VALUES (${param(id)}, ${param(event.type)}, ${param(event.ownerId)}, (SELECT "id" FROM r), ${param(createdAt)}, ${withId(v1)}, ${withId(v2)}, ${param(currentTraceparent())}) RETURNING "id")`,
    ];
    const columns = ['(SELECT "id" FROM r) AS "rid"', '(SELECT "id" FROM e) AS "id"'];
    const writes = this.foldWrites(stored, ctes, columns, param);
    const [result] = await repository.manager.query<Array<Record<string, number | string | null>>>(
      `WITH ${ctes.join(', ')} SELECT ${columns.join(', ')}`,
      params,
    );
    const rowId = Number(result.rid);
    writes.forEach((write, i) => write?.settled(Number(result[`w${i}`])));
    // the event as stored: its data with the row's id
    stored.seq = Number(result.id);
    stored.resourceId = rowId;
    stored.data = { v1: JSON.parse(v1.replaceAll(standIn, String(rowId))) as object, v2: JSON.parse(v2.replaceAll(standIn, String(rowId))) as object };
    this.notifyCommitted([stored]);
    return rowId;
  }

  /**
   * Adds the listeners' folded writes for `event` to a statement being built: per write a CTE
   * `w<i> AS (… RETURNING 1)` in `ctes`, and among `columns` its row count (`"w<i>"`) and, when it
   * names a channel, `pg_notify(channel, '')` if it wrote rows. Returns each listener's write, in
   * listener order (undefined for a listener that does not fold).
   */
  private foldWrites(event: StoredEvent, ctes: string[], columns: string[], param: (value: unknown) => string): Array<FoldedWrite | undefined> {
    const writes = this.listeners.map((listener) => listener.folded?.(event, param));
    writes.forEach((write, i) => {
      if (!write) return;
      ctes.push(`w${i} AS (${write.sql} RETURNING 1)`);
      columns.push(`(SELECT COUNT(*) FROM w${i}) AS "w${i}"`);
      if (write.notify) columns.push(`(SELECT pg_notify(${param(write.notify)}, '') FROM w${i} LIMIT 1) AS "n${i}"`);
    });
    return writes;
  }

  /**
   * Whether {@link insertWithEvent} can write in one statement on `manager`'s database: PostgreSQL,
   * outside a request transaction, every listener's write folds, and no transaction-mode pooler
   * (`DB_POOLER=transaction`), where only a transaction carries `statement_timeout` to the server
   * (`SET LOCAL`: docs/operations.md#behind-a-connection-pooler).
   */
  private oneStatement(manager: EntityManager): boolean {
    const options = manager.connection.options;
    if (options.type !== 'postgres' || (options.extra as PoolClientOptions | undefined)?.transactionSettings !== undefined) return false;
    return requestContext()?.transaction === undefined && this.listeners.every((listener) => listener.folded || !listener.inTransaction);
  }

  /** Registers a listener (webhooks does this in its module's onModuleInit). */
  addListener(listener: OutboxListener): void {
    this.listeners.push(listener);
  }

  /**
   * After a COMMIT or a savepoint's RELEASE: a released savepoint's events now belong to the
   * enclosing level; the outermost COMMIT hands every pending event, in order, to each listener's
   * afterCommit. Never throws (a throw here would fail the already committed write).
   */
  private committed(queryRunner: QueryRunner): void {
    const state = stateOf(queryRunner, this.states);
    state.depth = Math.max(state.depth - 1, 0);
    const { pending, depth } = state;
    if (depth > 0) {
      for (const entry of pending) entry.depth = Math.min(entry.depth, depth);
      return;
    }
    if (pending.length === 0) return;
    this.notifyCommitted(pending.splice(0).map((entry) => entry.event));
  }

  /** Hands committed `events`, in order, to each listener's afterCommit; logs what a listener throws or rejects with. */
  private notifyCommitted(events: readonly StoredEvent[]): void {
    for (const listener of this.listeners) {
      if (!listener.afterCommit) continue;
      try {
        const result: unknown = listener.afterCommit(events);
        if (result instanceof Promise) result.catch((error: unknown) => this.logger.error(`outbox afterCommit listener failed: ${safeError(error).message}`));
      } catch (error) {
        this.logger.error(`outbox afterCommit listener failed: ${safeError(error).message}`);
      }
    }
  }

  /** After a ROLLBACK (everything pending is dropped) or a ROLLBACK TO SAVEPOINT (what was appended within it). */
  private rolledBack(queryRunner: QueryRunner): void {
    const state = stateOf(queryRunner, this.states);
    state.depth = Math.max(state.depth - 1, 0);
    state.pending = state.pending.filter((entry) => entry.depth <= state.depth);
  }
}

declare module '../common/resources/define-resource.js' {
  /** The service tier's outbox (declaration merging: the kernel's ServiceTier names no module above common/). */
  interface ServiceTier {
    /** The outbox every service appends its events to (test/services/services.ts builds one for all of them). */
    readonly outbox: EventOutbox;
  }
}

/**
 * The wire payload `{id, type, timestamp, data}` (timestamp: ISO 8601 UTC with ms) for API version
 * '1' or '2' — the same object GET /events shows and webhooks deliver. `data` is the resource as
 * that version showed it when the event was written.
 */
export function toEventPayload(event: StoredEvent | EventRecord, version: '1' | '2'): EventPayload {
  if ('event_id' in event) {
    // a stored type is one of the registry's; EventType is the compiler's view of the service's
    return {
      id: event.event_id,
      type: event.type as EventType,
      timestamp: toIso(event.created_at) as string,
      data: JSON.parse(version === '1' ? event.data_v1 : event.data_v2) as object,
    };
  }
  return { id: event.id, type: event.type, timestamp: event.createdAt.toISOString(), data: version === '1' ? event.data.v1 : event.data.v2 };
}
