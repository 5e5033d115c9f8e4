import type { AccessPolicy } from '../common/access/access-policy.js';
import type { Comment } from './comment.entity.js';

/** What the comments policy reads: the comment's author and the author of its article. */
export interface CommentAccess {
  author_id: Comment['author_id'];
  article_author_id: number;
}

/**
 * Who may do what to a comment (docs/resources/comments.md#permissions), once its article is readable (checked first, by
 * the articles policy: 404/403 as for the article):
 * - read, list: everyone who may read the article (every comment of it);
 * - write (edit): the comment's author only — admins included — else 403 `only the comment’s
 *   author may edit it`;
 * - delete: the comment's author, the article's author or an admin, else 403 `only the comment’s
 *   author, the article’s author or an admin may delete it`.
 */
export const COMMENTS_POLICY: AccessPolicy<CommentAccess, 'read' | 'write' | 'delete'> = {
  resource: 'comment',
  rules: {
    read: { allows: () => true, refusal: () => 'you are not allowed to do this' },
    write: {
      allows: (caller, comment) => caller.id === comment.author_id,
      refusal: () => 'only the comment’s author may edit it',
    },
    delete: {
      allows: (caller, comment) => caller.role === 'admin' || caller.id === comment.author_id || caller.id === comment.article_author_id,
      refusal: () => 'only the comment’s author, the article’s author or an admin may delete it',
    },
  },
  visible: () => undefined,
};
