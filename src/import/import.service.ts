import type { DataSource, QueryRunner } from 'typeorm';
import { hashPassword } from '../auth/passwords.js';
import { runAsOwner } from '../database/sqlite-transactions.js';
import { ImportInputError, normaliseUsername, type SourceData } from './jsonplaceholder.js';

/** Rows inserted and rows already present (left as they are) for one collection. */
export interface ImportCount {
  inserted: number;
  present: number;
}

/** What an import did, per collection, in the order they are loaded. */
export interface ImportReport {
  users: ImportCount;
  todos: ImportCount;
  articles: ImportCount;
  comments: ImportCount;
}

/** The file's ids collide with different rows already in the database; nothing was written. */
export class ImportCollisionError extends Error {
  override name = 'ImportCollisionError';
}

type Row = Record<string, unknown>;

/**
 * One collection to load: the table, the rows to insert (with their ids), the columns that
 * identify "the same record" when the id is already taken, and how to name a record in messages.
 */
interface Collection {
  table: keyof ImportReport;
  rows: Row[];
  sameRecord: readonly string[];
  noun: string;
}

const placeholder = (qr: QueryRunner, index: number) => (qr.connection.options.type === 'postgres' ? `$${index}` : '?');

async function insertRows(qr: QueryRunner, table: string, rows: Row[]): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]);
  for (let start = 0; start < rows.length; start += 100) {
    const params: unknown[] = [];
    const tuples = rows.slice(start, start + 100).map((row) => `(${columns.map((c) => (params.push(row[c]), placeholder(qr, params.length))).join(', ')})`);
    await qr.query(`INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) VALUES ${tuples.join(', ')}`, params);
  }
}

async function selectIn(qr: QueryRunner, table: string, columns: readonly string[], key: string, values: unknown[]): Promise<Row[]> {
  const found: Row[] = [];
  for (let start = 0; start < values.length; start += 500) {
    const part = values.slice(start, start + 500);
    const marks = part.map((_, i) => placeholder(qr, i + 1)).join(', ');
    found.push(...(await qr.query(`SELECT ${columns.map((c) => `"${c}"`).join(', ')} FROM "${table}" WHERE "${key}" IN (${marks})`, part)));
  }
  return found;
}

/**
 * Inserts the rows whose ids are free and counts those already holding the same record.
 * @throws ImportCollisionError when an id holds a different record.
 */
async function load(qr: QueryRunner, collection: Collection): Promise<ImportCount> {
  const present = new Map<number, Row>();
  for (const row of await selectIn(
    qr,
    collection.table,
    ['id', ...collection.sameRecord],
    'id',
    collection.rows.map((r) => r.id),
  ))
    present.set(Number(row.id), row);
  const fresh = collection.rows.filter((row) => {
    const existing = present.get(Number(row.id));
    if (!existing) return true;
    const differs = collection.sameRecord.find((column) => String(existing[column]) !== String(row[column]));
    if (differs !== undefined) {
      const shown = (value: unknown) => JSON.stringify(String(value).slice(0, 40));
      throw new ImportCollisionError(
        `${collection.noun} id ${String(row.id)} already holds a different ${collection.noun} (${differs} ${shown(existing[differs])}, not ${shown(row[differs])})`,
      );
    }
    return false;
  });
  await insertRows(qr, collection.table, fresh);
  return { inserted: fresh.length, present: collection.rows.length - fresh.length };
}

/**
 * Loads a JSONPlaceholder file into the database, keeping the file's ids: users (usernames
 * normalised, e-mails lower-cased, every user gets `password`, hashed with argon2id), todos
 * (`completed` → `done`, else `pending`), posts → published articles by `userId`, comments →
 * comments whose author is the user with the comment's e-mail, else the article's author. Runs in
 * one transaction; on PostgreSQL moves the id sequences past the imported ids.
 * Idempotent: a row whose id already holds the same record is left alone and counted as present.
 * @throws ImportCollisionError when an id, username or e-mail is taken by a different record —
 *   nothing is written then. ImportInputError for a password outside 8-128 characters.
 */
