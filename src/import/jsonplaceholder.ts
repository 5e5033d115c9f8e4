/** A user of a JSONPlaceholder-shaped file (other properties are ignored). */
export interface SourceUser {
  id: number;
  name: string;
  username: string;
  email: string;
}

/** A todo of a JSONPlaceholder-shaped file. */
export interface SourceTodo {
  id: number;
  userId: number;
  title: string;
  completed: boolean;
}

/** A post of a JSONPlaceholder file (→ a published article). */
export interface SourcePost {
  id: number;
  userId: number;
  title: string;
  body: string;
}

/** A comment of a JSONPlaceholder file (→ a comment; `name` has no counterpart and is dropped). */
export interface SourceComment {
  id: number;
  postId: number;
  email: string;
  body: string;
}

/** The parts of a JSONPlaceholder file the import reads. */
export interface SourceData {
  users: SourceUser[];
  todos: SourceTodo[];
  posts: SourcePost[];
  comments: SourceComment[];
}

/** Bad input file: the message is one line naming the offending path, e.g. `users[3].email`. */
export class ImportInputError extends Error {
  override name = 'ImportInputError';
}

/**
 * Turns a JSONPlaceholder username into the API's form (docs/resources/users.md#fields: 3-32 of `[a-z0-9_]`): lower-cased,
 * every other character replaced by `_` (`Elwyn.Skiles` → `elwyn_skiles`).
 */
export function normaliseUsername(username: string): string {
  return username.toLowerCase().replace(/[^a-z0-9_]/g, '_');
}

function fail(path: string, message: string): never {
  throw new ImportInputError(`${path} ${message}`);
}

function positiveInt(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 2_147_483_647) fail(path, 'must be a positive integer');
  return value;
}

function text(value: unknown, path: string, max: number): string {
  if (typeof value !== 'string' || value.trim() === '') fail(path, 'must be a non-empty string');
  if (value.length > max) fail(path, `must be at most ${max} characters`);
  return value;
}

function list(data: Record<string, unknown>, key: string, required: boolean): unknown[] {
  const value = data[key];
  if (value === undefined && !required) return [];
  if (!Array.isArray(value)) fail(key, 'must be an array');
  return value;
}

/**
 * Checks the shape of a parsed JSONPlaceholder file and returns its users and todos.
 * @throws ImportInputError naming the first offending field (wrong type, missing, duplicate id or
 *   username, username invalid after normalisation, todo of an unknown user).
 */
export function parseSourceData(raw: unknown): SourceData {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new ImportInputError('the file must hold a JSON object with "users" and "todos" arrays');
  const data = raw as Record<string, unknown>;
  const userIds = new Set<number>();
  const usernames = new Set<string>();
  const users = list(data, 'users', true).map((item, i): SourceUser => {
    const path = `users[${i}]`;
    if (item === null || typeof item !== 'object') fail(path, 'must be an object');
    const u = item as Record<string, unknown>;
    const id = positiveInt(u.id, `${path}.id`);
    if (userIds.has(id)) fail(`${path}.id`, `repeats id ${id}`);
    userIds.add(id);
    const username = text(u.username, `${path}.username`, 32);
    const normalised = normaliseUsername(username);
    if (!/^[a-z0-9_]{3,32}$/.test(normalised)) fail(`${path}.username`, 'must give 3-32 characters of a-z, 0-9 and _');
    if (usernames.has(normalised)) fail(`${path}.username`, `repeats username ${normalised}`);
    usernames.add(normalised);
    const email = text(u.email, `${path}.email`, 254);
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) fail(`${path}.email`, 'must be an e-mail address');
    return { id, username, name: text(u.name, `${path}.name`, 100), email };
  });
  const todoIds = new Set<number>();
  const todos = list(data, 'todos', true).map((item, i): SourceTodo => {
    const path = `todos[${i}]`;
    if (item === null || typeof item !== 'object') fail(path, 'must be an object');
    const t = item as Record<string, unknown>;
    const id = positiveInt(t.id, `${path}.id`);
    if (todoIds.has(id)) fail(`${path}.id`, `repeats id ${id}`);
    todoIds.add(id);
    const userId = positiveInt(t.userId, `${path}.userId`);
    if (!userIds.has(userId)) fail(`${path}.userId`, `names user ${userId}, who is not in the file`);
    if (typeof t.completed !== 'boolean') fail(`${path}.completed`, 'must be true or false');
    return { id, userId, title: text(t.title, `${path}.title`, 200), completed: t.completed };
  });
  const postIds = new Set<number>();
  const posts = list(data, 'posts', false).map((item, i): SourcePost => {
    const path = `posts[${i}]`;
    if (item === null || typeof item !== 'object') fail(path, 'must be an object');
    const p = item as Record<string, unknown>;
    const id = positiveInt(p.id, `${path}.id`);
    if (postIds.has(id)) fail(`${path}.id`, `repeats id ${id}`);
    postIds.add(id);
    const userId = positiveInt(p.userId, `${path}.userId`);
    if (!userIds.has(userId)) fail(`${path}.userId`, `names user ${userId}, who is not in the file`);
    if (typeof p.body !== 'string' || p.body.length > 100_000) fail(`${path}.body`, 'must be a string of at most 100000 characters');
    return { id, userId, title: text(p.title, `${path}.title`, 200), body: p.body };
  });
  const commentIds = new Set<number>();
  const comments = list(data, 'comments', false).map((item, i): SourceComment => {
    const path = `comments[${i}]`;
    if (item === null || typeof item !== 'object') fail(path, 'must be an object');
    const c = item as Record<string, unknown>;
    const id = positiveInt(c.id, `${path}.id`);
    if (commentIds.has(id)) fail(`${path}.id`, `repeats id ${id}`);
    commentIds.add(id);
    const postId = positiveInt(c.postId, `${path}.postId`);
    if (!postIds.has(postId)) fail(`${path}.postId`, `names post ${postId}, which is not in the file`);
    return { id, postId, email: text(c.email, `${path}.email`, 254), body: text(c.body, `${path}.body`, 5000) };
  });
  return { users, todos, posts, comments };
}
