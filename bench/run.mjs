/**
 * `npm run bench` — resource-api against THE LIMIT (bench/limit-server.mjs), side by side.
 *
 * For each database (PostgreSQL, SQLite) and size (10k, 100k, 1M articles): seeds a fresh
 * database through the project's migrations (cached, see lib/seed.mjs), starts the service as in
 * production (with `npm start`'s node arguments, read from package.json: lib/proc.mjs `serviceArgs`; NODE_ENV=production, logs at info to a file) and the limit,
 * and THE FLOOR (bench/floor-server.mjs: a bare NestJS + Express application running the limit's
 * hand-written SQL and checks, i.e. what the framework alone costs), all pinned to CPU core 0
 * (with the PostgreSQL backends of their connections), checks that the three answer every
 * benchmarked request alike — status, body bytes and every response header but the per-request
 * ones (lib/verify.mjs), and, for POST /v1/todos, the same rows written (the todo, its event, the
 * webhook deliveries) — then measures them with autocannon (this process, pinned to core 1) in
 * interleaved rounds: req/s, p50/p99 latency, server and database CPU per request, peak RSS,
 * non-2xx answers; per endpoint the ratios service ÷ floor and service ÷ limit of req/s, p99 and
 * CPU. Also the SQLite start-up time of each (spawn to the first 200 of /health/ready). Prints a
 * markdown table and the targets, writes bench/results/<date>-<commit>.json and .md.
 *
 * The PostgreSQL database and the SQLite file of a run are named with this process's id
 * (`resource_api_bench_<size>_<pid>`, `bench/.cache/run-<size>-<pid>.sqlite`; the prefix of the
 * former is BENCH_PG_PREFIX), so that concurrent runs never share one; both are removed at the end.
 *
 * Options:
 *   --sizes 10k,100k,1m   article counts (default all three; `500` etc. allowed)
 *   --db postgres,sqlite  databases (default both)
 *   --rounds 3 --duration 8 --warmup 3 --connections 50   measurement (seconds); a slow endpoint
 *                         gets rounds of 3 × connections × its single-request time, at most
 *                         --max-duration 120 (the same for both targets)
 *   --endpoints list,list-deep,list-cursor,list-cursor-nullable,list-estimated,list-search,list-expand,get,post
 *                         subset of the endpoints
 *                         (list-cursor: the page after a cursor 50,000 published articles deep —
 *                         a quarter of them on smaller tables — to compare with list page 1;
 *                         list-cursor-nullable: the same depth in `sort=published_at`, a nullable
 *                         key whose NULLs come last (the keyset parts of src/common/list/find-page.ts);
 *                         list-estimated: page 1 with `Prefer: count=estimated`, to compare
 *                         across sizes; list-search: `q` with a phrase of the seeded bodies,
 *                         best matches first (docs/lists.md#full-text-search-q); list-expand:
 *                         page 1 with `expand=author,tags`, docs/lists.md#expanding-related-resources-expand)
 *   --no-floor            do not start the Nest + Express floor
 *   --redis redis://127.0.0.1:6379/7   run both servers with this Redis (shared deny list)
 *   --smoke               500 articles, 1 round of 1 s (at most 5 s), both databases; checks parity (status,
 *                         body bytes, headers, and a todo's writes) of service, limit and floor,
 *                         and zero non-2xx; writes no results. Exit 1 on any mismatch.
 *   --no-save             do not write bench/results
 * Exit status: 1 when a body, a header or a write differs, a request failed (non-2xx) or a server did not start.
 */
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import Database from 'better-sqlite3';
import { cpuCount, cpuMicros, freePort, HAS_TASKSET, memory, pin, serviceArgs, spawnNode, stop, stopAll, waitReady } from './lib/proc.mjs';
import { CACHE_DIR, dropPostgres, parseSize, PG_ADMIN_URL, prepareSqlite, preparePostgres, ROOT } from './lib/seed.mjs';
import { compare, exchange } from './lib/verify.mjs';

// ---------------------------------------------------------------- options

function parseArgs(argv) {
  const options = {
    sizes: '10k,100k,1m',
    db: 'postgres,sqlite',
    rounds: 3,
    duration: 8,
    warmup: 3,
    connections: 50,
    endpoints: 'list,list-deep,list-cursor,list-cursor-nullable,list-estimated,list-search,list-expand,get,post',
    startups: 5,
    maxDuration: 120,
    save: true,
    smoke: false,
    floor: true,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const take = () => {
      const value = arg.includes('=') ? arg.split('=').slice(1).join('=') : argv[++i];
      if (value === undefined) throw new Error(`${arg} needs a value`);
      return value;
    };
    const name = arg.replace(/^--/, '').split('=')[0];
    if (name === 'smoke') options.smoke = true;
    else if (name === 'no-save') options.save = false;
    else if (name === 'no-floor') options.floor = false;
    else if (['sizes', 'db', 'endpoints', 'redis'].includes(name)) options[name] = take();
    else if (['rounds', 'duration', 'max-duration', 'warmup', 'connections', 'startups'].includes(name))
      options[name === 'max-duration' ? 'maxDuration' : name] = Number(take());
    else throw new Error(`unknown option ${arg} (see bench/run.mjs)`);
  }
  if (options.smoke)
    Object.assign(options, {
      sizes: argv.includes('--sizes') ? options.sizes : '500',
      rounds: 1,
      duration: 1,
      warmup: 0.5,
      startups: 1,
      save: false,
      // a smoke checks parity and errors, not speed: rounds of a slow endpoint (on a busy machine) stay short
      maxDuration: argv.some((a) => a.startsWith('--max-duration')) ? options.maxDuration : 5,
    });
  return {
    ...options,
    sizes: options.sizes.split(',').map(parseSize),
    dbs: options.db
      .split(',')
      .map((d) => d.trim().toLowerCase())
      .map((d) => (d === 'pg' ? 'postgres' : d)),
    endpoints: options.endpoints.split(','),
  };
}

