import type { DataSource, QueryRunner } from 'typeorm';
import { hashPassword } from '../auth/passwords.js';
import { ImportInputError, normaliseUsername, type SourceData } from './jsonplaceholder.js';

/** What an import did, per collection: rows inserted and rows already present (left as they are). */
export interface ImportReport {
  users: { inserted: number; present: number };
  todos: { inserted: number; present: number };
  /** Collections in the file this version does not import yet (posts, comments). */
  ignored: Record<string, number>;
}

/** The file's ids collide with different rows already in the database; nothing was written. */
export class ImportCollisionError extends Error {
  override name = 'ImportCollisionError';
}

type Row = Record<string, unknown>;

/** A timestamp in the form the driver stores: `Date` for PostgreSQL, UTC text for SQLite. */
function dbTime(dataSource: DataSource, date: Date): Date | string {
  return dataSource.options.type === 'postgres' ? date : date.toISOString().replace('T', ' ').replace('Z', '');
}

async function insertRows(qr: QueryRunner, table: string, rows: Row[]): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]);
  const postgres = qr.connection.options.type === 'postgres';
  const chunk = 100;
  for (let start = 0; start < rows.length; start += chunk) {
    const part = rows.slice(start, start + chunk);
    const params: unknown[] = [];
    const tuples = part.map((row) => `(${columns.map((c) => (params.push(row[c]), postgres ? `$${params.length}` : '?')).join(', ')})`);
    await qr.query(`INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) VALUES ${tuples.join(', ')}`, params);
  }
}

async function existing(qr: QueryRunner, table: string, columns: string[], ids: number[]): Promise<Map<number, Row>> {
  const found = new Map<number, Row>();
  const postgres = qr.connection.options.type === 'postgres';
  for (let start = 0; start < ids.length; start += 500) {
    const part = ids.slice(start, start + 500);
    const marks = part.map((_, i) => (postgres ? `$${i + 1}` : '?')).join(', ');
    const rows: Row[] = await qr.query(`SELECT ${columns.map((c) => `"${c}"`).join(', ')} FROM "${table}" WHERE "id" IN (${marks})`, part);
    for (const row of rows) found.set(Number(row.id), row);
  }
  return found;
}

/**
 * Loads JSONPlaceholder users and todos into the database, keeping the file's ids (SPEC-level
 * rules of the foundation issue): usernames normalised, e-mails lower-cased, every user gets
 * `password` (hashed with argon2id), `completed` → status `done` else `pending`. Runs in one
 * transaction; on PostgreSQL moves the id sequences past the imported ids.
 * Idempotent: a row whose id already holds the same record (same username; same owner and title)
 * is left alone and counted as present.
 * @throws ImportCollisionError when an id, username or e-mail is taken by a different record —
 *   nothing is written then.
 */
export async function importJsonPlaceholder(dataSource: DataSource, data: SourceData, password: string): Promise<ImportReport> {
  if (password.length < 8 || password.length > 128) throw new ImportInputError('--password must be 8-128 characters');
  const qr = dataSource.createQueryRunner();
  await qr.connect();
  await qr.startTransaction();
  try {
    const now = dbTime(dataSource, new Date());
    const presentUsers = await existing(qr, 'users', ['id', 'username'], data.users.map((u) => u.id));
    const newUsers = data.users.filter((u) => {
      const row = presentUsers.get(u.id);
      if (!row) return true;
      if (row.username !== normaliseUsername(u.username)) {
        throw new ImportCollisionError(`user id ${u.id} already belongs to ${String(row.username)}, not ${normaliseUsername(u.username)}`);
      }
      return false;
    });
    if (newUsers.length > 0) {
      const postgres = dataSource.options.type === 'postgres';
      const names = newUsers.map((u) => normaliseUsername(u.username));
      const emails = newUsers.map((u) => u.email.toLowerCase());
      const marks = (values: string[], offset = 0) => values.map((_, i) => (postgres ? `$${i + 1 + offset}` : '?')).join(', ');
      const taken: Row[] = await qr.query(
        `SELECT "id", "username", "email" FROM "users" WHERE "username" IN (${marks(names)}) OR "email" IN (${marks(emails, names.length)})`,
        [...names, ...emails],
      );
      if (taken.length > 0) {
        throw new ImportCollisionError(`username or e-mail already taken by user ${String(taken[0].id)} (${String(taken[0].username)})`);
      }
      const hash = await Promise.all(newUsers.map(() => hashPassword(password)));
      await insertRows(
        qr,
        'users',
        newUsers.map((u, i) => ({ id: u.id, username: names[i], password_hash: hash[i], name: u.name, age: null, email: emails[i], role: 'user', created_at: now, updated_at: now })),
      );
    }

    const presentTodos = await existing(qr, 'todos', ['id', 'owner_id', 'title'], data.todos.map((t) => t.id));
    const newTodos = data.todos.filter((t) => {
      const row = presentTodos.get(t.id);
      if (!row) return true;
      if (Number(row.owner_id) !== t.userId || row.title !== t.title) {
        throw new ImportCollisionError(`todo id ${t.id} already holds a different todo`);
      }
      return false;
    });
    await insertRows(
      qr,
      'todos',
      newTodos.map((t) => ({ id: t.id, title: t.title, content: null, status: t.completed ? 'done' : 'pending', owner_id: t.userId, created_at: now, updated_at: now })),
    );

    if (dataSource.options.type === 'postgres') {
      for (const table of ['users', 'todos']) {
        await qr.query(`SELECT setval(pg_get_serial_sequence('"${table}"', 'id'), GREATEST((SELECT COALESCE(MAX("id"), 0) FROM "${table}"), 1))`);
      }
    }
    await qr.commitTransaction();
    return {
      users: { inserted: newUsers.length, present: data.users.length - newUsers.length },
      todos: { inserted: newTodos.length, present: data.todos.length - newTodos.length },
      ignored: { posts: data.posts.length, comments: data.comments.length },
    };
  } catch (error) {
    await qr.rollbackTransaction();
    throw error;
  } finally {
    await qr.release();
  }
}