export function importJsonPlaceholder(dataSource: DataSource, data: SourceData, password: string): Promise<ImportReport> {
  // its own transaction owner: on SQLite the import holds the connection until it ends (docs/writes.md#transactions-on-sqlite)
  return runAsOwner({ active: false }, () => importInTransaction(dataSource, data, password));
}

/** {@link importJsonPlaceholder}'s work, in one transaction of its own query runner. */
async function importInTransaction(dataSource: DataSource, data: SourceData, password: string): Promise<ImportReport> {
  if (password.length < 8 || password.length > 128) throw new ImportInputError('--password must be 8-128 characters');
  const postgres = dataSource.options.type === 'postgres';
  const now = postgres ? new Date() : new Date().toISOString().replace('T', ' ').replace('Z', '');
  const qr = dataSource.createQueryRunner();
  await qr.connect();
  await qr.startTransaction();
  try {
    const users = data.users.map((u) => ({ id: u.id, username: normaliseUsername(u.username), email: u.email.toLowerCase(), name: u.name }));
    const byId = new Map(
      (
        await selectIn(
          qr,
          'users',
          ['id', 'username'],
          'id',
          users.map((u) => u.id),
        )
      ).map((r) => [Number(r.id), r]),
    );
    const newUsers = users.filter((u) => !byId.has(u.id));
    const taken = [
      ...(await selectIn(
        qr,
        'users',
        ['id', 'username'],
        'username',
        newUsers.map((u) => u.username),
      )),
      ...(await selectIn(
        qr,
        'users',
        ['id', 'username'],
        'email',
        newUsers.map((u) => u.email),
      )),
    ];
    if (taken.length > 0) throw new ImportCollisionError(`username or e-mail already taken by user ${String(taken[0].id)} (${String(taken[0].username)})`);
    const hashes = new Map<number, string>();
    await Promise.all(newUsers.map(async (u) => hashes.set(u.id, await hashPassword(password))));
    const report = {} as ImportReport;
    report.users = await load(qr, {
      table: 'users',
      noun: 'user',
      sameRecord: ['username'],
      rows: users.map((u) => ({
        id: u.id,
        username: u.username,
        password_hash: hashes.get(u.id) ?? '',
        name: u.name,
        age: null,
        email: u.email,
        role: 'user',
        created_at: now,
        updated_at: now,
      })),
    });
    report.todos = await load(qr, {
      table: 'todos',
      noun: 'todo',
      sameRecord: ['owner_id', 'title'],
      rows: data.todos.map((t) => ({
        id: t.id,
        title: t.title,
        content: null,
        status: t.completed ? 'done' : 'pending',
        owner_id: t.userId,
        created_at: now,
        updated_at: now,
      })),
    });
    report.articles = await load(qr, {
      table: 'articles',
      noun: 'article',
      sameRecord: ['author_id', 'title'],
      rows: data.posts.map((p) => ({
        id: p.id,
        title: p.title,
        body: p.body,
        status: 'published',
        author_id: p.userId,
        published_at: now,
        created_at: now,
        updated_at: now,
      })),
    });
    const emails = [...new Set(data.comments.map((c) => c.email.toLowerCase()))];
    const userByEmail = new Map((await selectIn(qr, 'users', ['id', 'email'], 'email', emails)).map((r) => [String(r.email), Number(r.id)]));
    const articleAuthor = new Map(data.posts.map((p) => [p.id, p.userId]));
    report.comments = await load(qr, {
      table: 'comments',
      noun: 'comment',
      sameRecord: ['article_id', 'body'],
      rows: data.comments.map((c) => ({
        id: c.id,
        body: c.body,
        article_id: c.postId,
        author_id: userByEmail.get(c.email.toLowerCase()) ?? articleAuthor.get(c.postId),
        created_at: now,
        updated_at: now,
      })),
    });
    if (postgres) {
      for (const table of ['users', 'todos', 'articles', 'comments']) {
        await qr.query(`SELECT setval(pg_get_serial_sequence('"${table}"', 'id'), GREATEST((SELECT COALESCE(MAX("id"), 0) FROM "${table}"), 1))`);
      }
    }
    await qr.commitTransaction();
    return report;
  } catch (error) {
    await qr.rollbackTransaction();
    throw error;
  } finally {
    await qr.release();
  }
}
