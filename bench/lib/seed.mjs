/**
 * Seeding of the benchmark databases: schema from the project's own migrations (bench/lib/migrate.mjs
 * runs them from dist/), then bulk data written directly in SQL:
 * - 1,000 users (`user0001`…, password `bench-password`, role `user`; one argon2id hash shared);
 * - 41 tags; 5 todos per user;
 * - N articles: status 50 % published / 30 % draft / 20 % archived, authors spread over all users,
 *   0–3 tags each, titles of 4–7 words, bodies of ~40–440 words (about 300 chars to 3 KB) drawn
 *   from a pool of 1,000 generated bodies, `created_at` increasing with the id over three years
 *   (with jitter), `published_at` set for published articles and some archived/draft ones.
 * The data is deterministic (a hash of the row number), so every seed of a size is the same.
 *
 * Seeded databases are cached: PostgreSQL as a template database, SQLite as a file, both named by
 * {@link seedKey} (a hash of the migrations, the data source options and this file) and the size,
 * so a re-run only copies them.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import Database from 'better-sqlite3';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, '../..');
export const CACHE_DIR = path.join(ROOT, 'bench/.cache');
export const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** Every PostgreSQL database the benchmark creates starts with this prefix. */
export const PG_PREFIX = process.env.BENCH_PG_PREFIX ?? 'resource_api_bench';

export const USERS = 1000;
export const TAG_NAMES = [
  'nestjs',
  'node',
  'typescript',
  'javascript',
  'postgres',
  'sqlite',
  'redis',
  'docker',
  'kubernetes',
  'http',
  'rest',
  'graphql',
  'security',
  'oauth',
  'testing',
  'performance',
  'databases',
  'devops',
  'linux',
  'cloud',
  'web',
  'api-design',
  'caching',
  'logging',
  'monitoring',
  'ci-cd',
  'git',
  'open-source',
  'tutorial',
  'news',
  'release',
  'architecture',
  'microservices',
  'frontend',
  'backend',
  'rust',
  'go',
  'python',
  'java',
  'css',
  'html5',
];
const WORDS = (
  'the a an of to in for on with by from about into over after under between through during without within ' +
  'server client request response database index query table column row cache queue worker thread process ' +
  'memory latency throughput benchmark deploy release version feature module service controller handler ' +
  'middleware token session cookie header payload schema migration transaction connection pool replica ' +
  'cluster container image volume network proxy gateway router endpoint resource collection document ' +
  'quick slow simple robust careful modern legacy stable fast small large hidden public private shared ' +
  'build test measure improve reduce avoid explain compare choose write read update delete create list ' +
  'because while although therefore however meanwhile finally first second next last every each other ' +
  'developer team user reader author editor project product customer system platform framework library ' +
  'pattern practice guide lesson story note idea question answer problem solution mistake example result ' +
  'morning evening week month year today tomorrow always never often sometimes rarely usually ' +
  'clear strong useful practical honest concrete abstract general specific complete partial careful'
).split(/\s+/);

/** Article counts by size name: `10k`, `100k`, `1m`, or a plain number (`500`). */
export function parseSize(name) {
  const m = /^(\d+)(k|m)?$/i.exec(name.trim());
  if (!m) throw new Error(`bad size ${name}: use e.g. 10k, 100k, 1m or 500`);
  return Number(m[1]) * (m[2] ? (m[2].toLowerCase() === 'k' ? 1000 : 1_000_000) : 1);
}

/** A short hash of what decides a seeded database's content: migrations, data source, this seeder. */
export function seedKey() {
  const hash = createHash('sha256');
  const migrations = path.join(ROOT, 'src/database/migrations');
  for (const file of readdirSync(migrations).sort()) hash.update(file).update(readFileSync(path.join(migrations, file)));
  hash.update(readFileSync(path.join(ROOT, 'src/database/data-source.ts')));
  hash.update(readFileSync(fileURLToPath(import.meta.url)));
  hash.update(readFileSync(path.join(HERE, 'migrate.mjs')));
  return hash.digest('hex').slice(0, 10);
}