const options = parseArgs(process.argv.slice(2));
const log = (...args) => console.log(...args);
const label = (n) => (n >= 1_000_000 && n % 1_000_000 === 0 ? `${n / 1_000_000}M` : n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : String(n));

// ---------------------------------------------------------------- environment

const JWT_SECRET = randomBytes(32).toString('base64url');
/** The ordinary user the requests are made as (role `user`, owns some articles and todos). */
const USER_ID = 7;

/** An HS256 access token of docs/authentication.md#the-access-token for `userId`, valid for a day (the service checks the claims, not the TTL). */
function accessToken(userId, role = 'user') {
  const now = Math.floor(Date.now() / 1000);
  const encode = (object) => Buffer.from(JSON.stringify(object)).toString('base64url');
  const unsigned = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode({ user_id: userId, role, typ: 'access', fid: randomUUID(), iat: now, exp: now + 86_400, jti: randomUUID() })}`;
  return `${unsigned}.${createHmac('sha256', JWT_SECRET).update(unsigned).digest('base64url')}`;
}

function git(args) {
  try {
    return execFileSync('git', args, { cwd: ROOT }).toString().trim();
  } catch {
    return 'unknown';
  }
}

const cores = cpuCount();
const LOAD_CORE = cores > 1 ? 1 : 0;
const SERVER_CORE = 0;
const pinnedSelf = pin(process.pid, LOAD_CORE);

// ---------------------------------------------------------------- endpoints

/** The benchmarked requests for one database/size; `id` is a published article of another user; `cursor`, `nullableCursor` those of {@link cursorAt}. */
function endpoints(db, size, articleId, token, cursor, nullableCursor) {
  const auth = { authorization: `Bearer ${token}` };
  const list = (page) => `/v1/articles?status=published&sort=-created_at&page=${page}&size=20`;
  const all = [
    { key: 'list', name: 'GET list page 1', method: 'GET', path: list(1), headers: auth },
    { key: 'list-deep', name: 'GET list page 2000', method: 'GET', path: list(2000), headers: auth, when: size * 0.5 >= 2000 * 20 },
    {
      key: 'list-cursor',
      name: `GET list cursor page at depth ${cursor.depth.toLocaleString('en-US')}`,
      method: 'GET',
      path: `/v1/articles?status=published&sort=-created_at&cursor=${cursor.text}&size=20`,
      headers: auth,
    },
    {
      key: 'list-cursor-nullable',
      name: `GET list cursor page at depth ${nullableCursor.depth.toLocaleString('en-US')}, sort=published_at`,
      method: 'GET',
      path: `/v1/articles?status=published&sort=published_at&cursor=${nullableCursor.text}&size=20`,
      headers: auth,
    },
    { key: 'list-estimated', name: 'GET list page 1, count=estimated', method: 'GET', path: list(1), headers: { ...auth, prefer: 'count=estimated' } },
    {
      key: 'list-search',
      name: 'GET list q="latency throughput", sort=-relevance',
      method: 'GET',
      path: `/v1/articles?q=${encodeURIComponent('"latency throughput"')}&sort=-relevance&size=20`,
      headers: auth,
    },
    { key: 'list-expand', name: 'GET list page 1, expand=author,tags', method: 'GET', path: `${list(1)}&expand=author,tags`, headers: auth },
    { key: 'get', name: 'GET article by id', method: 'GET', path: `/v1/articles/${articleId}`, headers: auth },
    {
      key: 'post',
      name: 'POST todo',
      method: 'POST',
      path: '/v1/todos',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Buy milk', content: 'Two litres, semi-skimmed.', status: 'pending' }),
      volatile: [
        [/^\{"id":\d+/, '{"id":0'],
        [/\/v1\/todos\/\d+/g, '/v1/todos/0'],
        [/"(created_at|updated_at)":"[^"]*"/g, '"$1":"…"'],
      ],
    },
  ];
  return all.filter((e) => e.when !== false && options.endpoints.includes(e.key));
}

/**
 * A cursor of `GET /v1/articles?status=published&sort=-created_at` after the published article at
 * `depth` (50,000, or a quarter of the published ones on smaller tables), signed as the service
 * signs it (src/common/list/cursor.ts: key derived from JWT_SECRET, fingerprint of path, sort
 * and filters). Returns `{depth, text}`.
 */
async function cursorAt(db, target, size, sort = '-created_at') {
  const depth = Math.min(50_000, Math.floor(size / 8));
  const key = createHmac('sha256', `jwt:${JWT_SECRET}`).update('resource-api list cursor v1').digest();
  const desc = sort.startsWith('-');
  const column = sort.replace(/^-/, '');
  const fp = createHash('sha256')
    .update(JSON.stringify(['/v1/articles', [sort, desc ? '-id' : 'id'], [['status', ['published']]], []]))
    .digest('base64url')
    .slice(0, 22);
  const at = db === 'postgres' ? `CAST(${column} AS text)` : column;
  const dir = desc ? 'DESC' : 'ASC';
  const nulls = column === 'published_at' ? (desc ? ' NULLS FIRST' : ' NULLS LAST') : '';
  const sql = `SELECT ${at} AS k0, id AS k1 FROM articles WHERE status = 'published' ORDER BY ${column} ${dir}${nulls}, id ${dir} LIMIT 1 OFFSET ${depth - 1}`;
  let row;
  if (db === 'postgres') {
    const client = new pg.Client({ connectionString: target });
    await client.connect();
    row = (await client.query(sql)).rows[0];
    await client.end();
  } else {
    const sqlite = new Database(target, { readonly: true });
    row = sqlite.prepare(sql).get();
    sqlite.close();
  }
  const payload = Buffer.from(JSON.stringify({ f: fp, d: 'a', v: [row.k0 === null ? null : String(row.k0), Number(row.k1)] })).toString('base64url');
  return { depth, text: `${payload}.${createHmac('sha256', key).update(payload).digest('base64url')}` };
}

/** A published article near the middle of the table, not written by the benchmark user. */
async function pickArticle(db, target, size) {
  const sql = `SELECT id FROM articles WHERE status = 'published' AND author_id <> ${USER_ID} AND id >= ${Math.floor(size / 2)} ORDER BY id LIMIT 1`;
  if (db === 'postgres') {
    const client = new pg.Client({ connectionString: target });
    await client.connect();
    const { rows } = await client.query(sql);
    await client.end();
    return rows[0].id;
  }
  const sqlite = new Database(target, { readonly: true });
  const row = sqlite.prepare(sql).get();
  sqlite.close();
  return row.id;
}

// ---------------------------------------------------------------- PostgreSQL backends

let pgAdmin;
/** The benchmark's own connection to the `postgres` database (not counted, not pinned). */
async function admin() {
  if (!pgAdmin) {
    pgAdmin = new pg.Client({ connectionString: PG_ADMIN_URL });
    await pgAdmin.connect();
  }
  return pgAdmin;
}

async function pgBackends(dbName, application) {
  const { rows } = await (await admin()).query('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = $2', [dbName, application]);
  return rows.map((r) => r.pid);
}

/** Pins the backends of `application` on `dbName` to the server core; returns their pids and whether every pin worked. */
async function pinBackends(dbName, application) {
  const pids = await pgBackends(dbName, application);
  let pinned = true;
  for (const pid of pids) pinned = pin(pid, SERVER_CORE) && pinned;
  return { pids, pinned };
}

// ---------------------------------------------------------------- measurement

/** Seconds one request of `endpoint` takes alone on `base` (the best of three). */
async function probeLatency(base, endpoint) {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    await exchange(base, endpoint);
    best = Math.min(best, (performance.now() - started) / 1000);
  }
  return best;
}

/**
 * Waits until `target` is idle again: requests still in flight when autocannon stopped would
 * otherwise run on into the next round (and the other target's numbers). Idle: its PostgreSQL
 * backends all idle and its own CPU time grows by under 10 ms in 250 ms; at most two minutes.
 */
async function settle(target) {
  const deadline = Date.now() + 120_000;
  let before = cpuMicros(target.child.pid);
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = cpuMicros(target.child.pid);
    const busyDb = target.pgDb
      ? (
          await (
            await admin()
          ).query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = $2 AND state <> 'idle'`, [
            target.pgDb,
            target.application,
          ])
        ).rows[0].n
      : 0;
    if (now - before < 10_000 && busyDb === 0) return;
    before = now;
  }
}

