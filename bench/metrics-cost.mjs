/**
 * `npm run bench:metrics` — what the Prometheus metrics cost: the same build with METRICS=false
 * (no middleware, no database hooks, no runtime sampling, no /metrics) against METRICS=true (the
 * default), scraped like Prometheus would (`GET /metrics` with METRICS_TOKEN every --scrape
 * seconds) during the measurement.
 *
 * On a seeded database (bench/lib/seed.mjs, cached; SQLite by default), both services run as in
 * production (NODE_ENV=production, logs at info to a file), pinned to CPU core 0, autocannon in
 * this process on core 1; interleaved rounds on `GET /v1/articles` page 1 (a list) and
 * `POST /v1/todos` (a create): req/s, p99 latency and server CPU per request (medians), and peak
 * RSS. Prints a markdown table with the machine's load average before and after, and writes it
 * to bench/results/<date>-metrics-<commit>.md (unless --no-save). On a machine shared with other
 * work the figures are upper bounds of the cost.
 *
 * Options: --db sqlite|postgres (default sqlite) --size 10k --rounds 3 --duration 8 --warmup 3
 *          --connections 50 --scrape 5 --save true|false
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import autocannon from 'autocannon';
import { cpuCount, cpuMicros, freePort, memory, pin, spawnNode, stop, stopAll, waitReady } from './lib/proc.mjs';
import { CACHE_DIR, dropPostgres, parseSize, preparePostgres, prepareSqlite, ROOT } from './lib/seed.mjs';

const options = { db: 'sqlite', size: '10k', rounds: 3, duration: 8, warmup: 3, connections: 50, scrape: 5, save: 'true' };
for (let i = 2; i < process.argv.length; i += 2) {
  const name = process.argv[i].replace(/^--/, '');
  if (!(name in options)) throw new Error(`unknown option ${process.argv[i]} (see bench/metrics-cost.mjs)`);
  options[name] = typeof options[name] === 'number' ? Number(process.argv[i + 1]) : process.argv[i + 1];
}

const SERVER_CORE = 0;
pin(process.pid, cpuCount() > 1 ? 1 : 0);
const JWT_SECRET = randomBytes(32).toString('base64url');

/** An HS256 access token of the service for user 7 (role user), valid for a day. */
function accessToken() {
  const now = Math.floor(Date.now() / 1000);
  const encode = (object) => Buffer.from(JSON.stringify(object)).toString('base64url');
  const unsigned = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode({ user_id: 7, role: 'user', typ: 'access', fid: randomUUID(), iat: now, exp: now + 86_400, jti: randomUUID() })}`;
  return `${unsigned}.${createHmac('sha256', JWT_SECRET).update(unsigned).digest('base64url')}`;
}

const METRICS_TOKEN = randomBytes(24).toString('base64url');
const MODES = {
  off: { METRICS: 'false' },
  on: { METRICS: 'true', METRICS_TOKEN },
};
/** Scrapes of the `on` service during the rounds, and their failures. */
const scrapes = { done: 0, failed: 0, bytes: 0 };

function env(databaseUrl, port, mode) {
  return { NODE_ENV: 'production', JWT_SECRET, OAUTH_ISSUER: 'http://127.0.0.1', LOG_LEVEL: 'info', PORT: String(port), DATABASE_URL: databaseUrl, ...MODES[mode] };
}

async function start(databaseUrl, mode) {
  const port = await freePort();
  const child = spawnNode(['dist/src/main.js'], env(databaseUrl, port, mode), SERVER_CORE, path.join(CACHE_DIR, 'logs', `metrics-${mode}.log`));
  const base = `http://127.0.0.1:${port}`;
  await waitReady(`${base}/health/ready`, child);
  return { mode, child, base };
}

