import { send, writerAgent } from './http.js';
import type { Ledger, Op } from './ledger.js';
import type { TodoState, Writer } from './writer.js';

/** What the read-back found; every list holds one line per finding (empty lists: a clean audit). */
export interface AuditReport {
  /** Rows read back (todos, articles, comments). */
  rows: number;
  /** Keys with more than one record: a create applied twice. */
  duplicates: string[];
  /** Acknowledged creates (201) whose record is missing. */
  lost: string[];
  /** Records whose content is none of the acknowledged states (an acknowledged update not held, or a refused one applied). */
  mismatched: string[];
  /** Records whose delete was acknowledged (204) but that are still there. */
  resurrected: string[];
  /** Records of requests that were refused (4xx). */
  refusedPresent: string[];
  /** Records no operation of the ledger explains. */
  unexplained: string[];
  /** Lists whose `total` differs from the items paged through. */
  wrongTotals: string[];
}

interface Row {
  id: number;
  title?: string;
  body?: string;
  content?: string | null;
  status?: string;
}

const AUDIT_TIMEOUT_MS = 30_000;

/**
 * Reads every item of a list through cursor pages of 100 (the first page with
 * `Prefer: count=exact`), as the writer's own user; returns the items and the first page's `total`.
 * @throws when a page does not answer 200.
 */