function cannon(base, endpoint, seconds, timeout = 30) {
  return autocannon({
    url: base + endpoint.path,
    method: endpoint.method,
    headers: endpoint.headers,
    body: endpoint.body,
    connections: options.connections,
    duration: seconds,
    pipelining: 1,
    timeout,
  });
}

/** One measured round of `endpoint` against `target`: throughput, latency, CPU, errors. */
async function round(target, endpoint, seconds, timeout) {
  const backends = target.pgDb ? await pinBackends(target.pgDb, target.application) : { pids: [], pinned: false };
  const cpuBefore = cpuMicros(target.child.pid);
  const dbBefore = backends.pids.map(cpuMicros);
  // a backend the pool opens during the round is pinned too (checked twice a second)
  const repin = target.pgDb ? setInterval(() => void pinBackends(target.pgDb, target.application).catch(() => {}), 500) : undefined;
  const result = await cannon(target.base, endpoint, seconds, timeout);
  clearInterval(repin);
  const cpu = cpuMicros(target.child.pid) - cpuBefore;
  // backends opened during the round are counted from 0
  const after = target.pgDb ? await pgBackends(target.pgDb, target.application) : [];
  let dbCpu = 0;
  for (const pid of after) {
    const i = backends.pids.indexOf(pid);
    dbCpu += cpuMicros(pid) - (i >= 0 ? dbBefore[i] : 0);
  }
  await settle(target);
  const ok = result['2xx'];
  return {
    rps: ok / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuPerReq: ok > 0 ? cpu / ok : null,
    dbCpuPerReq: target.pgDb && ok > 0 ? dbCpu / ok : null,
    requests: ok,
    non2xx: result.non2xx + result.errors + result.timeouts,
    backendsPinned: backends.pinned,
  };
}

