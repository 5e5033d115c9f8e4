import { describe, expect, it } from '@jest/globals';
import { refusal } from '../../test/setup/refusal.js';
import { authorize, authorizeTransition, can } from '../common/access/access-policy.js';
import { ARTICLE_STATUSES } from './article.entity.js';
import { ARTICLES_POLICY } from './articles.policy.js';

const author = { id: 1, role: 'user' as const };
const other = { id: 2, role: 'user' as const };
const admin = { id: 9, role: 'admin' as const };

describe('ARTICLES_POLICY (docs/resources/articles.md)', () => {
  it('a published article is readable by everyone; a draft or archived one by its author and admins only', () => {
    expect([author, other, admin].map((caller) => can(ARTICLES_POLICY, 'read', caller, { status: 'published', author_id: 1 }))).toEqual([true, true, true]);
    for (const status of ['draft', 'archived'] as const) {
      expect([author, other, admin].map((caller) => can(ARTICLES_POLICY, 'read', caller, { status, author_id: 1 }))).toEqual([true, false, true]);
      expect(refusal(() => authorize(ARTICLES_POLICY, 'read', other, { status, author_id: 1 }, 4))).toEqual({
        status: 403,
        code: 'forbidden',
        message: `article 4 is ${status} and belongs to another user`,
      });
    }
  });

  it('only its author and admins change or delete it, whatever its status', () => {
    for (const status of ARTICLE_STATUSES) {
      expect([author, other, admin].map((caller) => can(ARTICLES_POLICY, 'write', caller, { status, author_id: 1 }))).toEqual([true, false, true]);
    }
    expect(refusal(() => authorize(ARTICLES_POLICY, 'write', other, { status: 'published', author_id: 1 }, 4))).toEqual({
      status: 403,
      code: 'forbidden',
      message: 'only the article’s author or an admin may change it',
    });
  });

  it('lists everything for an admin, the published and own articles for anyone else', () => {
    expect(ARTICLES_POLICY.visible(admin)).toBeUndefined();
    expect(ARTICLES_POLICY.visible(other)).toEqual([{ 'a.status': 'published' }, { 'a.author_id': 2 }]);
  });

  it('status: draft ⇄ published, either → archived, archived is final; staying is no change', () => {
    const allowed = ['draft→draft', 'draft→published', 'draft→archived', 'published→published', 'published→draft', 'published→archived', 'archived→archived'];
    for (const from of ARTICLE_STATUSES) {
      for (const to of ARTICLE_STATUSES) {
        const result = refusal(() => authorizeTransition(ARTICLES_POLICY, author, from, to));
        expect(result).toEqual(
          allowed.includes(`${from}→${to}`) ? undefined : { status: 409, code: 'conflict', message: `cannot change status from ${from} to ${to}` },
        );
      }
    }
  });
});
