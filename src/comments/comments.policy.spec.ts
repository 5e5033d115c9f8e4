import { describe, expect, it } from '@jest/globals';
import { refusal } from '../../test/setup/refusal.js';
import { authorize, can } from '../common/access/access-policy.js';
import { COMMENTS_POLICY } from './comments.policy.js';

const commenter = { id: 1, role: 'user' as const };
const articleAuthor = { id: 2, role: 'user' as const };
const other = { id: 3, role: 'user' as const };
const admin = { id: 9, role: 'admin' as const };
const comment = { author_id: 1, article_author_id: 2 };

describe('COMMENTS_POLICY (docs/resources/comments.md; the article is checked first)', () => {
  it('everyone who may read the article reads its comments', () => {
    expect([commenter, articleAuthor, other, admin].map((caller) => can(COMMENTS_POLICY, 'read', caller, comment))).toEqual([true, true, true, true]);
    expect(COMMENTS_POLICY.visible(other)).toBeUndefined();
  });

  it('only the comment’s author edits it — not the article’s author, not an admin', () => {
    expect([commenter, articleAuthor, other, admin].map((caller) => can(COMMENTS_POLICY, 'write', caller, comment))).toEqual([true, false, false, false]);
    expect(refusal(() => authorize(COMMENTS_POLICY, 'write', admin, comment, 6))).toEqual({
      status: 403,
      code: 'forbidden',
      message: 'only the comment’s author may edit it',
    });
  });

  it('the comment’s author, the article’s author and admins delete it; anyone else gets 403', () => {
    expect([commenter, articleAuthor, other, admin].map((caller) => can(COMMENTS_POLICY, 'delete', caller, comment))).toEqual([true, true, false, true]);
    expect(refusal(() => authorize(COMMENTS_POLICY, 'delete', other, comment, 6))).toEqual({
      status: 403,
      code: 'forbidden',
      message: 'only the comment’s author, the article’s author or an admin may delete it',
    });
    expect(refusal(() => authorize(COMMENTS_POLICY, 'delete', admin, null, 6))).toEqual({ status: 404, code: 'not_found', message: 'comment 6 not found' });
  });
});