const median = (values) => {
  const sorted = values.filter((v) => v !== null && Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

function summarise(rounds) {
  return {
    rps: median(rounds.map((r) => r.rps)),
    p50: median(rounds.map((r) => r.p50)),
    p99: median(rounds.map((r) => r.p99)),
    cpuPerReq: median(rounds.map((r) => r.cpuPerReq)),
    dbCpuPerReq: median(rounds.map((r) => r.dbCpuPerReq)),
    non2xx: rounds.reduce((sum, r) => sum + r.non2xx, 0),
    rounds,
  };
}

// ---------------------------------------------------------------- servers

function serviceEnv(databaseUrl, port) {
  return {
    NODE_ENV: 'production',
    JWT_SECRET,
    OAUTH_ISSUER: 'http://127.0.0.1',
    LOG_LEVEL: 'info',
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    ...(options.redis ? { REDIS_URL: options.redis } : {}),
  };
}

/** The three servers: the script each runs, its environment, its PostgreSQL `application_name`. */
const SERVERS = {
  service: { args: serviceArgs(), env: serviceEnv, application: 'resource-api' },
  limit: {
    script: 'bench/limit-server.mjs',
    env: (databaseUrl, port) => ({ JWT_SECRET, PORT: String(port), DATABASE_URL: databaseUrl, ...(options.redis ? { REDIS_URL: options.redis } : {}) }),
    application: 'resource-api-limit',
  },
  floor: {
    script: 'bench/floor-server.mjs',
    env: (databaseUrl, port) => ({
      JWT_SECRET,
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      BENCH_APPLICATION_NAME: 'resource-api-floor',
      ...(options.redis ? { REDIS_URL: options.redis } : {}),
    }),
    application: 'resource-api-floor',
  },
};

/** Starts server `name` of {@link SERVERS} on `databaseUrl` and waits until it is ready; returns the target. */
async function startServer(name, databaseUrl, logFile) {
  const port = await freePort();
  const server = SERVERS[name];
  const child = spawnNode(server.args ?? [server.script], server.env(databaseUrl, port), SERVER_CORE, logFile);
  const base = `http://127.0.0.1:${port}`;
  await waitReady(`${base}/health/ready`, child, name === 'service' ? 120_000 : 60_000);
  return { name, child, base, application: server.application };
}

const startService = (databaseUrl, logFile) => startServer('service', databaseUrl, logFile);
const startLimit = (databaseUrl, logFile) => startServer('limit', databaseUrl, logFile);
const startFloor = (databaseUrl, logFile) => startServer('floor', databaseUrl, logFile);

/** SQLite start-up of server `which`: spawn to its first 200 of /health/ready, `count` times; milliseconds. */
async function startupTimes(file, count, which = 'service') {
  const times = [];
  for (let i = 0; i < count; i++) {
    const port = await freePort();
    const started = performance.now();
    const server = SERVERS[which];
    const child = spawnNode(
      server.args ?? [server.script],
      server.env(`sqlite:${file}`, port),
      SERVER_CORE,
      path.join(CACHE_DIR, 'logs', `startup-${which}.log`),
    );
    await waitReady(`http://127.0.0.1:${port}/health/ready`, child, 60_000, 5);
    times.push(performance.now() - started);
    await stop(child);
  }
  return times;
}

// ---------------------------------------------------------------- one database/size

const failures = [];
const results = [];

/** The todo id in a created todo's `Location`. */
const createdId = (answer) => Number(/\/v1\/todos\/(\d+)$/.exec(answer.headers.location ?? '')?.[1]);

/**
 * The rows a `POST /v1/todos` wrote for todo `id` (docs/events.md: the todo, its `todo.created`
 * event, the event's webhook deliveries), normalised so that two creates of the same body compare
 * equal: ids, event ids and times replaced by their form (a time by its type and format, the
 * todo's `updated_at` by `created_at` when equal, the todo id in the event's data by 0).
 */
async function writtenRows(db, target, id) {
  const sql = {
    todo: 'SELECT title, content, status, owner_id, version, created_at, updated_at FROM todos WHERE id = $1',
    events: 'SELECT event_id, type, owner_id, resource_id, created_at, data_v1, data_v2, traceparent FROM events WHERE resource_id = $1 AND type = $2',
    deliveries: 'SELECT count(*) AS n FROM webhook_deliveries WHERE event_id IN (SELECT event_id FROM events WHERE resource_id = $1 AND type = $2)',
  };
  const found = {};
  if (db === 'postgres') {
    const client = new pg.Client({ connectionString: target });
    await client.connect();
    try {
      found.todo = (await client.query(sql.todo, [id])).rows;
      found.events = (await client.query(sql.events, [id, 'todo.created'])).rows;
      found.deliveries = (await client.query(sql.deliveries, [id, 'todo.created'])).rows[0].n;
    } finally {
      await client.end();
    }
  } else {
    const sqlite = new Database(target, { readonly: true });
    try {
      const q = (text) => sqlite.prepare(text.replace(/\$(\d)/g, '?'));
      found.todo = q(sql.todo).all(id);
      found.events = q(sql.events).all(id, 'todo.created');
      found.deliveries = q(sql.deliveries).get(id, 'todo.created').n;
    } finally {
      sqlite.close();
    }
  }
  // a time's type and format, not its value: a Date (PostgreSQL) or TypeORM's UTC text `YYYY-MM-DD HH:MM:SS.SSS` (SQLite)
  const shape = (value) => (value instanceof Date ? 'Date' : String(value).replace(/\d/g, '0'));
  const unid = (text) =>
    String(text)
      .replace(new RegExp(`^\\{"id":${id},`), '{"id":0,')
      .replace(new RegExp(`/todos/${id}"`, 'g'), '/todos/0"')
      .replace(/"(created_at|updated_at)":"[^"]*"/g, '"$1":"…"');
  return {
    todo: found.todo.map((t) => ({
      ...t,
      created_at: shape(t.created_at),
      updated_at: String(t.updated_at) === String(t.created_at) ? 'created_at' : String(t.updated_at),
    })),
    events: found.events.map((e) => ({
      ...e,
      event_id: /^evt_[0-9a-f]{32}$/.test(e.event_id) ? 'evt_…' : e.event_id,
      created_at: shape(e.created_at),
      resource_id: Number(e.resource_id) === id ? 'the todo' : e.resource_id,
      data_v1: unid(e.data_v1),
      data_v2: unid(e.data_v2),
    })),
    deliveries: Number(found.deliveries),
  };
}

/**
 * Checks that `endpoint` is answered alike by `a` and `b` ({@link compare}: status, body, headers)
 * and, for a create, that both wrote the same rows ({@link writtenRows}); records the outcome in
 * `entry.verification`, prints it, adds a failure when they differ.
 */
async function verifyPair(entry, tag, db, target, endpoint, a, b) {
  const check = await compare(a.base, b.base, endpoint, [a.name, b.name]);
  if (endpoint.method === 'POST' && check.answers.every((answer) => answer.status === 201)) {
    const [rowsA, rowsB] = [await writtenRows(db, target, createdId(check.answers[0])), await writtenRows(db, target, createdId(check.answers[1]))];
    const [textA, textB] = [JSON.stringify(rowsA), JSON.stringify(rowsB)];
    if (textA !== textB) check.problems.push(`rows written: ${a.name} ${textA} ≠ ${b.name} ${textB}`);
    if (rowsA.todo.length !== 1 || rowsA.events.length !== 1) check.problems.push(`rows written by ${a.name}: ${textA} (one todo and one event expected)`);
    const body = check.answers[0].body
      .replace(/^\{"id":\d+,/, '{"id":0,')
      .replace(/\/todos\/\d+"/g, '/todos/0"')
      .replace(/"(created_at|updated_at)":"[^"]*"/g, '"$1":"…"');
    if (rowsA.events[0] && rowsA.events[0].data_v1 !== body) check.problems.push(`${a.name}'s event data_v1 ${rowsA.events[0].data_v1} ≠ its answer ${body}`);
    check.writes = textA === textB;
  }
  check.ok = check.problems.length === 0;
  const name = `${endpoint.name}: ${a.name} = ${b.name}`;
  entry.verification.push({ endpoint: name, ok: check.ok, bytes: check.bytes, headers: check.headers, problems: check.problems });
  log(
    `verify ${name}: ${check.ok ? `identical (${check.bytes} bytes, ${check.headers.length} headers${check.writes ? ', the same rows written' : ''})` : 'MISMATCH'}`,
  );
  if (!check.ok) {
    for (const line of check.problems) log(`  ${line}`);
    failures.push(`${tag} ${name}: answers differ`);
  }
}

async function benchOne(db, size) {
  const tag = `${db}-${label(size)}`;
  // this run's own database or file: another run (another worktree, another CI job) never shares it
  const runLabel = `${label(size).toLowerCase()}_${process.pid}`;
  log(`\n## ${db} ${label(size)} articles`);
  const seedStarted = Date.now();
  const target = db === 'postgres' ? await preparePostgres(size, runLabel, log) : await prepareSqlite(size, runLabel, log);
  const prepareSeconds = (Date.now() - seedStarted) / 1000;
  const databaseUrl = db === 'postgres' ? target : `sqlite:${target}`;
  const pgDb = db === 'postgres' ? new URL(target).pathname.slice(1) : undefined;
  const articleId = await pickArticle(db, target, size);
  const token = accessToken(USER_ID);
  const logs = path.join(CACHE_DIR, 'logs');
  const entry = { db, size, label: label(size), prepareSeconds, articleId, userId: USER_ID, endpoints: [], verification: [] };
  results.push(entry);
  let service;
  let limit;
  let floor;
  try {
    service = await startService(databaseUrl, path.join(logs, `${tag}-service.log`));
    limit = await startLimit(databaseUrl, path.join(logs, `${tag}-limit.log`));
    const list = endpoints(db, size, articleId, token, await cursorAt(db, target, size), await cursorAt(db, target, size, 'published_at'));
    if (options.floor) floor = await startFloor(databaseUrl, path.join(logs, `${tag}-floor.log`));
    for (const t of [service, limit, floor]) if (t) t.pgDb = pgDb;
    // parity before measuring: status, body bytes, headers (and a create's rows) of service and floor against the limit
    for (const endpoint of list) {
      await verifyPair(entry, tag, db, target, endpoint, service, limit);
      if (floor) await verifyPair(entry, tag, db, target, endpoint, floor, limit);
    }
    const all = [service, limit, floor].filter(Boolean);
    for (const endpoint of list) {
      // A slow endpoint gets longer rounds: with C connections a request waits about C × its own
      // time, and a round must see several of them complete (every target gets the same length).
      let alone = 0;
      for (const t of all) alone = Math.max(alone, await probeLatency(t.base, endpoint));
      const seconds = Math.min(options.maxDuration, Math.max(options.duration, Math.ceil(3 * options.connections * alone)));
      const timeout = Math.min(600, Math.max(30, Math.ceil(2 * options.connections * alone) + 10));
      if (seconds > options.duration) log(`${endpoint.name}: ${alone.toFixed(2)} s alone → rounds of ${seconds} s, timeout ${timeout} s`);
      if (options.warmup > 0) {
        for (const t of all) {
          await cannon(t.base, endpoint, Math.max(options.warmup, Math.min(seconds, Math.ceil(options.connections * alone))), timeout);
          await settle(t);
        }
      }
      const rounds = { service: [], limit: [], floor: [] };
      for (let r = 0; r < options.rounds; r++) {
        // alternate which target goes first, so drift (caches, other load) hits all alike
        for (const t of r % 2 === 0 ? all : [...all].reverse()) rounds[t.name].push(await round(t, endpoint, seconds, timeout));
      }
      const row = {
        endpoint: endpoint.name,
        key: endpoint.key,
        request: `${endpoint.method} ${endpoint.path}`,
        aloneSeconds: alone,
        roundSeconds: seconds,
        service: summarise(rounds.service),
        limit: summarise(rounds.limit),
      };
      const total = (x) => (x.cpuPerReq ?? 0) + (x.dbCpuPerReq ?? 0);
      const ratio = (x, y) => (x !== null && y ? x / y : null);
      row.ratio = ratio(row.service.rps, row.limit.rps);
      row.p99Ratio = ratio(row.service.p99, row.limit.p99);
      row.cpuRatio = total(row.limit) > 0 ? total(row.service) / total(row.limit) : null;
      if (rounds.floor.length > 0) {
        row.floor = summarise(rounds.floor);
        row.serviceFloorRatio = ratio(row.service.rps, row.floor.rps);
        row.serviceFloorP99Ratio = ratio(row.service.p99, row.floor.p99);
        row.serviceFloorCpuRatio = total(row.floor) > 0 ? total(row.service) / total(row.floor) : null;
        row.floorRatio = ratio(row.floor.rps, row.limit.rps);
        row.floorCpuRatio = total(row.limit) > 0 ? total(row.floor) / total(row.limit) : null;
      }
      row.backendsPinned = db === 'postgres' ? [...rounds.service, ...rounds.limit, ...rounds.floor].every((r) => r.backendsPinned) : null;
      entry.endpoints.push(row);
      for (const side of ['service', 'limit', 'floor']) {
        if (row[side] && row[side].non2xx > 0) failures.push(`${tag} ${endpoint.name}: ${row[side].non2xx} non-2xx/errors on the ${side}`);
      }
      log(
        `${endpoint.name}: service ${fmt(row.service.rps)} req/s, limit ${fmt(row.limit.rps)} req/s (${pct(row.ratio)}); ` +
          `CPU µs/req ${fmt(row.service.cpuPerReq)}+${fmt(row.service.dbCpuPerReq)} vs ${fmt(row.limit.cpuPerReq)}+${fmt(row.limit.dbCpuPerReq)}` +
          (row.floor
            ? `; floor ${fmt(row.floor.rps)} req/s (service ÷ floor ${pct(row.serviceFloorRatio)}), CPU µs/req ${fmt(row.floor.cpuPerReq)}+${fmt(row.floor.dbCpuPerReq)}`
            : ''),
      );
    }
    entry.rss = { service: memory(service.child.pid), limit: memory(limit.child.pid), ...(floor ? { floor: memory(floor.child.pid) } : {}) };
  } catch (error) {
    failures.push(`${tag}: ${error.message}`);
    log(`FAILED ${tag}: ${error.message} (logs in ${path.relative(ROOT, logs)})`);
  } finally {
    if (service) await stop(service.child);
    if (limit) await stop(limit.child);
    if (floor) await stop(floor.child);
  }
  if (db === 'sqlite') {
    entry.startupMs = {};
    for (const which of ['service', 'limit', ...(options.floor ? ['floor'] : [])]) {
      try {
        const times = await startupTimes(target, options.startups, which);
        entry.startupMs[which] = { median: median(times), samples: times };
        log(`start-up of the ${which} (SQLite ${label(size)}): median ${fmt(median(times))} ms of ${times.map((t) => t.toFixed(0)).join(', ')}`);
      } catch (error) {
        failures.push(`${tag} start-up of the ${which}: ${error.message}`);
      }
    }
    for (const suffix of ['', '-wal', '-shm']) rmSync(target + suffix, { force: true });
  } else {
    await dropPostgres(runLabel);
  }
}

// ---------------------------------------------------------------- report

function fmt(value, digits = 0) {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  return value >= 100 || digits === 0 ? Math.round(value).toLocaleString('en-US') : value.toFixed(digits);
}
const pct = (ratio) => (ratio === null || ratio === undefined ? '–' : `${Math.round(ratio * 100)} %`);
const mib = (bytes) => (bytes ? `${(bytes / 2 ** 20).toFixed(0)}` : '–');

/** The targets of the service relative to the floor and the limit (docs/performance.md#targets), evaluated on the measured results (at 100k articles, or the largest size measured). */
function evaluateTargets() {
  const pick = (db) => {
    const entries = results.filter((e) => e.db === db && e.endpoints.length > 0);
    return entries.find((e) => e.size === 100_000) ?? entries.sort((a, b) => b.size - a.size)[0];
  };
  const targets = [];
  for (const db of options.dbs) {
    const entry = pick(db);
    if (!entry) continue;
    const at = `${db} ${entry.label}`;
    const row = (key) => entry.endpoints.find((e) => e.key === key);
    // a read and a create: ≥ 70 % of the floor's req/s, server CPU per request ≤ 1.5× the floor's
    for (const key of ['get', 'post']) {
      const r = row(key);
      if (!r || !r.floor) continue;
      targets.push({
        target: `${r.endpoint} (${at}) req/s ≥ 70 % of the floor's`,
        value: pct(r.serviceFloorRatio),
        met: r.serviceFloorRatio !== null && r.serviceFloorRatio >= 0.7,
      });
      const cpu = r.service.cpuPerReq / r.floor.cpuPerReq;
      targets.push({ target: `${r.endpoint} (${at}) server CPU per request ≤ 1.5× the floor's`, value: `${cpu.toFixed(2)}×`, met: cpu <= 1.5 });
    }
    // every list endpoint: ≥ 85 % of the floor's req/s and ≥ 75 % of the limit's, p99 ≤ 2× the floor's
    for (const r of entry.endpoints.filter((e) => e.key.startsWith('list') && e.floor)) {
      targets.push({
        target: `${r.endpoint} (${at}) req/s ≥ 85 % of the floor's`,
        value: pct(r.serviceFloorRatio),
        met: r.serviceFloorRatio !== null && r.serviceFloorRatio >= 0.85,
      });
      targets.push({ target: `${r.endpoint} (${at}) req/s ≥ 75 % of the limit's`, value: pct(r.ratio), met: r.ratio !== null && r.ratio >= 0.75 });
      targets.push({
        target: `${r.endpoint} (${at}) p99 ≤ 2× the floor's`,
        value: r.serviceFloorP99Ratio === null ? '–' : `${r.serviceFloorP99Ratio.toFixed(2)}×`,
        met: r.serviceFloorP99Ratio !== null && r.serviceFloorP99Ratio <= 2,
      });
    }
  }
  // lists at scale: a deep cursor page costs at most 1.5× page 1; count=estimated page 1 at the largest size at most 1.5× the smallest
  for (const db of options.dbs) {
    const entries = results.filter((e) => e.db === db && e.endpoints.length > 0).sort((a, b) => a.size - b.size);
    const rps = (entry, key) => entry?.endpoints.find((e) => e.key === key)?.service.rps;
    const largest = entries[entries.length - 1];
    for (const key of ['list-cursor', 'list-cursor-nullable']) {
      if (!largest || !rps(largest, key) || !rps(largest, 'list')) continue;
      const ratio = rps(largest, 'list') / rps(largest, key);
      const name = largest.endpoints.find((e) => e.key === key).endpoint.replace(/^GET list /, '');
      targets.push({ target: `${name} costs ≤ 1.5× list page 1 (${db} ${largest.label}, service req/s)`, value: `${ratio.toFixed(2)}×`, met: ratio <= 1.5 });
    }
    const smallest = entries[0];
    if (entries.length > 1 && rps(smallest, 'list-estimated') && rps(largest, 'list-estimated')) {
      const ratio = rps(smallest, 'list-estimated') / rps(largest, 'list-estimated');
      targets.push({
        target: `page 1 with count=estimated at ${largest.label} costs ≤ 1.5× at ${smallest.label} (${db}, service req/s)`,
        value: `${ratio.toFixed(2)}×`,
        met: ratio <= 1.5,
      });
    }
  }
  const peaks = results.filter((e) => e.rss).map((e) => e.rss.service.peak);
  if (peaks.length) {
    const peak = Math.max(...peaks);
    targets.push({ target: 'service peak RSS ≤ 200 MiB (every run)', value: `${mib(peak)} MiB`, met: peak <= 200 * 2 ** 20 });
  }
  const startup = results
    .filter((e) => e.db === 'sqlite' && e.startupMs?.service)
    .sort((a, b) => (a.size === 100_000 ? -1 : b.size === 100_000 ? 1 : b.size - a.size))[0];
  if (startup)
    targets.push({
      target: `SQLite start-up ≤ 1 s (${startup.label}, median)`,
      value: `${fmt(startup.startupMs.service?.median)} ms`,
      met: startup.startupMs.service?.median <= 1000,
    });
  return targets;
}

function markdown(meta, targets) {
  const lines = [];
  lines.push(`# resource-api benchmark ${meta.date} (${meta.commit}${meta.dirty ? ', uncommitted changes' : ''})`, '');
  lines.push(
    `Node ${meta.node}, ${meta.postgres}, ${meta.cpus} × ${meta.cpuModel}; load average at start ${meta.loadavg.join(' ')}. ` +
      `Server and its PostgreSQL backends on core ${SERVER_CORE}${meta.backendsPinned === false ? ' (backends NOT pinned)' : ''}, autocannon on core ${LOAD_CORE}` +
      `${meta.taskset ? '' : ' (taskset missing: nothing pinned)'}; ${options.connections} connections, ${options.rounds} interleaved rounds × ${options.duration} s (longer where marked) after a warm-up, medians.` +
      `${options.redis ? ` Redis: ${options.redis}.` : ' No Redis (in-process deny list on both).'}`,
    '',
  );
  const cpu = (x) => (x ? `${fmt(x.cpuPerReq)}${x.dbCpuPerReq !== null ? ` (+${fmt(x.dbCpuPerReq)})` : ''}` : '–');
  const times = (ratio) => (ratio === null || ratio === undefined ? '–' : `${ratio.toFixed(2)}×`);
  const latency = (x) => (x ? `${fmt(x.p50)} / ${fmt(x.p99)}` : '–');
  lines.push(
    `Each endpoint on the service, THE FLOOR (bench/floor-server.mjs: a bare NestJS + Express application with the limit's SQL and checks, no guards, pipes, interceptors, middleware or logging) and THE LIMIT (bench/limit-server.mjs: fastify, the same SQL), measured in the same interleaved rounds. ` +
      'Ratios are service ÷ floor and service ÷ limit: of req/s (higher is better for the service), of p99 latency and of CPU per request (server + database; lower is better).',
    '',
    '| database | articles | endpoint | req/s service / floor / limit | req/s service ÷ floor | req/s service ÷ limit | p50 / p99 ms service | p50 / p99 ms floor | p50 / p99 ms limit | p99 service ÷ floor | p99 service ÷ limit | CPU µs/req service (+db) | CPU µs/req floor (+db) | CPU µs/req limit (+db) | CPU service ÷ floor | CPU service ÷ limit | non-2xx |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const entry of results) {
    for (const row of entry.endpoints) {
      const s = row.service;
      const l = row.limit;
      const f = row.floor;
      lines.push(
        `| ${entry.db} | ${entry.label} | ${row.endpoint}${row.roundSeconds > options.duration ? ` (rounds of ${row.roundSeconds} s)` : ''} | ${fmt(s.rps)} / ${f ? fmt(f.rps) : '–'} / ${fmt(l.rps)} | ${pct(row.serviceFloorRatio)} | ${pct(row.ratio)} | ${latency(s)} | ${latency(f)} | ${latency(l)} | ${times(row.serviceFloorP99Ratio)} | ${times(row.p99Ratio)} | ${cpu(s)} | ${cpu(f)} | ${cpu(l)} | ${times(row.serviceFloorCpuRatio)} | ${times(row.cpuRatio)} | ${s.non2xx + l.non2xx + (f ? f.non2xx : 0)} |`,
      );
    }
  }
  const requests = new Map(results.flatMap((e) => e.endpoints.map((r) => [r.endpoint, r.request.replace(/\/\d+$/, '/{id}')])));
  lines.push(
    '',
    `Requests (as user ${USER_ID}, role user, Bearer HS256; {id}: a published article of another user): ${[...requests].map(([name, request]) => `${name} = \`${request}\``).join('; ')}.`,
  );
  const startup = (entry, which) => (entry.startupMs?.[which] ? fmt(entry.startupMs[which].median) : '–');
  lines.push(
    '',
    '| database | articles | seed/copy s | peak RSS MiB service / floor / limit | SQLite start-up ms service / floor / limit (median) | status, bodies, headers and writes identical |',
    '|---|---|---:|---:|---:|---|',
  );
  for (const entry of results) {
    lines.push(
      `| ${entry.db} | ${entry.label} | ${entry.prepareSeconds.toFixed(1)} | ${mib(entry.rss?.service.peak)} / ${mib(entry.rss?.floor?.peak)} / ${mib(entry.rss?.limit.peak)} | ${entry.db === 'sqlite' ? `${startup(entry, 'service')} / ${startup(entry, 'floor')} / ${startup(entry, 'limit')}` : '–'} | ${entry.verification.length && entry.verification.every((v) => v.ok) ? 'yes' : 'NO'} |`,
    );
  }
  lines.push('', '| target | measured | met |', '|---|---:|---|');
  for (const t of targets) lines.push(`| ${t.target} | ${t.value} | ${t.met ? 'yes' : 'no'} |`);
  if (failures.length) lines.push('', '**Failures:**', ...failures.map((f) => `- ${f}`));
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------- main

async function main() {
  const meta = {
    date: new Date().toISOString(),
    commit: git(['rev-parse', '--short', 'HEAD']),
    dirty: git(['status', '--porcelain', '--', 'src', 'package.json']) !== '',
    node: process.version,
    postgres: 'PostgreSQL',
    cpus: cores,
    cpuModel: os.cpus()[0]?.model ?? 'unknown CPU',
    loadavg: os.loadavg().map((l) => l.toFixed(2)),
    taskset: HAS_TASKSET,
    loadGeneratorPinned: pinnedSelf,
    options,
  };
  if (options.dbs.includes('postgres')) {
    const client = new pg.Client({ connectionString: PG_ADMIN_URL });
    await client.connect();
    meta.postgres = `PostgreSQL ${(await client.query('SHOW server_version')).rows[0].server_version}`;
    await client.end();
  }
  if (cores < 2) log('warning: one CPU core only; server and load generator share it');
  for (const db of options.dbs) for (const size of options.sizes) await benchOne(db, size);
  const pinnedFlags = results.flatMap((e) => e.endpoints.map((r) => r.backendsPinned)).filter((v) => v !== null);
  meta.backendsPinned = pinnedFlags.length ? pinnedFlags.every(Boolean) : null;
  const targets = evaluateTargets();
  const md = markdown(meta, targets);
  log(`\n${md}`);
  if (options.save) {
    const dir = path.join(ROOT, 'bench/results');
    mkdirSync(dir, { recursive: true });
    let name = `${meta.date.slice(0, 10)}-${meta.commit}`;
    // a second run of the same day and commit keeps the first: <date>-<commit>-2, -3…
    for (let n = 2; existsSync(path.join(dir, `${name}.json`)); n++) name = `${meta.date.slice(0, 10)}-${meta.commit}-${n}`;
    writeFileSync(path.join(dir, `${name}.json`), `${JSON.stringify({ meta, results, targets, failures }, null, 2)}\n`);
    writeFileSync(path.join(dir, `${name}.md`), md);
    log(`written bench/results/${name}.json and .md`);
  }
  if (failures.length) {
    log(`\n${failures.length} failure(s):\n${failures.map((f) => `- ${f}`).join('\n')}`);
    process.exitCode = 1;
  }
}

process.once('SIGINT', async () => {
  await stopAll();
  process.exit(130);
});
try {
  await main();
} catch (error) {
  console.error(`bench failed: ${error.stack ?? error}`);
  process.exitCode = 1;
} finally {
  await stopAll();
  await pgAdmin?.end();
}