async function readAll(base: string, token: string, path: string): Promise<{ rows: Row[]; total: number }> {
  const agent = writerAgent();
  try {
    const rows: Row[] = [];
    let total = -1;
    let cursor: string | undefined;
    const sep = path.includes('?') ? '&' : '?';
    for (;;) {
      const url = `${path}${sep}size=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const answer = await send(agent, base, {
        method: 'GET',
        path: url,
        headers: { Authorization: `Bearer ${token}`, Prefer: 'count=exact' },
        timeoutMs: AUDIT_TIMEOUT_MS,
      });
      if (answer.status !== 200) throw new Error(`audit: GET ${url} answered ${answer.status} ${JSON.stringify(answer.body)}`);
      const page = answer.body as { data: Row[]; total?: number; next_cursor?: string };
      if (!cursor) total = page.total ?? -1;
      rows.push(...page.data);
      if (!page.next_cursor) return { rows, total };
      cursor = page.next_cursor;
    }
  } finally {
    agent.destroy();
  }
}

/** The key a title or body carries (`todo <key>`, `article <key>`, `comment <key>`). */
function keyOf(text: string | undefined): string {
  return (text ?? '').split(' ')[1] ?? '';
}

/** An operation's tries, e.g. `cut:ECONNRESET > 503 > 201`. */
export function history(op: Op): string {
  return op.attempts
    .map((attempt) =>
      attempt.status !== undefined
        ? `${attempt.status}${attempt.code && attempt.status >= 400 ? ` ${attempt.code}` : ''}`
        : `${attempt.failure}:${attempt.error}`,
    )
    .join(' > ');
}

/** JSON of `value` with every string longer than 60 characters shortened (padding is not worth printing). */
function brief(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => (typeof item === 'string' && item.length > 60 ? `${item.slice(0, 50)}…(${item.length} chars)` : item));
}

const sameState = (row: Row, state: TodoState) => row.title === state.title && row.content === state.content && row.status === state.status;

/**
 * The read-back audit of one scenario, through the API only, as each writer's own user: its todos
 * (every acknowledged create present once with an acknowledged state, acknowledged deletes gone,
 * nothing of a refused request, no key twice), its articles and the comments on its acknowledged
 * articles (present once per acknowledged create, no key twice), and every list's `total` equal to
 * the items paged through. Operations without a final answer may have left at most one record.
 */
export async function audit(base: string, writers: Writer[], ledger: Ledger): Promise<AuditReport> {
  const report: AuditReport = { rows: 0, duplicates: [], lost: [], mismatched: [], resurrected: [], refusedPresent: [], unexplained: [], wrongTotals: [] };
  const opsByWriter = new Map<number, Op[]>();
  for (const op of ledger.ops) opsByWriter.set(op.writer, [...(opsByWriter.get(op.writer) ?? []), op]);

  /** Checks the records of one kind of create against its operations; returns the records by key. */
  const checkCreates = (what: string, rows: Row[], ops: Op[], text: (row: Row) => string | undefined) => {
    const byKey = new Map<string, Row[]>();
    for (const row of rows) byKey.set(keyOf(text(row)), [...(byKey.get(keyOf(text(row))) ?? []), row]);
    const known = new Set(ops.map((op) => op.key));
    for (const [key, found] of byKey) {
      if (!known.has(key)) report.unexplained.push(`${what} ${found.map((row) => row.id).join(',')}: key ${key} of no create`);
      else if (found.length > 1)
        report.duplicates.push(
          `${what} ${key}: ${found.length} records (ids ${found.map((row) => row.id).join(', ')}; tries ${history(ops.find((op) => op.key === key)!)})`,
        );
    }
    for (const op of ops) {
      const found = byKey.get(op.key) ?? [];
      if (op.final && op.final.status >= 400 && found.length > 0)
        report.refusedPresent.push(`${what} ${op.key}: refused with ${op.final.status}, yet record ${found[0].id} exists`);
    }
    return byKey;
  };

  for (const writer of writers) {
    const ops = opsByWriter.get(writer.index) ?? [];
    const { token, id: userId } = writer.account;

    const todos = await readAll(base, token, '/v1/todos');
    report.rows += todos.rows.length;
    if (todos.total !== todos.rows.length) report.wrongTotals.push(`writer ${writer.index} todos: total ${todos.total}, paged through ${todos.rows.length}`);
    const todoCreates = ops.filter((op) => op.kind === 'create-todo' || op.kind === 'refused-create');
    const byKey = checkCreates('todo', todos.rows, todoCreates, (row) => row.title);
    const byId = new Map(todos.rows.map((row) => [row.id, row]));
    for (const todo of writer.todos) {
      const row = byId.get(todo.id);
      if (todo.deleted === 'yes') {
        if (row) report.resurrected.push(`todo ${todo.id} (${todo.key}): deleted (204), still listed`);
      } else if (todo.deleted === 'no') {
        if (!row)
          report.lost.push(
            `todo ${todo.id} (${todo.key}): created (201), not listed${
              byKey.has(todo.key)
                ? ` (other ids with the key: ${byKey
                    .get(todo.key)!
                    .map((r) => r.id)
                    .join(',')})`
                : ''
            }`,
          );
        else if (!todo.states.some((state) => sameState(row, state)))
          report.mismatched.push(`todo ${todo.id}: ${brief({ title: row.title, content: row.content, status: row.status })} is none of ${brief(todo.states)}`);
      }
    }
    for (const row of todos.rows)
      if (row.content?.startsWith('refused ')) report.refusedPresent.push(`todo ${row.id}: content ${brief(row.content)} of a refused request`);

    const articles = await readAll(base, token, `/v1/articles?author=${userId}`);
    report.rows += articles.rows.length;
    if (articles.total !== articles.rows.length)
      report.wrongTotals.push(`writer ${writer.index} articles: total ${articles.total}, paged through ${articles.rows.length}`);
    checkCreates(
      'article',
      articles.rows,
      ops.filter((op) => op.kind === 'create-article'),
      (row) => row.title,
    );
    const articleIds = new Set(articles.rows.map((row) => row.id));
    for (const article of writer.articles)
      if (!articleIds.has(article.id)) report.lost.push(`article ${article.id} (${article.key}): created (201), not listed`);

    const commentOps = ops.filter((op) => op.kind === 'create-comment');
    const comments: Row[] = [];
    // each article once: two acknowledged creates can name one id when the database handed it out twice
    for (const articleId of new Set(writer.articles.map((article) => article.id))) {
      if (!articleIds.has(articleId)) continue;
      const page = await readAll(base, token, `/v1/articles/${articleId}/comments?author=${userId}`);
      if (page.total !== page.rows.length)
        report.wrongTotals.push(`writer ${writer.index} comments of article ${articleId}: total ${page.total}, paged through ${page.rows.length}`);
      comments.push(...page.rows);
    }
    report.rows += comments.length;
    // comments are read on the acknowledged articles only: a comment of an article not found is reported as lost there
    const commentsByKey = checkCreates('comment', comments, commentOps, (row) => row.body);
    for (const op of commentOps) {
      if (op.final?.status !== 201) continue;
      const articleId = Number(op.path.split('/')[3]);
      if (articleIds.has(articleId) && !(commentsByKey.get(op.key) ?? []).some((row) => row.id === (op.final!.body as { id: number }).id)) {
        report.lost.push(`comment ${(op.final.body as { id: number }).id} (${op.key}) on article ${articleId}: created (201), not listed`);
      }
    }
  }
  return report;
}

/** The number of findings of each kind, for the summary line and the assertions. */
export function auditCounts(
  report: AuditReport,
): Record<'duplicates' | 'lost' | 'mismatched' | 'resurrected' | 'refusedPresent' | 'unexplained' | 'wrongTotals', number> {
  return {
    duplicates: report.duplicates.length,
    lost: report.lost.length,
    mismatched: report.mismatched.length,
    resurrected: report.resurrected.length,
    refusedPresent: report.refusedPresent.length,
    unexplained: report.unexplained.length,
    wrongTotals: report.wrongTotals.length,
  };
}
