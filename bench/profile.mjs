/**
 * `node bench/profile.mjs [--db postgres|sqlite] [--size 10k] [--endpoint get|post|list] [--seconds 10] [--env NAME=value,…] [--server floor|limit]`:
 * starts the service (or, with `--server`, the floor or the limit, to compare; with `--bare`, without
 * `npm start`'s node flags) as bench/run.mjs does (production, logs to a file, pinned to core 0) with
 * `--cpu-prof`, loads one endpoint with autocannon (50 connections) and prints where the
 * main-thread CPU went per request: self time by package and the top functions.
 * `--env` adds settings to the service's environment (e.g. `--env METRICS=false`). `--share <regex>`
 * also prints the CPU of the code whose script URL matches <regex> (e.g.
 * `'prom-client|observability/metrics'`): every sample whose stack, read from the leaf up, reaches
 * a matching frame before a frame of the service, a framework or a database driver (what that code
 * wraps and calls back — the statement a timer times — is not counted), per request and as a share.
 * The .cpuprofile is kept in bench/.cache/profiles for Chrome DevTools.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { cpuMicros, freePort, memory, pin, serviceArgs, spawnNode, stop, waitReady } from './lib/proc.mjs';
import { CACHE_DIR, dropPostgres, parseSize, prepareSqlite, preparePostgres } from './lib/seed.mjs';

const args = {};
for (let i = 2; i < process.argv.length; i++) {
  const [name, value] = process.argv[i].replace(/^--/, '').split(/=(.*)/s);
  args[name] = value ?? (process.argv[i + 1] && !process.argv[i + 1].startsWith('--') ? process.argv[++i] : '1');
}
const db = args.db ?? 'postgres';
const size = parseSize(args.size ?? '10k');
const which = args.endpoint ?? 'get';
const seconds = Number(args.seconds ?? 10);
const extra = args.node ? args.node.split(',') : [];
pin(process.pid, 1);
const secret = randomBytes(32).toString('base64url');
const now = Math.floor(Date.now() / 1000);
const enc = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
const unsigned = `${enc({ alg: 'HS256', typ: 'JWT' })}.${enc({ user_id: 7, role: 'user', typ: 'access', fid: randomUUID(), iat: now, exp: now + 86400, jti: randomUUID() })}`;
const token = `${unsigned}.${createHmac('sha256', secret).update(unsigned).digest('base64url')}`;
const label = `prof${args.size ?? '10k'}`;
const target = db === 'postgres' ? await preparePostgres(size, label) : await prepareSqlite(size, label);
let id = Math.floor(size / 2);
if (db === 'postgres') {
  const c = new pg.Client({ connectionString: target });
  await c.connect();
  id = (await c.query(`SELECT id FROM articles WHERE status='published' AND author_id<>7 AND id>=${id} ORDER BY id LIMIT 1`)).rows[0].id;
  await c.end();
} else {
  const { default: Database } = await import('better-sqlite3');
  const file = new Database(target, { readonly: true });
  id = file.prepare(`SELECT id FROM articles WHERE status='published' AND author_id<>7 AND id>=${id} ORDER BY id LIMIT 1`).get().id;
  file.close();
}
const dir = path.join(CACHE_DIR, 'profiles', `${db}-${which}-${Date.now()}`);
mkdirSync(dir, { recursive: true });
const port = await freePort();
const env = {
  HEAP_OUT: path.join(dir, 'heap.heapprofile'),
  NODE_ENV: 'production',
  JWT_SECRET: secret,
  OAUTH_ISSUER: 'http://127.0.0.1',
  LOG_LEVEL: 'info',
  PORT: String(port),
  DATABASE_URL: db === 'postgres' ? target : `sqlite:${target}`,
  ...Object.fromEntries((args.env ? args.env.split(',') : []).map((pair) => pair.split(/=(.*)/s).slice(0, 2))),
};
const prof = args.noprof ? [] : ['--cpu-prof', `--cpu-prof-dir=${dir}`];
const spawnedAt = performance.now();
const script = { floor: ['bench/floor-server.mjs'], limit: ['bench/limit-server.mjs'] }[args.server] ?? (args.bare ? ['dist/src/main.js'] : serviceArgs());
const child = spawnNode([...prof, ...extra, ...script], env, 0, path.join(dir, 'service.log'));
const base = `http://127.0.0.1:${port}`;
await waitReady(`${base}/health/ready`, child);
let r;
let cpu;
let from = 0;
let to;
let rss;
if (args.startup) {
  // start-up only: spawn to the first 200 of /health/ready
  to = performance.now() - spawnedAt;
  cpu = cpuMicros(child.pid);
  rss = memory(child.pid);
  r = { '2xx': 1, duration: 1, non2xx: 0, errors: 0 };
  console.log(`start-up ${db}: ${to.toFixed(0)} ms to ready, CPU ${(cpu / 1000).toFixed(0)} ms`);
} else {
  const auth = { authorization: `Bearer ${token}` };
  const ep = {
    get: { url: `${base}/v1/articles/${id}`, headers: auth },
    list: { url: `${base}/v1/articles?status=published&sort=-created_at&page=1&size=20`, headers: auth },
    post: {
      url: `${base}/v1/todos`,
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Buy milk', content: 'Two litres, semi-skimmed.', status: 'pending' }),
    },
  }[which];
  await autocannon({ ...ep, connections: 50, duration: 2 });
  if (args.heap) {
    child.kill('SIGUSR2');
    await new Promise((r) => setTimeout(r, 300));
  }
  const backends = async () => {
    if (db !== 'postgres') return [];
    const c = new pg.Client({ connectionString: target });
    await c.connect();
    const { rows } = await c.query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'resource-api%'`);
    await c.end();
    return rows.map((row) => row.pid);
  };
  const pids = await backends();
  const db0 = new Map(pids.map((pid) => [pid, cpuMicros(pid)]));
  const cpu0 = cpuMicros(child.pid);
  from = performance.now() - spawnedAt;
  r = await autocannon({ ...ep, connections: 50, duration: seconds });
  cpu = cpuMicros(child.pid) - cpu0;
  let dbCpu = 0;
  for (const pid of await backends()) dbCpu += cpuMicros(pid) - (db0.get(pid) ?? 0);
  r.dbCpu = dbCpu;
  to = performance.now() - spawnedAt;
  rss = memory(child.pid);
  if (args.heap) {
    child.kill('SIGUSR2');
    await new Promise((r) => setTimeout(r, 3000));
  }
  if (args.snapshot) {
    await new Promise((r) => setTimeout(r, 1500));
    child.kill('SIGUSR2');
    await new Promise((r) => setTimeout(r, 8000));
  }
  if (args.usr2) {
    await new Promise((r) => setTimeout(r, 1000));
    child.kill('SIGUSR2');
    await new Promise((r) => setTimeout(r, 1000));
  }
}
await stop(child);
if (!args.startup)
  console.log(
    `${which} ${db}: ${Math.round(r['2xx'] / r.duration)} req/s, non2xx ${r.non2xx + r.errors}, CPU ${Math.round(cpu / r['2xx'])} µs/req (process)${db === 'postgres' ? ` + ${Math.round(r.dbCpu / r['2xx'])} (PostgreSQL)` : ''}, peak RSS ${(rss.peak / 2 ** 20).toFixed(0)} MiB`,
  );
if (db === 'postgres' && args.drop) await dropPostgres(label);
if (args.noprof) process.exit(0);
const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
const profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
const self = new Map();
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const dt = profile.timeDeltas;
// only the measured window (the profile starts a few ms after the spawn: close enough)
let t = 0;
for (let i = 0; i < profile.samples.length; i++) {
  t += dt[i] ?? 0;
  if (t < from * 1000 || t > to * 1000) continue;
  const n = byId.get(profile.samples[i]);
  self.set(n.id, (self.get(n.id) ?? 0) + (dt[i] ?? 0));
}
// inclusive time of functions (each sample counted once per distinct function on its stack)
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const incl = new Map();
for (const [id, us] of self) {
  const seen = new Set();
  for (let x = id; x !== undefined; x = parent.get(x)) {
    const cf = byId.get(x).callFrame;
    const key = `${cf.functionName || '(anon)'} ${cf.url.replace(/.*node_modules\//, '').replace(/.*\/dist\//, '')}:${cf.lineNumber}`;
    if (seen.has(key)) continue;
    seen.add(key);
    incl.set(key, (incl.get(key) ?? 0) + us);
  }
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
const pkg = (url) => {
  if (!url) return '(native/gc)';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1];
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  if (url.includes('/dist/')) return 'project:' + url.split('/dist/')[1];
  return url;
};
const groups = new Map();
const fns = new Map();
for (const [id, us] of self) {
  const n = byId.get(id);
  const cf = n.callFrame;
  const g = cf.url ? pkg(cf.url) : cf.functionName || '(native)';
  groups.set(g, (groups.get(g) ?? 0) + us);
  const key = `${cf.functionName || '(anon)'} ${cf.url.replace(/.*node_modules\//, '').replace(/.*\/dist\//, '')}:${cf.lineNumber}`;
  fns.set(key, (fns.get(key) ?? 0) + us);
}
const show = (m, k) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, k)
    .map(([name, us]) => `${((100 * us) / total).toFixed(1).padStart(5)} %  ${(us / r['2xx']).toFixed(0).padStart(5)} µs/req*  ${name}`)
    .join('\n');
console.log(`profile: ${file} (${(total / 1e6).toFixed(1)} s sampled in the measured window)`);
console.log(show(groups, 30));
console.log('--- top functions');
console.log(show(fns, Number(args.top ?? 40)));
if (args.share) {
  const share = new RegExp(args.share);
  const wrapped = /node_modules\/(typeorm|better-sqlite3|pg|pg-pool|express|router|@nestjs|rxjs)\/|\/dist\/src\//;
  let inShare = 0;
  for (const [id, us] of self) {
    for (let x = id; x !== undefined; x = parent.get(x)) {
      const { url } = byId.get(x).callFrame;
      if (share.test(url)) {
        inShare += us;
        break;
      }
      if (wrapped.test(url)) break;
    }
  }
  console.log(`--- share /${args.share}/: ${(inShare / r['2xx']).toFixed(0)} µs/req, ${((100 * inShare) / total).toFixed(1)} % of the sampled CPU`);
}
if (args.incl) {
  console.log('--- inclusive');
  console.log(show(new Map([...incl].filter(([k]) => !k.startsWith('(root)') && !k.startsWith('(anon) :'))), Number(args.incl)));
}
