import type { AuthUser } from '../caller/auth-user.js';
import { conflict, forbidden, notFound } from '../errors/api-exception.js';
import type { Scope } from '../list/find-page.js';

/** What a policy needs to know of the caller: who it is and its role (docs/authentication.md#roles-and-scopes: role and ownership). */
export type Caller = Pick<AuthUser, 'id' | 'role'>;

/** One permission of a policy: whether `caller` may do it to `row`, and the 403 message when not. */
export interface AccessRule<Row> {
  /** True when `caller` may do this to `row`. A pure function of its arguments. */
  allows(caller: Caller, row: Row): boolean;
  /** The `message` of the 403 `forbidden` body when {@link allows} is false; `id` is the id asked for. */
  refusal(row: Row, id: number | string): string;
}

/**
 * Who may make a status move, per (from, to): `writer` = whoever the `write` rule allows (the row
 * was loaded through it), `admin` = admins only. A move not listed is refused for everyone (409).
 */
export type TransitionTable<Status extends string> = Readonly<Record<Status, Readonly<Partial<Record<Status, 'writer' | 'admin'>>>>>;

/**
 * The access rules of one resource, in one place (docs/authentication.md#roles-and-scopes: role and ownership; each resource's page under docs/resources/):
 * - `rules.read`, `rules.write` and any further action (`delete`, `setRole`, …) of the resource;
 * - `visible(caller)`: the rows the caller may list, as list scopes (the SQL form of `rules.read`;
 *   undefined = every row), for {@link findPage};
 * - `transitions`: the status moves and who may make them, where the resource has statuses.
 * Applied by {@link authorize} and {@link authorizeTransition}, which throw the contract's 404/403/409.
 */
export interface AccessPolicy<Row, Action extends string = 'read' | 'write', Status extends string = never> {
  /** The resource's name in messages: `todo` as in `todo 7 not found`. */
  readonly resource: string;
  readonly rules: Readonly<Record<Action | 'read' | 'write', AccessRule<Row>>>;
  visible(caller: Caller): Scope[] | undefined;
  readonly transitions?: TransitionTable<Status>;
  /**
   * True for a resource whose existence is its owner's business (webhooks, events): a refused
   * caller gets the 404 of a missing row instead of a 403, so nobody learns another's ids.
   */
  readonly hidden?: boolean;
}

/** True when the caller is an admin or the owner `ownerId` (docs/authentication.md#roles-and-scopes: role and ownership). */
export function isOwnerOrAdmin(caller: Caller, ownerId: number): boolean {
  return caller.role === 'admin' || caller.id === ownerId;
}

/** True when `action` of `policy` allows `caller` on `row`, without throwing (e.g. to filter). */
export function can<Row, Action extends string>(
  policy: AccessPolicy<Row, Action, string>,
  action: Action | 'read' | 'write',
  caller: Caller,
  row: Row,
): boolean {
  return policy.rules[action].allows(caller, row);
}

/**
 * The one access check of every resource: takes a loaded row (or null/undefined when there is
 * none), returns it when `caller` may do `action` to it.
 * @throws 404 `not_found` (`<resource> <id> not found`) when there is no row; 403 `forbidden` with
 *   the rule's message when the policy refuses (docs/authentication.md#overview: a missing row is 404 before a refusal is 403),
 *   or the same 404 as a missing row when the policy is {@link AccessPolicy.hidden}.
 */
export function authorize<Row, Loaded extends Row, Action extends string>(
  policy: AccessPolicy<Row, Action, string>,
  action: Action | 'read' | 'write',
  caller: Caller,
  row: Loaded | null | undefined,
  id: number | string,
): Loaded {
  if (row === null || row === undefined) throw notFound(policy.resource, id);
  const rule = policy.rules[action];
  if (!rule.allows(caller, row)) throw policy.hidden ? notFound(policy.resource, id) : forbidden(rule.refusal(row, id));
  return row;
}

/**
 * Checks a status move against the policy's {@link TransitionTable} (docs/writes.md#state-changes: a move not
 * allowed → 409 naming both states).
 * @throws 409 `conflict` `cannot change status from <from> to <to>` for a move the table does not
 *   list (or a policy without transitions); 403 `forbidden` `only an admin can change status from
 *   <from> to <to>` when only admins may make it and the caller is none.
 */
export function authorizeTransition<Status extends string>(policy: AccessPolicy<any, string, Status>, caller: Caller, from: Status, to: Status): void {
  const who = policy.transitions?.[from]?.[to];
  if (who === undefined) throw conflict(`cannot change status from ${from} to ${to}`);
  if (who === 'admin' && caller.role !== 'admin') throw forbidden(`only an admin can change status from ${from} to ${to}`);
}

/**
 * The policy of a resource private to its owner (docs/resources/todos.md, docs/resources/orders.md): the owner and admins read
 * and write, anyone else gets 403 `<resource> <id> belongs to another user` (404 when `hidden`); a non-admin lists only
 * its own rows (`column` = the owner column as the service's list query names it, e.g. `t.owner_id`).
 */
export function ownedPolicy<Row, Status extends string = never>(options: {
  resource: string;
  ownerOf: (row: Row) => number;
  column: string;
  transitions?: TransitionTable<Status>;
  /** Another user's row is answered 404, like a missing one ({@link AccessPolicy.hidden}). */
  hidden?: boolean;
}): AccessPolicy<Row, 'read' | 'write', Status> {
  const owned: AccessRule<Row> = {
    allows: (caller, row) => isOwnerOrAdmin(caller, options.ownerOf(row)),
    refusal: (_row, id) => `${options.resource} ${id} belongs to another user`,
  };
  return {
    resource: options.resource,
    rules: { read: owned, write: owned },
    visible: (caller) => (caller.role === 'admin' ? undefined : [{ [options.column]: caller.id }]),
    ...(options.transitions ? { transitions: options.transitions } : {}),
    ...(options.hidden ? { hidden: true } : {}),
  };
}
