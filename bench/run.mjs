/**
 * `npm run bench` — resource-api against THE LIMIT (bench/limit-server.mjs), side by side.
 *
 * For each database (PostgreSQL, SQLite) and size (10k, 100k, 1M articles): seeds a fresh
 * database through the project's migrations (cached, see lib/seed.mjs), starts the service as in
 * production (`node dist/src/main.js`, NODE_ENV=production, logs at info to a file) and the limit,
 * both pinned to CPU core 0 (with the PostgreSQL backends of their connections), checks that both
 * answer every benchmarked request with byte-identical bodies, then measures them with autocannon
 * (this process, pinned to core 1) in interleaved rounds: req/s, p50/p99 latency, server and
 * database CPU per request, peak RSS, non-2xx answers. Also SQLite start-up time (spawn to the
 * first 200 of /health/ready). GET /v1/articles/{id} is also measured, in the same interleaved
 * rounds, on THE FLOOR (bench/floor-server.mjs): a bare NestJS + Express application running the
 * limit's hand-written query and checks, i.e. what the framework alone costs. Prints a markdown
 * table and the targets, writes bench/results/<date>-<commit>.json and .md.
 *
 * Options:
 *   --sizes 10k,100k,1m   article counts (default all three; `500` etc. allowed)
 *   --db postgres,sqlite  databases (default both)
 *   --rounds 3 --duration 8 --warmup 3 --connections 50   measurement (seconds); a slow endpoint
 *                         gets rounds of 3 × connections × its single-request time, at most
 *                         --max-duration 120 (the same for both targets)
 *   --endpoints list,list-deep,list-cursor,list-cursor-nullable,list-estimated,get,post   subset of the endpoints
 *                         (list-cursor: the page after a cursor 50,000 published articles deep —
 *                         a quarter of them on smaller tables — to compare with list page 1;
 *                         list-cursor-nullable: the same depth in `sort=published_at`, a nullable
 *                         key whose NULLs come last (the keyset parts of src/common/list/find-page.ts);
 *                         list-estimated: page 1 with `Prefer: count=estimated`, to compare
 *                         across sizes)
 *   --no-floor            do not start the Nest + Express floor (GET by id only)
 *   --redis redis://127.0.0.1:6379/7   run both servers with this Redis (shared deny list)
 *   --smoke               500 articles, 1 round of 1 s, both databases; checks byte identity and
 *                         zero non-2xx only; writes no results. Exit 1 on any mismatch.
 *   --no-save             do not write bench/results
 * Exit status: 1 when a body differs, a request failed (non-2xx) or a server did not start.
 */
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import Database from 'better-sqlite3';
import { cpuCount, cpuMicros, freePort, HAS_TASKSET, memory, pin, spawnNode, stop, stopAll, waitReady } from './lib/proc.mjs';
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
    endpoints: 'list,list-deep,list-cursor,list-cursor-nullable,list-estimated,get,post',
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
    Object.assign(options, { sizes: argv.includes('--sizes') ? options.sizes : '500', rounds: 1, duration: 1, warmup: 0.5, startups: 1, save: false });
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
    { key: 'get', name: 'GET article by id', method: 'GET', path: `/v1/articles/${articleId}`, headers: auth, floor: true },
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

async function startService(databaseUrl, logFile) {
  const port = await freePort();
  const child = spawnNode(['dist/src/main.js'], serviceEnv(databaseUrl, port), SERVER_CORE, logFile);
  const base = `http://127.0.0.1:${port}`;
  await waitReady(`${base}/health/ready`, child);
  return { name: 'service', child, base, application: 'resource-api' };
}

async function startLimit(databaseUrl, logFile) {
  const port = await freePort();
  const env = { JWT_SECRET, PORT: String(port), DATABASE_URL: databaseUrl, ...(options.redis ? { REDIS_URL: options.redis } : {}) };
  const child = spawnNode(['bench/limit-server.mjs'], env, SERVER_CORE, logFile);
  const base = `http://127.0.0.1:${port}`;
  await waitReady(`${base}/health/ready`, child, 60_000);
  return { name: 'limit', child, base, application: 'resource-api-limit' };
}

