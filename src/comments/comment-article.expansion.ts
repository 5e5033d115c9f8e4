import { ArticlesService } from '../articles/articles.service.js';
import type { ExpandDef, ExpandItem } from '../common/expand/expansion.js';
import { ApiException } from '../common/errors/api-exception.js';
import { referencedIds, replaceReferences } from '../common/expand/expansion.js';
import { userReference } from '../users/user-summary.response.js';

/**
 * The expandable path `article` of comments (docs/lists.md#expanding-related-resources-expand): each
 * comment's article id becomes the article in the served version's shape (v2: its author embedded),
 * read as `GET` reads it — so only an article the caller may read is expanded (a comment is listed
 * under one, whose single read this is). Nested `article.author` expands the article's author in
 * v1 (v2 embeds it anyway).
 */
export const COMMENT_ARTICLE: ExpandDef = {
  nested: ['author'],
  expand: async (items, context, nested) => {
    const ids = referencedIds(items, 'article');
    if (ids.length === 0 || !context.caller) return;
    const service = context.get(ArticlesService);
    const articles = new Map<number, ExpandItem>();
    for (const id of ids) {
      try {
        articles.set(id, { ...(await service.findOne(id, context.caller)).body } as unknown as ExpandItem);
      } catch (error) {
        // unreadable or gone since the comments were read: the reference stays an id
        if (!(error instanceof ApiException)) throw error;
      }
    }
    if (nested.includes('author') || context.version === '2') await userReference('author').expand([...articles.values()], context, []);
    replaceReferences(items, 'article', articles);
  },
};
