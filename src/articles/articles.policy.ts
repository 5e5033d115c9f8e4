import { type AccessPolicy, isOwnerOrAdmin, type TransitionTable } from '../common/access/access-policy.js';
import type { Scope } from '../common/list/find-page.js';
import { type Article, ARTICLE_STATUSES, ARTICLE_TRANSITIONS, type ArticleStatus } from './article.entity.js';

/** What the articles policy reads of an article. */
export type ArticleAccess = Pick<Article, 'status' | 'author_id'>;

/**
 * The article status changes of docs/resources/articles.md#status ({@link ARTICLE_TRANSITIONS}) as a transition table: any
 * listed change, and staying in the same status (no change), by whoever may write the article.
 */
export const ARTICLE_TRANSITION_TABLE: TransitionTable<ArticleStatus> = Object.fromEntries(
  ARTICLE_STATUSES.map((from) => [from, Object.fromEntries([from, ...ARTICLE_TRANSITIONS[from]].map((to) => [to, 'writer' as const]))]),
) as TransitionTable<ArticleStatus>;

/**
 * Who may do what to articles (docs/resources/articles.md#visibility-and-permissions):
 * - read: a published article everyone; a draft or archived one its author and admins, anyone else
 *   403 `article <id> is <status> and belongs to another user`;
 * - write (change, delete): its author and admins, anyone else 403 `only the article’s author or an
 *   admin may change it`;
 * - list: admins all; others the published ones and their own (the list query's alias is `a`);
 * - status changes by {@link ARTICLE_TRANSITION_TABLE}.
 */
export const ARTICLES_POLICY: AccessPolicy<ArticleAccess, 'read' | 'write', ArticleStatus> = {
  resource: 'article',
  rules: {
    read: {
      allows: (caller, article) => article.status === 'published' || isOwnerOrAdmin(caller, article.author_id),
      refusal: (article, id) => `article ${id} is ${article.status} and belongs to another user`,
    },
    write: {
      allows: (caller, article) => isOwnerOrAdmin(caller, article.author_id),
      refusal: () => 'only the article’s author or an admin may change it',
    },
  },
  visible: (caller): Scope[] | undefined => (caller.role === 'admin' ? undefined : [{ 'a.status': 'published' }, { 'a.author_id': caller.id }]),
  transitions: ARTICLE_TRANSITION_TABLE,
};