/** 31-bit integer hash of a row number (JS side, SQLite): two independent streams by `salt`. */
function hash32(i, salt) {
  let x = (i ^ salt) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d) >>> 0;
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b) >>> 0;
  return (x ^ (x >>> 16)) & 0x7fffffff;
}

const BASE_MS = Date.UTC(2023, 0, 1);
const SPAN_MS = 3 * 365 * 86_400_000;

function runMigrations(databaseUrl) {
  execFileSync(process.execPath, [path.join(HERE, 'migrate.mjs')], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function passwordHash() {
  const argon2 = (await import('argon2')).default;
  return argon2.hash('bench-password', { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 });
}

/** `postgres://…/<db>` for a database name on the benchmark server. */
export function pgUrl(db) {
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${db}`;
  return url.toString();
}

async function withClient(url, fn) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function pgDatabaseExists(admin, name) {
  return (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount > 0;
}

/** Drops and re-creates indexes (not constraints) of `tables` around a bulk load; returns the restore function. */
async function pgDropIndexes(client, tables) {
  const { rows } = await client.query(
    `SELECT i.indexname, i.indexdef FROM pg_indexes i
     WHERE i.schemaname = 'public' AND i.tablename = ANY($1)
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = (quote_ident(i.schemaname) || '.' || quote_ident(i.indexname))::regclass)`,
    [tables],
  );
  for (const row of rows) await client.query(`DROP INDEX "${row.indexname}"`);
  return async () => {
    for (const row of rows) await client.query(row.indexdef);
  };
}

/** Bulk data for PostgreSQL, generated by the server (generate_series), foreign-key triggers off during the load. */
async function pgFill(client, articles, log) {
  const hash = await passwordHash();
  const tables = ['users', 'tags', 'todos', 'articles', 'article_tags'];
  for (const t of tables) await client.query(`ALTER TABLE ${t} DISABLE TRIGGER ALL`);
  const restore = await pgDropIndexes(client, ['articles', 'article_tags', 'todos']);
  const base = `'${new Date(BASE_MS).toISOString()}'::timestamptz`;
  await client.query(
    `INSERT INTO users (id, username, password_hash, name, age, email, role, created_at, updated_at)
     SELECT i, 'user' || lpad(i::text, 4, '0'), $1, 'Bench User ' || i, 18 + i % 60, 'user' || i || '@example.com', 'user',
            ${base} + i * interval '1 minute', ${base} + i * interval '1 minute'
     FROM generate_series(1, ${USERS}) i`,
    [hash],
  );
  await client.query(
    `INSERT INTO tags (id, name, created_at, updated_at)
     SELECT n, name, ${base}, ${base} FROM unnest($1::text[]) WITH ORDINALITY AS t(name, n)`,
    [TAG_NAMES],
  );
  await client.query(
    `INSERT INTO todos (id, title, content, status, owner_id, created_at, updated_at)
     SELECT i, 'Todo number ' || i, CASE WHEN i % 3 = 0 THEN NULL ELSE 'Remember item ' || i END,
            (ARRAY['pending','in_progress','done'])[1 + i % 3], 1 + (i - 1) % ${USERS},
            ${base} + i * interval '1 hour', ${base} + i * interval '1 hour'
     FROM generate_series(1, ${USERS * 5}) i`,
  );
  await client.query(
    `CREATE TEMP TABLE bench_bodies AS
     SELECT b, string_agg(CASE WHEN j = 1 THEN initcap(w) ELSE w END || CASE WHEN j % 11 = 0 THEN '.' ELSE '' END, ' ' ORDER BY j) || '.' AS body
     FROM generate_series(0, 999) b
     CROSS JOIN LATERAL generate_series(1, 40 + (hashint4(b) & 2147483647) % 400) j
     CROSS JOIN LATERAL (SELECT ($1::text[])[1 + (hashint4(b * 1000 + j) & 2147483647) % ${WORDS.length}] AS w) x
     GROUP BY b`,
    [WORDS],
  );
  const W = WORDS.length;
  const stepMs = Math.max(1, Math.floor(SPAN_MS / articles));
  const chunk = 200_000;
  for (let from = 1; from <= articles; from += chunk) {
    const to = Math.min(articles, from + chunk - 1);
    await client.query(
      `INSERT INTO articles (id, title, body, status, author_id, published_at, created_at, updated_at)
       SELECT i,
              initcap(w[1 + g % ${W}]) || ' ' || w[1 + (g / ${W}) % ${W}] || ' ' || w[1 + (h / 7) % ${W}] || ' ' || w[1 + (h / 1000) % ${W}]
                || CASE WHEN g % 4 > 0 THEN ' ' || w[1 + (g / 5000) % ${W}] ELSE '' END
                || CASE WHEN g % 4 > 1 THEN ' ' || w[1 + (h / 99991) % ${W}] ELSE '' END
                || CASE WHEN g % 4 > 2 THEN ' ' || w[1 + (g / 77777) % ${W}] ELSE '' END,
              bb.body,
              st,
              1 + g % ${USERS},
              CASE WHEN st = 'published' OR (st = 'archived' AND g % 2 = 0) OR (st = 'draft' AND g % 10 = 9)
                   THEN created + (g % 3600000) * interval '1 millisecond' END,
              created,
              CASE WHEN g % 10 < 6 THEN created ELSE created + (h % 2592000000) * interval '1 millisecond' END
       FROM (
         SELECT i, h, g, $1::text[] AS w,
                CASE WHEN h % 10 < 5 THEN 'published' WHEN h % 10 < 8 THEN 'draft' ELSE 'archived' END AS st,
                ${base} + ((i - 1)::bigint * ${SPAN_MS} / ${articles} + h % ${stepMs}) * interval '1 millisecond' AS created
         FROM generate_series(${from}, ${to}) i,
              LATERAL (SELECT hashint4(i)::bigint & 2147483647 AS h, hashint4(i # 1431655765)::bigint & 2147483647 AS g) hh
       ) s
       JOIN bench_bodies bb ON bb.b = (s.h / 256) % 1000`,
      [WORDS],
    );
    await client.query(
      `INSERT INTO article_tags (article_id, tag_id)
       SELECT i, 1 + ((h % 41) + k * (1 + (h / 4096) % 40)) % 41
       FROM generate_series(${from}, ${to}) i,
            LATERAL (SELECT hashint4(i)::bigint & 2147483647 AS h, hashint4(i # 1431655765)::bigint & 2147483647 AS g) hh,
            generate_series(0, 2) k
       WHERE k < (g / 16) % 4`,
    );
    log(`  articles ${to}/${articles}`);
  }
  log('  indexes');
  await restore();
  for (const t of tables) await client.query(`ALTER TABLE ${t} ENABLE TRIGGER ALL`);
  // the search vectors the disabled triggers did not write (the search tables' migration, 1764950000000)
  const searched = [
    ['users', ['name', 'username']],
    ['tags', ['name']],
    ['todos', ['title', 'content']],
    ['articles', ['title', 'body']],
  ];
  for (const [table, columns] of searched) {
    const vector = columns.map((column, i) => `setweight(to_tsvector('simple'::regconfig, coalesce("${column}", '')), '${i === 0 ? 'A' : 'B'}')`).join(' || ');
    await client.query(`INSERT INTO ${table}_search (id, vector) SELECT id, ${vector} FROM ${table} ON CONFLICT (id) DO UPDATE SET vector = EXCLUDED.vector`);
  }
  for (const t of ['users', 'tags', 'todos', 'articles']) {
    await client.query(`SELECT setval(pg_get_serial_sequence('${t}', 'id'), (SELECT max(id) FROM ${t}))`);
  }
  log('  vacuum analyze');
  await client.query('VACUUM (ANALYZE)');
}

/**
 * A fresh PostgreSQL database `<prefix>_<label>` holding the seeded data of `articles` articles:
 * cloned from the cached template (seeded first when missing, by one run at a time: an advisory
 * lock on the template's name). `label` should be unique to the run (bench/run.mjs adds its
 * process id) so that concurrent runs never share a database. Returns its URL.
 */
export async function preparePostgres(articles, label, log = console.log) {
  const key = seedKey();
  const template = `${PG_PREFIX}_tpl_${key}_${articles}`;
  const target = `${PG_PREFIX}_${label}`;
  return withClient(PG_ADMIN_URL, async (admin) => {
    if (!(await pgDatabaseExists(admin, template))) {
      // runs on other checkouts share the server: one seeds a missing template at a time (its
      // `_building` database would be another's), the others wait and then clone what it made
      await admin.query('SELECT pg_advisory_lock(hashtext($1))', [template]);
      try {
        if (!(await pgDatabaseExists(admin, template))) {
          // stale templates of the same size (older migrations) go first, they are large
          const stale = await admin.query(`SELECT datname FROM pg_database WHERE datname LIKE $1 AND datname <> $2`, [
            `${PG_PREFIX}_tpl_%_${articles}`,
            template,
          ]);
          for (const row of stale.rows) await admin.query(`DROP DATABASE "${row.datname}" WITH (FORCE)`);
          const started = Date.now();
          log(`seeding PostgreSQL ${template} (${articles} articles)…`);
          const building = `${template}_building`.slice(0, 63);
          await admin.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
          await admin.query(`CREATE DATABASE "${building}"`);
          runMigrations(pgUrl(building));
          await withClient(pgUrl(building), (client) => pgFill(client, articles, log));
          await admin.query(`ALTER DATABASE "${building}" RENAME TO "${template}"`);
          log(`seeded in ${((Date.now() - started) / 1000).toFixed(1)} s`);
        }
      } finally {
        await admin.query('SELECT pg_advisory_unlock(hashtext($1))', [template]);
      }
    }
    await admin.query(`DROP DATABASE IF EXISTS "${target}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${target}" TEMPLATE "${template}" STRATEGY FILE_COPY`);
    return pgUrl(target);
  });
}

/** Bulk data for SQLite: one transaction of prepared statements; indexes rebuilt after the load. */
async function sqliteFill(file, articles, log) {
  const hash = await passwordHash();
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const indexes = db
    .prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ('articles', 'article_tags', 'todos')`)
    .all();
  for (const index of indexes) db.exec(`DROP INDEX "${index.name}"`);
  const iso = (ms) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
  const bodies = [];
  for (let b = 0; b < 1000; b++) {
    const words = [];
    const n = 40 + (hash32(b, 0x2545f491) % 400);
    for (let j = 1; j <= n; j++) {
      const w = WORDS[hash32(b * 1000 + j, 0x68e31da4) % WORDS.length];
      words.push((j === 1 ? w[0].toUpperCase() + w.slice(1) : w) + (j % 11 === 0 ? '.' : ''));
    }
    bodies.push(`${words.join(' ')}.`);
  }
  const stepMs = Math.max(1, Math.floor(SPAN_MS / articles));
  const W = WORDS.length;
  const load = db.transaction(() => {
    const user = db.prepare(
      'INSERT INTO users (id, username, password_hash, name, age, email, role, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    for (let i = 1; i <= USERS; i++) {
      const ts = iso(BASE_MS + i * 60_000);
      user.run(i, `user${String(i).padStart(4, '0')}`, hash, `Bench User ${i}`, 18 + (i % 60), `user${i}@example.com`, 'user', ts, ts);
    }
    const tag = db.prepare('INSERT INTO tags (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)');
    TAG_NAMES.forEach((name, n) => tag.run(n + 1, name, iso(BASE_MS), iso(BASE_MS)));
    const todo = db.prepare('INSERT INTO todos (id, title, content, status, owner_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
    for (let i = 1; i <= USERS * 5; i++) {
      const ts = iso(BASE_MS + i * 3_600_000);
      todo.run(i, `Todo number ${i}`, i % 3 === 0 ? null : `Remember item ${i}`, ['pending', 'in_progress', 'done'][i % 3], 1 + ((i - 1) % USERS), ts, ts);
    }
    const article = db.prepare(
      'INSERT INTO articles (id, title, body, status, author_id, published_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const link = db.prepare('INSERT INTO article_tags (article_id, tag_id) VALUES (?, ?)');
    for (let i = 1; i <= articles; i++) {
      const h = hash32(i, 0x1b873593);
      const g = hash32(i, 0x55555555);
      const status = h % 10 < 5 ? 'published' : h % 10 < 8 ? 'draft' : 'archived';
      const words = [WORDS[g % W], WORDS[Math.floor(g / W) % W], WORDS[Math.floor(h / 7) % W], WORDS[Math.floor(h / 1000) % W]];
      if (g % 4 > 0) words.push(WORDS[Math.floor(g / 5000) % W]);
      if (g % 4 > 1) words.push(WORDS[Math.floor(h / 99991) % W]);
      if (g % 4 > 2) words.push(WORDS[Math.floor(g / 77777) % W]);
      words[0] = words[0][0].toUpperCase() + words[0].slice(1);
      const created = BASE_MS + Math.floor(((i - 1) * SPAN_MS) / articles) + (h % stepMs);
      const published =
        status === 'published' || (status === 'archived' && g % 2 === 0) || (status === 'draft' && g % 10 === 9) ? iso(created + (g % 3_600_000)) : null;
      const updated = g % 10 < 6 ? created : created + (h % 2_592_000_000);
      article.run(i, words.join(' '), bodies[Math.floor(h / 256) % 1000], status, 1 + (g % USERS), published, iso(created), iso(updated));
      const count = Math.floor(g / 16) % 4;
      for (let k = 0; k < count; k++) link.run(i, 1 + (((h % 41) + k * (1 + (Math.floor(h / 4096) % 40))) % 41));
      if (i % 200_000 === 0) log(`  articles ${i}/${articles}`);
    }
  });
  load();
  log('  indexes');
  for (const index of indexes) db.exec(index.sql);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

/**
 * A fresh SQLite file holding the seeded data of `articles` articles (a copy of the cached one,
 * seeded first when missing). Returns its path.
 */
export async function prepareSqlite(articles, label, log = console.log) {
  mkdirSync(CACHE_DIR, { recursive: true });
  const key = seedKey();
  const cached = path.join(CACHE_DIR, `sqlite-${key}-${articles}.sqlite`);
  if (!existsSync(cached)) {
    for (const file of readdirSync(CACHE_DIR)) {
      if (file.startsWith('sqlite-') && file.endsWith(`-${articles}.sqlite`)) rmSync(path.join(CACHE_DIR, file), { force: true });
    }
    const started = Date.now();
    log(`seeding SQLite ${path.relative(ROOT, cached)} (${articles} articles)…`);
    const building = `${cached}.building`;
    for (const suffix of ['', '-wal', '-shm']) rmSync(building + suffix, { force: true });
    runMigrations(`sqlite:${building}`);
    await sqliteFill(building, articles, log);
    for (const suffix of ['-wal', '-shm']) rmSync(building + suffix, { force: true });
    renameSync(building, cached);
    log(`seeded in ${((Date.now() - started) / 1000).toFixed(1)} s (${(statSync(cached).size / 2 ** 20).toFixed(0)} MiB)`);
  }
  const target = path.join(CACHE_DIR, `run-${label}.sqlite`);
  for (const suffix of ['', '-wal', '-shm']) rmSync(target + suffix, { force: true });
  copyFileSync(cached, target);
  return target;
}

/** Drops the PostgreSQL database of one run (templates stay). */
export async function dropPostgres(label) {
  await withClient(PG_ADMIN_URL, (admin) => admin.query(`DROP DATABASE IF EXISTS "${PG_PREFIX}_${label}" WITH (FORCE)`));
}
