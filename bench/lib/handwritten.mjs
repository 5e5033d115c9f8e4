/**
 * The hand-written parts the benchmark's reference servers share (bench/limit-server.mjs, THE
 * LIMIT on fastify, and bench/floor-server.mjs, the Nest + Express floor): the service's response
 * headers, HS256 Bearer verification with the deny list, the database (pg Pool or better-sqlite3)
 * and the article representation. Configured by the environment at import: DATABASE_URL,
 * JWT_SECRET, REDIS_URL (optional), DB_POOL_SIZE, BENCH_APPLICATION_NAME (PostgreSQL
 * `application_name`, default `resource-api-limit`).
 */
import { createHmac, createSecretKey, randomUUID, timingSafeEqual } from 'node:crypto';

export const DATABASE_URL = process.env.DATABASE_URL ?? '';
const SECRET = createSecretKey(Buffer.from(process.env.JWT_SECRET ?? ''));
export const PG = /^postgres(ql)?:\/\//.test(DATABASE_URL);

// ---------------------------------------------------------------- headers

export const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none';frame-ancestors 'none'",
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'no-referrer',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'DENY',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
};
export const DEPRECATION = { deprecation: `@${Math.floor(Date.parse('2026-12-01T00:00:00Z') / 1000)}`, sunset: 'Wed, 30 Jun 2027 00:00:00 GMT' };
export const successorLink = (path) => `<${path.replace(/^\/v1\//, '/v2/')}>; rel="successor-version", </docs>; rel="deprecation"; type="text/html"`;
export const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestId(req) {
  const sent = req.headers['x-request-id'];
  return typeof sent === 'string' && SANE_ID.test(sent) ? sent : randomUUID();
}

export class HttpError extends Error {
  constructor(status, code, message, extra, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.extra = extra;
    this.details = details;
  }
}

// ---------------------------------------------------------------- authentication

export const ROLES = new Set(['user', 'admin']);
export const denied = new Map();
export let redis;
if (process.env.REDIS_URL) {
  const { Redis } = await import('ioredis');
  redis = new Redis(process.env.REDIS_URL, { lazyConnect: false, maxRetriesPerRequest: 1 });
}

export function unauthorized() {
  return new HttpError(401, 'unauthorized', 'invalid or expired token', { 'www-authenticate': 'Bearer realm="api", error="invalid_token"' });
}

/** Verifies the Bearer token; returns `{id, role}` or throws 401. */
export async function authenticate(req) {
  const header = req.headers.authorization;
  if (typeof header !== 'string' || !/^bearer\s/i.test(header)) {
    throw new HttpError(401, 'unauthorized', 'authentication required', { 'www-authenticate': 'Bearer realm="api"' });
  }
  const token = header.slice(7).trim();
  const first = token.indexOf('.');
  const second = token.indexOf('.', first + 1);
  if (first < 0 || second < 0 || token.indexOf('.', second + 1) >= 0) throw unauthorized();
  let head;
  let claims;
  try {
    head = JSON.parse(Buffer.from(token.slice(0, first), 'base64url').toString());
    claims = JSON.parse(Buffer.from(token.slice(first + 1, second), 'base64url').toString());
  } catch {
    throw unauthorized();
  }
  if (head?.alg !== 'HS256') throw unauthorized();
  const expected = createHmac('sha256', SECRET).update(token.slice(0, second)).digest();
  const signature = Buffer.from(token.slice(second + 1), 'base64url');
  if (signature.length !== expected.length || !timingSafeEqual(signature, expected)) throw unauthorized();
  const now = Math.floor(Date.now() / 1000);
  if (
    typeof claims?.exp !== 'number' ||
    claims.exp <= now ||
    claims.typ !== 'access' ||
    typeof claims.jti !== 'string' ||
    typeof claims.fid !== 'string' ||
    typeof claims.iat !== 'number' ||
    !Number.isSafeInteger(claims.user_id) ||
    claims.user_id < 1 ||
    !ROLES.has(claims.role)
  ) {
    throw unauthorized();
  }
  const keys = [`deny:${claims.jti}`, `deny-user:${claims.user_id}`];
  const [jtiDenied, userDeniedUpTo] = redis ? await redis.mget(keys) : [denied.get(keys[0]) ?? null, denied.get(keys[1]) ?? null];
  if (jtiDenied !== null || (userDeniedUpTo != null && claims.iat <= Number(userDeniedUpTo))) throw unauthorized();
  return { id: claims.user_id, role: claims.role };
}

// ---------------------------------------------------------------- database

export const iso = PG
  ? (value) => (value === null ? null : value.toISOString())
  : (value) =>
      value === null
        ? null
        : value.length === 23 && value[10] === ' '
          ? `${value.slice(0, 10)}T${value.slice(11)}Z`
          : new Date(value.includes('T') ? value : `${value.replace(' ', 'T')}Z`).toISOString();

/** An article row (columns of the articles table + `tags`) → the service's ArticleResponse JSON object. */
export function article(row) {
  const id = Number(row.id);
  const author = Number(row.author_id);
  const tags = row.tags === null ? [] : PG ? row.tags : row.tags.split('\u001f');
  tags.sort();
  return {
    id,
    title: row.title,
    body: row.body,
    status: row.status,
    tags,
    author,
    published_at: iso(row.published_at),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    links: [
      { rel: 'self', href: `/v1/articles/${id}` },
      { rel: 'author', href: `/v1/users/${author}` },
      { rel: 'comments', href: `/v1/articles/${id}/comments` },
    ],
  };
}

export const TAGS_PG = `(SELECT array_agg(t.name) FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE at.article_id = a.id) AS tags`;
export const TAGS_SQLITE = `(SELECT group_concat(t.name, char(31)) FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE at.article_id = a.id) AS tags`;
export const COLUMNS = `a.id, a.title, a.body, a.status, a.author_id, a.published_at, a.created_at, a.updated_at, ${PG ? TAGS_PG : TAGS_SQLITE}`;

export let db;
if (PG) {
  const pg = (await import('pg')).default;
  // JIT off: compiling a plan costs more than these short queries run (PostgreSQL's own advice for OLTP)
  db = new pg.Pool({
    connectionString: DATABASE_URL,
    max: Number(process.env.DB_POOL_SIZE ?? 10),
    application_name: process.env.BENCH_APPLICATION_NAME ?? 'resource-api-limit',
    options: '-c jit=off',
  });
} else {
  const { default: Database } = await import('better-sqlite3');
  db = new Database(DATABASE_URL.replace(/^sqlite:/, ''));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
}
export const sqliteStatements = new Map();

/** Runs `sql` with positional parameters (`$1`… on PostgreSQL, `?` on SQLite) and returns the rows. */
export async function rows(sql, params) {
  if (PG) return (await db.query({ text: sql, values: params })).rows;
  let statement = sqliteStatements.get(sql);
  if (!statement) {
    // `$n` may repeat (the count sub-query): named parameters `@pn` on SQLite
    statement = db.prepare(sql.replace(/\$(\d+)/g, '@p$1'));
    sqliteStatements.set(sql, statement);
  }
  const named = {};
  params.forEach((value, i) => (named[`p${i + 1}`] = value));
  return statement.reader ? statement.all(named) : [statement.run(named)];
}
