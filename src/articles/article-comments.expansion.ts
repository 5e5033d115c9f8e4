import { toCommentResponse } from '../comments/comment.response.js';
import type { Comment } from '../comments/comment.entity.js';
import type { ExpandDef, ExpandItem } from '../common/expand/expansion.js';
import type { Row } from '../common/list/field-table.js';
import { linkPrefix } from '../common/versioning/api-versions.js';
import { userReference } from '../users/user-summary.response.js';

/** How many of an article's comments `expand=comments` embeds (the oldest first). */
export const EXPANDED_COMMENTS = 5;

/** A row of {@link firstCommentsSql}: the article, its comment count, and one of its first comments (all null when it has none). */
interface FirstCommentRow {
  for_article: number | string;
  total: number | string;
  id: number | string | null;
  body: string | null;
  author_id: number | string | null;
  created_at: Date | string | null;
  updated_at: Date | string | null;
}

/**
 * The first {@link EXPANDED_COMMENTS} comments of each article of a page and each one's count, in
 * one statement: on PostgreSQL a `LATERAL` read of `(article_id, id)` per article (`$1`: the ids as
 * an integer array); on SQLite a correlated `IN (… ORDER BY id LIMIT n)` per article, from the same
 * index (the ids as `?` placeholders, `count` of them).
 */
export function firstCommentsSql(postgres: boolean, count: number): string {
  const columns = 'c.id, c.body, c.author_id, c.created_at, c.updated_at';
  if (postgres) {
    return `SELECT a.id AS for_article, n.total, ${columns} FROM unnest(CAST($1 AS integer[])) AS a(id)
      CROSS JOIN LATERAL (SELECT COUNT(*) AS total FROM comments x WHERE x.article_id = a.id) n
      LEFT JOIN LATERAL (SELECT * FROM comments y WHERE y.article_id = a.id ORDER BY y.id LIMIT ${EXPANDED_COMMENTS}) c ON true
      ORDER BY a.id, c.id`;
  }
  const placeholders = Array.from({ length: count }, () => '?').join(', ');
  return `SELECT a.id AS for_article, (SELECT COUNT(*) FROM comments x WHERE x.article_id = a.id) AS total, ${columns} FROM articles a
    LEFT JOIN comments c ON c.id IN (SELECT y.id FROM comments y WHERE y.article_id = a.id ORDER BY y.id LIMIT ${EXPANDED_COMMENTS})
    WHERE a.id IN (${placeholders}) ORDER BY a.id, c.id`;
}

/**
 * The expandable path `comments` of articles (docs/lists.md#expanding-related-resources-expand):
 * adds to each item `comments: {data, total, links}` — its first {@link EXPANDED_COMMENTS}
 * comments (oldest first) in the served version's shape, how many it has, and the link to all of
 * them — in one statement for the whole page ({@link firstCommentsSql}). Whoever reads an article
 * reads its comments. Nested `comments.author` expands their authors (one more statement); API v2
 * embeds them anyway, as its comments always do.
 */
export const ARTICLE_COMMENTS: ExpandDef = {
  nested: ['author'],
  expand: async (items, context, nested) => {
    const ids = [...new Set(items.map((item) => item.id).filter((id): id is number => typeof id === 'number'))];
    if (ids.length === 0) return;
    const postgres = context.dataSource.options.type === 'postgres';
    const rows = await context.dataSource.query<FirstCommentRow[]>(firstCommentsSql(postgres, ids.length), postgres ? [ids] : ids);
    const byArticle = new Map<number, { data: ExpandItem[]; total: number }>();
    for (const row of rows) {
      const article = Number(row.for_article);
      const entry = byArticle.get(article) ?? { data: [], total: Number(row.total) };
      byArticle.set(article, entry);
      if (row.id === null) continue;
      const comment = { ...row, article_id: article } as unknown as Row<Comment, 'article_id' | 'author_id'>;
      entry.data.push(toCommentResponse(comment) as unknown as ExpandItem);
    }
    const comments = [...byArticle.values()].flatMap((entry) => entry.data);
    if (nested.includes('author') || context.version === '2') await userReference('author').expand(comments, context, []);
    const prefix = linkPrefix();
    for (const item of items) {
      const id = item.id as number;
      const entry = byArticle.get(id) ?? { data: [], total: 0 };
      item.comments = { data: entry.data, total: entry.total, links: [{ rel: 'self', href: `${prefix}/articles/${id}/comments` }] };
    }
  },
};