async function startFloor(databaseUrl, logFile) {
  const port = await freePort();
  const env = {
    JWT_SECRET,
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    BENCH_APPLICATION_NAME: 'resource-api-floor',
    ...(options.redis ? { REDIS_URL: options.redis } : {}),
  };
  const child = spawnNode(['bench/floor-server.mjs'], env, SERVER_CORE, logFile);
  const base = `http://127.0.0.1:${port}`;
  await waitReady(`${base}/health/ready`, child, 60_000);
  return { name: 'floor', child, base, application: 'resource-api-floor' };
}

/** SQLite start-up: spawn of the service to its first 200 on /health/ready, `count` times; milliseconds. */
async function startupTimes(file, count) {
  const times = [];
  for (let i = 0; i < count; i++) {
    const port = await freePort();
    const started = performance.now();
    const child = spawnNode(['dist/src/main.js'], serviceEnv(`sqlite:${file}`, port), SERVER_CORE, path.join(CACHE_DIR, 'logs', 'startup.log'));
    await waitReady(`http://127.0.0.1:${port}/health/ready`, child, 60_000, 5);
    times.push(performance.now() - started);
    await stop(child);
  }
  return times;
}

// ---------------------------------------------------------------- one database/size

const failures = [];
const results = [];

async function benchOne(db, size) {
  const tag = `${db}-${label(size)}`;
  log(`\n## ${db} ${label(size)} articles`);
  const seedStarted = Date.now();
  const target = db === 'postgres' ? await preparePostgres(size, label(size).toLowerCase(), log) : await prepareSqlite(size, label(size).toLowerCase(), log);
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
    if (options.floor && list.some((e) => e.floor)) floor = await startFloor(databaseUrl, path.join(logs, `${tag}-floor.log`));
    for (const t of [service, limit, floor]) if (t) t.pgDb = pgDb;
    // byte identity before measuring
    for (const endpoint of list) {
      const check = await compare(service.base, limit.base, endpoint);
      entry.verification.push({ endpoint: endpoint.name, ok: check.ok, bytes: check.bytes, problems: check.problems });
      log(`verify ${endpoint.name}: ${check.ok ? `identical (${check.bytes} bytes)` : 'MISMATCH'}`);
      if (!check.ok) {
        for (const line of check.problems) log(`  ${line}`);
        failures.push(`${tag} ${endpoint.name}: bodies differ`);
      }
      if (floor && endpoint.floor) {
        const checkFloor = await compare(floor.base, limit.base, endpoint);
        entry.verification.push({ endpoint: `${endpoint.name} (floor)`, ok: checkFloor.ok, bytes: checkFloor.bytes, problems: checkFloor.problems });
        log(`verify ${endpoint.name} on the floor: ${checkFloor.ok ? `identical (${checkFloor.bytes} bytes)` : 'MISMATCH'}`);
        if (!checkFloor.ok) {
          for (const line of checkFloor.problems) log(`  ${line}`);
          failures.push(`${tag} ${endpoint.name}: the floor's body differs`);
        }
      }
    }
    for (const endpoint of list) {
      // A slow endpoint gets longer rounds: with C connections a request waits about C × its own
      // time, and a round must see several of them complete (both targets get the same length).
      const alone = Math.max(await probeLatency(service.base, endpoint), await probeLatency(limit.base, endpoint));
      const seconds = Math.min(options.maxDuration, Math.max(options.duration, Math.ceil(3 * options.connections * alone)));
      const timeout = Math.min(600, Math.max(30, Math.ceil(2 * options.connections * alone) + 10));
      if (seconds > options.duration) log(`${endpoint.name}: ${alone.toFixed(2)} s alone → rounds of ${seconds} s, timeout ${timeout} s`);
      const targets = floor && endpoint.floor ? [service, limit, floor] : [service, limit];
      if (options.warmup > 0) {
        for (const t of targets) {
          await cannon(t.base, endpoint, Math.max(options.warmup, Math.min(seconds, Math.ceil(options.connections * alone))), timeout);
          await settle(t);
        }
      }
      const rounds = { service: [], limit: [], floor: [] };
      for (let r = 0; r < options.rounds; r++) {
        // alternate which target goes first, so drift (caches, other load) hits all alike
        for (const t of r % 2 === 0 ? targets : [...targets].reverse()) rounds[t.name].push(await round(t, endpoint, seconds, timeout));
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
      row.ratio = row.limit.rps ? row.service.rps / row.limit.rps : null;
      const total = (s) => (s.cpuPerReq ?? 0) + (s.dbCpuPerReq ?? 0);
      row.cpuRatio = total(row.limit) > 0 ? total(row.service) / total(row.limit) : null;
      if (rounds.floor.length > 0) {
        row.floor = summarise(rounds.floor);
        row.floorRatio = row.limit.rps ? row.floor.rps / row.limit.rps : null;
        row.floorCpuRatio = total(row.limit) > 0 ? total(row.floor) / total(row.limit) : null;
      }
      row.backendsPinned = db === 'postgres' ? [...rounds.service, ...rounds.limit].every((r) => r.backendsPinned) : null;
      entry.endpoints.push(row);
      for (const side of ['service', 'limit', 'floor']) {
        if (row[side] && row[side].non2xx > 0) failures.push(`${tag} ${endpoint.name}: ${row[side].non2xx} non-2xx/errors on the ${side}`);
      }
      log(
        `${endpoint.name}: service ${fmt(row.service.rps)} req/s, limit ${fmt(row.limit.rps)} req/s (${pct(row.ratio)}); ` +
          `CPU µs/req ${fmt(row.service.cpuPerReq)}+${fmt(row.service.dbCpuPerReq)} vs ${fmt(row.limit.cpuPerReq)}+${fmt(row.limit.dbCpuPerReq)}` +
          (row.floor
            ? `; floor ${fmt(row.floor.rps)} req/s (${pct(row.floorRatio)}), CPU µs/req ${fmt(row.floor.cpuPerReq)}+${fmt(row.floor.dbCpuPerReq)}`
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
    try {
      const times = await startupTimes(target, options.startups);
      entry.startupMs = { median: median(times), samples: times };
      log(`start-up (SQLite ${label(size)}): median ${fmt(entry.startupMs.median)} ms of ${times.map((t) => t.toFixed(0)).join(', ')}`);
    } catch (error) {
      failures.push(`${tag} start-up: ${error.message}`);
    }
  } else {
    await dropPostgres(label(size).toLowerCase());
  }
}

// ---------------------------------------------------------------- report

function fmt(value, digits = 0) {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  return value >= 100 || digits === 0 ? Math.round(value).toLocaleString('en-US') : value.toFixed(digits);
}
const pct = (ratio) => (ratio === null || ratio === undefined ? '–' : `${Math.round(ratio * 100)} %`);
const mib = (bytes) => (bytes ? `${(bytes / 2 ** 20).toFixed(0)}` : '–');

/** The targets of the service relative to the limit, evaluated on the measured results. */
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
    const ratioTarget = (key, name, min) => {
      const r = row(key);
      if (r) targets.push({ target: `${name} (${at}) req/s ≥ ${min * 100} % of the limit`, value: pct(r.ratio), met: r.ratio !== null && r.ratio >= min });
    };
    ratioTarget('list', 'list page 1', 0.75);
    ratioTarget('get', 'GET by id', 0.6);
    ratioTarget('post', 'POST todos', 0.5);
    const cpu = entry.endpoints.filter((e) => e.cpuRatio !== null);
    if (cpu.length) {
      const worst = cpu.reduce((a, b) => (b.cpuRatio > a.cpuRatio ? b : a));
      targets.push({
        target: `CPU per request (server + database, ${at}) ≤ 2× the limit's, every endpoint`,
        value: `${worst.cpuRatio.toFixed(2)}× (worst: ${worst.endpoint})`,
        met: worst.cpuRatio <= 2,
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
    .filter((e) => e.db === 'sqlite' && e.startupMs)
    .sort((a, b) => (a.size === 100_000 ? -1 : b.size === 100_000 ? 1 : b.size - a.size))[0];
  if (startup)
    targets.push({
      target: `SQLite start-up ≤ 1 s (${startup.label}, median)`,
      value: `${fmt(startup.startupMs.median)} ms`,
      met: startup.startupMs.median <= 1000,
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
  lines.push(
    '| database | articles | endpoint | service req/s | limit req/s | ratio | p50 / p99 ms service | p50 / p99 ms limit | CPU µs/req service (+db) | CPU µs/req limit (+db) | CPU ratio | non-2xx |',
  );
  lines.push('|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const entry of results) {
    for (const row of entry.endpoints) {
      const s = row.service;
      const l = row.limit;
      const cpu = (x) => `${fmt(x.cpuPerReq)}${x.dbCpuPerReq !== null ? ` (+${fmt(x.dbCpuPerReq)})` : ''}`;
      lines.push(
        `| ${entry.db} | ${entry.label} | ${row.endpoint}${row.roundSeconds > options.duration ? ` (rounds of ${row.roundSeconds} s)` : ''} | ${fmt(s.rps)} | ${fmt(l.rps)} | ${pct(row.ratio)} | ${fmt(s.p50)} / ${fmt(s.p99)} | ${fmt(l.p50)} / ${fmt(l.p99)} | ${cpu(s)} | ${cpu(l)} | ${row.cpuRatio === null ? '–' : `${row.cpuRatio.toFixed(2)}×`} | ${s.non2xx + l.non2xx} |`,
      );
    }
  }
  const requests = new Map(results.flatMap((e) => e.endpoints.map((r) => [r.endpoint, r.request.replace(/\/\d+$/, '/{id}')])));
  lines.push(
    '',
    `Requests (as user ${USER_ID}, role user, Bearer HS256; {id}: a published article of another user): ${[...requests].map(([name, request]) => `${name} = \`${request}\``).join('; ')}.`,
  );
  const floorRows = results.flatMap((e) => e.endpoints.filter((r) => r.floor).map((r) => ({ entry: e, row: r })));
  if (floorRows.length > 0) {
    lines.push(
      '',
      `The Nest + Express floor (bench/floor-server.mjs: a bare NestJS application with the limit's query and checks, no guards, pipes, interceptors, middleware or logging), measured in the same interleaved rounds:`,
      '',
      '| database | articles | endpoint | service req/s | floor req/s | limit req/s | floor / limit | service / floor | CPU µs/req service (+db) | CPU µs/req floor (+db) | CPU µs/req limit (+db) | CPU floor / limit | CPU service / floor | non-2xx floor |',
      '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    const cpuOf = (x) => `${fmt(x.cpuPerReq)}${x.dbCpuPerReq !== null ? ` (+${fmt(x.dbCpuPerReq)})` : ''}`;
    const total = (x) => (x.cpuPerReq ?? 0) + (x.dbCpuPerReq ?? 0);
    for (const { entry, row } of floorRows) {
      const serviceOverFloor = row.floor.rps ? row.service.rps / row.floor.rps : null;
      const cpuServiceOverFloor = total(row.floor) > 0 ? total(row.service) / total(row.floor) : null;
      lines.push(
        `| ${entry.db} | ${entry.label} | ${row.endpoint} | ${fmt(row.service.rps)} | ${fmt(row.floor.rps)} | ${fmt(row.limit.rps)} | ${pct(row.floorRatio)} | ${pct(serviceOverFloor)} | ${cpuOf(row.service)} | ${cpuOf(row.floor)} | ${cpuOf(row.limit)} | ${row.floorCpuRatio === null ? '–' : `${row.floorCpuRatio.toFixed(2)}×`} | ${cpuServiceOverFloor === null ? '–' : `${cpuServiceOverFloor.toFixed(2)}×`} | ${row.floor.non2xx} |`,
      );
    }
  }
  lines.push(
    '',
    '| database | articles | seed/copy s | peak RSS MiB service / limit | SQLite start-up ms (median) | bodies identical |',
    '|---|---|---:|---:|---:|---|',
  );
  for (const entry of results) {
    lines.push(
      `| ${entry.db} | ${entry.label} | ${entry.prepareSeconds.toFixed(1)} | ${mib(entry.rss?.service.peak)} / ${mib(entry.rss?.limit.peak)} | ${entry.startupMs ? fmt(entry.startupMs.median) : '–'} | ${entry.verification.length && entry.verification.every((v) => v.ok) ? 'yes' : 'NO'} |`,
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
