import { describe, expect, it } from '@jest/globals';
import { refusal } from '../../../test/setup/refusal.js';
import { type AccessPolicy, authorize, authorizeTransition, can, type Caller, ownedPolicy } from './access-policy.js';

const alice: Caller = { id: 1, role: 'user' };
const bob: Caller = { id: 2, role: 'user' };
const admin: Caller = { id: 9, role: 'admin' };

type Widget = { owner: number; status: 'new' | 'done' | 'gone' };
const WIDGETS: AccessPolicy<Widget, 'read' | 'write', Widget['status']> = ownedPolicy<Widget, Widget['status']>({
  resource: 'widget',
  ownerOf: (widget) => widget.owner,
  column: 'w.owner',
  transitions: { new: { done: 'writer', gone: 'admin' }, done: {}, gone: {} },
});

describe('authorize', () => {
  it('returns the row the policy allows, the very object', () => {
    const row = { owner: 1, status: 'new' as const, extra: true };
    expect(authorize(WIDGETS, 'read', alice, row, 7)).toBe(row);
    expect(authorize(WIDGETS, 'write', admin, row, 7)).toBe(row);
  });

  it('404 not_found for a missing row before asking the policy, whoever asks', () => {
    for (const caller of [alice, admin]) {
      for (const row of [null, undefined])
        expect(refusal(() => authorize(WIDGETS, 'write', caller, row, 7))).toEqual({ status: 404, code: 'not_found', message: 'widget 7 not found' });
    }
  });

  it("403 forbidden with the rule's message when the policy refuses", () => {
    expect(refusal(() => authorize(WIDGETS, 'read', bob, { owner: 1, status: 'new' }, 7))).toEqual({
      status: 403,
      code: 'forbidden',
      message: 'widget 7 belongs to another user',
    });
  });

  it('a hidden policy answers a refused caller with the 404 of a missing row, not a 403', () => {
    const hidden = ownedPolicy<Widget>({ resource: 'widget', ownerOf: (widget) => widget.owner, column: 'w.owner', hidden: true });
    expect(refusal(() => authorize(hidden, 'read', bob, { owner: 1, status: 'new' }, 'w_7'))).toEqual({
      status: 404,
      code: 'not_found',
      message: 'widget w_7 not found',
    });
    expect(authorize(hidden, 'write', alice, { owner: 1, status: 'new' }, 7)).toEqual({ owner: 1, status: 'new' });
  });

  it('can() answers without throwing', () => {
    expect(can(WIDGETS, 'read', alice, { owner: 1, status: 'new' })).toBe(true);
    expect(can(WIDGETS, 'write', bob, { owner: 1, status: 'new' })).toBe(false);
  });
});

describe('ownedPolicy', () => {
  it("lets the owner and admins read and write, nobody else; lists a non-admin's own rows only", () => {
    const row: Widget = { owner: 1, status: 'new' };
    for (const action of ['read', 'write'] as const) {
      expect([alice, bob, admin].map((caller) => can(WIDGETS, action, caller, row))).toEqual([true, false, true]);
    }
    expect(WIDGETS.visible(alice)).toEqual([{ 'w.owner': 1 }]);
    expect(WIDGETS.visible(admin)).toBeUndefined();
  });
});

describe('authorizeTransition', () => {
  it('allows a listed move to whoever may write, an admin-only move to admins', () => {
    expect(refusal(() => authorizeTransition(WIDGETS, alice, 'new', 'done'))).toBeUndefined();
    expect(refusal(() => authorizeTransition(WIDGETS, admin, 'new', 'gone'))).toBeUndefined();
  });

  it('403 for an admin-only move by a non-admin, naming both states', () => {
    expect(refusal(() => authorizeTransition(WIDGETS, alice, 'new', 'gone'))).toEqual({
      status: 403,
      code: 'forbidden',
      message: 'only an admin can change status from new to gone',
    });
  });

  it('409 for a move the table does not list, for admins too (the same status included), and for a policy without transitions', () => {
    for (const [from, to] of [
      ['done', 'new'],
      ['new', 'new'],
      ['gone', 'done'],
    ] as const) {
      expect(refusal(() => authorizeTransition(WIDGETS, admin, from, to))).toEqual({
        status: 409,
        code: 'conflict',
        message: `cannot change status from ${from} to ${to}`,
      });
    }
    const plain = ownedPolicy<Widget>({ resource: 'widget', ownerOf: (widget) => widget.owner, column: 'w.owner' });
    expect(refusal(() => authorizeTransition(plain as AccessPolicy<Widget, string, string>, admin, 'new', 'done'))?.status).toBe(409);
  });
});