const median = (values) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length === 0 ? NaN : sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** Scrapes `target` every --scrape seconds until the returned function is called (the `on` service only). */
function scraper(target) {
  if (target.mode !== 'on' || !(options.scrape > 0)) return () => undefined;
  const timer = setInterval(async () => {
    try {
      const res = await fetch(`${target.base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      const text = await res.text();
      if (res.status === 200) {
        scrapes.done += 1;
        scrapes.bytes += text.length;
      } else scrapes.failed += 1;
    } catch {
      scrapes.failed += 1;
    }
  }, options.scrape * 1000);
  return () => clearInterval(timer);
}

async function round(target, endpoint, seconds) {
  const stopScraping = scraper(target);
  const cpuBefore = cpuMicros(target.child.pid);
  const result = await autocannon({ url: target.base + endpoint.path, method: endpoint.method, headers: endpoint.headers, body: endpoint.body, connections: options.connections, duration: seconds });
  const cpu = cpuMicros(target.child.pid) - cpuBefore;
  stopScraping();
  await new Promise((resolve) => setTimeout(resolve, 500)); // in-flight requests finish
  const ok = result['2xx'];
  return { rps: ok / result.duration, p99: result.latency.p99, cpuPerReq: ok ? cpu / ok : NaN, failed: result.non2xx + result.errors + result.timeouts };
}

const size = parseSize(options.size);
const target = options.db === 'postgres' ? await preparePostgres(size, `metrics_${options.size}`) : await prepareSqlite(size, options.size);
const databaseUrl = options.db === 'postgres' ? target : `sqlite:${target}`;
const auth = { authorization: `Bearer ${accessToken()}` };
const endpoints = [
  { name: 'GET list page 1', method: 'GET', path: '/v1/articles?status=published&sort=-created_at&page=1&size=20', headers: auth },
  { name: 'POST todo', method: 'POST', path: '/v1/todos', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ title: 'Buy milk', status: 'pending' }) },
];

const lines = [];
let failed = 0;
const loadBefore = os.loadavg();
try {
  const services = [await start(databaseUrl, 'off'), await start(databaseUrl, 'on')];
  for (const endpoint of endpoints) {
    for (const service of services) if (options.warmup > 0) await round(service, endpoint, options.warmup);
    const rounds = { off: [], on: [] };
    for (let r = 0; r < options.rounds; r++) {
      for (const service of r % 2 === 0 ? services : [...services].reverse()) rounds[service.mode].push(await round(service, endpoint, options.duration));
    }
    const off = { rps: median(rounds.off.map((x) => x.rps)), p99: median(rounds.off.map((x) => x.p99)), cpu: median(rounds.off.map((x) => x.cpuPerReq)) };
    const on = { rps: median(rounds.on.map((x) => x.rps)), p99: median(rounds.on.map((x) => x.p99)), cpu: median(rounds.on.map((x) => x.cpuPerReq)) };
    failed += [...rounds.off, ...rounds.on].reduce((sum, x) => sum + x.failed, 0);
    lines.push(
      `| ${endpoint.name} | ${off.rps.toFixed(0)} | ${on.rps.toFixed(0)} | ${(((on.rps - off.rps) / off.rps) * 100).toFixed(1)} % | ${off.p99} / ${on.p99} | ${off.cpu.toFixed(0)} / ${on.cpu.toFixed(0)} (${(((on.cpu - off.cpu) / off.cpu) * 100).toFixed(1)} %) |`,
    );
    console.log(lines.at(-1));
  }
  const rss = services.map((service) => (memory(service.child.pid).peak / 2 ** 20).toFixed(0));
  for (const service of services) await stop(service.child);
  const loadAfter = os.loadavg();
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  const report = [
    `# Metrics cost (${new Date().toISOString().slice(0, 16)}Z, commit ${commit})`,
    '',
    `METRICS=false vs METRICS=true (${options.db} ${options.size} articles; ${options.connections} connections, ${options.rounds} interleaved rounds × ${options.duration} s, medians; on: scraped every ${options.scrape} s with the token — ${scrapes.done} scrapes, ${scrapes.failed} failed, ${(scrapes.bytes / Math.max(1, scrapes.done) / 1024).toFixed(1)} KiB each). Node ${process.version}, ${cpuCount()} CPUs.`,
    '',
    '| endpoint | req/s off | req/s on | change | p99 ms off / on | CPU µs/req off / on |',
    '|---|---:|---:|---:|---:|---:|',
    ...lines,
    '',
    `Peak RSS under load: off ${rss[0]} MiB, on ${rss[1]} MiB.`,
    '',
    `Load average (1/5/15 min) before: ${loadBefore.map((x) => x.toFixed(2)).join(' / ')}; after: ${loadAfter.map((x) => x.toFixed(2)).join(' / ')}. On a machine shared with other work these figures are upper bounds of the cost.`,
    failed ? `\n${failed} non-2xx answers or errors.` : '',
  ].join('\n');
  console.log(`\n${report}`);
  if (options.save !== 'false') {
    const dir = path.join(ROOT, 'bench/results');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${new Date().toISOString().slice(0, 10)}-metrics-${commit}.md`);
    writeFileSync(file, `${report}\n`);
    console.log(`\nwritten to ${path.relative(ROOT, file)}`);
  }
  if (failed) process.exitCode = 1;
} finally {
  await stopAll();
    if (options.db === 'postgres') await dropPostgres(`metrics_${options.size}`);
}
