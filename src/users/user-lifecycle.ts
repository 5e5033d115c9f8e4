import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/**
 * The user lifecycle events (docs/extending.md#user-lifecycle-events), in the order their handlers
 * run when one change raises several (a PATCH renaming a user and changing its password):
 * - `user.renamed` — the user's `name` changed;
 * - `user.password_changed` — a new password was set (whether or not it equals the old one);
 * - `user.role_changed` — the user's `role` changed;
 * - `user.email_changed` — the user's `email` was set: at registration with an address, or by a
 *   PUT or PATCH to another address or to none ({@link UserChange.email} is the new one);
 * - `user.deleted` — the user was deleted (its row is gone; what references it by a foreign key
 *   with `ON DELETE CASCADE` went with it).
 * In-process only: not the event log's types (docs/events.md#event-types), although the log also
 * records a deletion as its `user.deleted`.
 */
export const USER_LIFECYCLE_EVENTS = ['user.renamed', 'user.password_changed', 'user.role_changed', 'user.email_changed', 'user.deleted'] as const;

/** One of {@link USER_LIFECYCLE_EVENTS}. */
export type UserLifecycleEvent = (typeof USER_LIFECYCLE_EVENTS)[number];

/** What a handler of a user lifecycle event receives. */
export interface UserChange {
  /** The entity manager of the transaction that writes the user's change: a handler writes with it, so its writes commit or roll back with the change. */
  manager: EntityManager;
  /** The changed (or deleted) user. */
  userId: number;
  /** When the change was made: the user's new `updated_at` (for a deletion, when it began). */
  at: Date;
  /** `user.email_changed` only: the new address (lower-cased), null when it was cleared. */
  email?: string | null;
}

/**
 * A handler of a user lifecycle event: runs inside the user's transaction, after the user's row was
 * written, and awaits only database calls through `change.manager` (on SQLite every request shares
 * one connection). What it throws rolls the whole change back and becomes the request's answer (an
 * ApiException its status, anything else 500).
 */
export type UserChangeHandler = (change: UserChange) => Promise<void>;

/**
 * What must happen outside the database around a user's change, once per change however many of
 * its events it raises (the access-token deny list): `before` the transaction opens — what it
 * throws (503 when the shared store is unavailable) stops the change with nothing written — and
 * `afterCommit`, once the change is committed (not after a rollback). A registration runs only
 * `afterCommit` (there is no user before it).
 */
export interface UserChangeFence {
  before(userId: number): Promise<void>;
  afterCommit(userId: number): Promise<void>;
}

interface Registered<T> {
  name: string;
  events: ReadonlySet<UserLifecycleEvent>;
  reaction: T;
}

/**
 * The user lifecycle (docs/extending.md#user-lifecycle-events): the users module raises the events
 * of a change (UsersService), the modules owning rows that depend on a user (articles, comments,
 * auth) react, registering in `onModuleInit`. Handlers of one event run in registration order — the
 * order Nest initialises the modules, a module before those that import it; one change's events in
 * the order of {@link USER_LIFECYCLE_EVENTS}.
 */
@Injectable()
export class UserLifecycle {
  private readonly handlers: Registered<UserChangeHandler>[] = [];
  private readonly fences: Registered<UserChangeFence>[] = [];

  /** Registers `handler`, called `name` (for {@link registered}), for `event`, inside the user's transaction (see {@link UserChangeHandler}). */
  on(event: UserLifecycleEvent, name: string, handler: UserChangeHandler): void {
    this.handlers.push({ name, events: new Set([event]), reaction: handler });
  }

  /** Registers `fence`, called `name`, around every change that raises one of `events` or more (see {@link UserChangeFence}). */
  around(events: readonly UserLifecycleEvent[], name: string, fence: UserChangeFence): void {
    this.fences.push({ name, events: new Set(events), reaction: fence });
  }

  /** The names of what reacts to `event`, in the order it runs: the fences', then the handlers'. */
  registered(event: UserLifecycleEvent): { fences: string[]; handlers: string[] } {
    return {
      fences: this.matching(this.fences, [event]).map((fence) => fence.name),
      handlers: this.matching(this.handlers, [event]).map((handler) => handler.name),
    };
  }

  /** Runs the `before` of every fence of `events` (none when empty), before the user's transaction opens. @throws what a fence throws (e.g. 503). */
  async before(events: readonly UserLifecycleEvent[], userId: number): Promise<void> {
    for (const fence of this.matching(this.fences, events)) await fence.reaction.before(userId);
  }

  /** Runs the handlers of `events` inside the user's transaction (`change.manager`), in order. @throws what a handler throws (the caller's transaction then rolls back). */
  async emit(events: readonly UserLifecycleEvent[], change: UserChange): Promise<void> {
    for (const event of USER_LIFECYCLE_EVENTS) {
      if (!events.includes(event)) continue;
      for (const handler of this.matching(this.handlers, [event])) await handler.reaction(change);
    }
  }

  /** Runs the `afterCommit` of every fence of `events`, once the user's transaction committed. @throws what a fence throws (e.g. 503). */
  async afterCommit(events: readonly UserLifecycleEvent[], userId: number): Promise<void> {
    for (const fence of this.matching(this.fences, events)) await fence.reaction.afterCommit(userId);
  }

  private matching<T>(registered: Registered<T>[], events: readonly UserLifecycleEvent[]): Registered<T>[] {
    return registered.filter((entry) => events.some((event) => entry.events.has(event)));
  }
}
