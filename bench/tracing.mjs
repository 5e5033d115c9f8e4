/**
 * `npm run bench:tracing` — what OpenTelemetry tracing costs: the service with tracing off (no
 * OTEL_* variables: the SDK is not loaded) against the same build with tracing on, exporting every
 * span (OTLP http/protobuf, the SDK's default batching) to a local sink in this process that
 * accepts and discards them.
 *
 * On a seeded database (bench/lib/seed.mjs, cached; SQLite by default), both services run as in
 * production (NODE_ENV=production, logs at info to a file), pinned to CPU core 0, autocannon in
 * this process on core 1; interleaved rounds on `GET /v1/articles` page 1 and `POST /v1/todos`:
 * req/s, p99 latency and server CPU per request (medians). Then start-up (spawn to the first 200 of
 * /health/ready) and peak RSS, off and on. Prints a markdown table; writes nothing.
 *
 * Options: --db sqlite|postgres (default sqlite) --size 10k --rounds 3 --duration 8 --warmup 3
 *          --connections 50 --startups 5
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import autocannon from 'autocannon';
import { cpuCount, cpuMicros, freePort, memory, pin, spawnNode, stop, stopAll, waitReady } from './lib/proc.mjs';
import { CACHE_DIR, dropPostgres, parseSize, preparePostgres, prepareSqlite } from './lib/seed.mjs';

const options = { db: 'sqlite', size: '10k', rounds: 3, duration: 8, warmup: 3, connections: 50, startups: 5 };
for (let i = 2; i < process.argv.length; i += 2) {
  const name = process.argv[i].replace(/^--/, '');
  if (!(name in options)) throw new Error(`unknown option ${process.argv[i]} (see bench/tracing.mjs)`);
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

/** The OTLP/HTTP sink: answers every export with 200 and counts what it got. */
const sink = { requests: 0, bytes: 0 };
const sinkServer = http.createServer((req, res) => {
  req.on('data', (chunk) => (sink.bytes += chunk.length));
  req.on('end', () => {
    sink.requests += 1;
    res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end();
  });
});
await new Promise((resolve) => sinkServer.listen(0, '127.0.0.1', resolve));
const SINK = `http://127.0.0.1:${sinkServer.address().port}`;

const MODES = {
  off: {},
  on: { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: SINK },
};

function env(databaseUrl, port, mode) {
  return { NODE_ENV: 'production', JWT_SECRET, OAUTH_ISSUER: 'http://127.0.0.1', LOG_LEVEL: 'info', PORT: String(port), DATABASE_URL: databaseUrl, ...MODES[mode] };
}

async function start(databaseUrl, mode) {
  const port = await freePort();
  const child = spawnNode(['dist/src/main.js'], env(databaseUrl, port, mode), SERVER_CORE, path.join(CACHE_DIR, 'logs', `tracing-${mode}.log`));
  const base = `http://127.0.0.1:${port}`;
  await waitReady(`${base}/health/ready`, child);
  return { mode, child, base };
}

const median = (values) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length === 0 ? NaN : sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

async function round(target, endpoint, seconds) {
  const cpuBefore = cpuMicros(target.child.pid);
  const result = await autocannon({ url: target.base + endpoint.path, method: endpoint.method, headers: endpoint.headers, body: endpoint.body, connections: options.connections, duration: seconds });
  const cpu = cpuMicros(target.child.pid) - cpuBefore;
  await new Promise((resolve) => setTimeout(resolve, 500)); // in-flight requests and the last export finish
  const ok = result['2xx'];
  return { rps: ok / result.duration, p99: result.latency.p99, cpuPerReq: ok ? cpu / ok : NaN, failed: result.non2xx + result.errors + result.timeouts };
}

const size = parseSize(options.size);
const target = options.db === 'postgres' ? await preparePostgres(size, `tracing_${options.size}`) : await prepareSqlite(size, options.size);
const databaseUrl = options.db === 'postgres' ? target : `sqlite:${target}`;
const auth = { authorization: `Bearer ${accessToken()}` };
const endpoints = [
  { name: 'GET list page 1', method: 'GET', path: '/v1/articles?status=published&sort=-created_at&page=1&size=20', headers: auth },
  { name: 'POST todo', method: 'POST', path: '/v1/todos', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ title: 'Buy milk', status: 'pending' }) },
];

const lines = [];
let failed = 0;
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
  const startups = { off: [], on: [] };
  for (let i = 0; i < options.startups; i++) {
    for (const mode of ['off', 'on']) {
      const port = await freePort();
      const started = performance.now();
      const child = spawnNode(['dist/src/main.js'], env(databaseUrl, port, mode), SERVER_CORE, path.join(CACHE_DIR, 'logs', `tracing-startup-${mode}.log`));
      await waitReady(`http://127.0.0.1:${port}/health/ready`, child, 60_000, 5);
      startups[mode].push(performance.now() - started);
      await stop(child);
    }
  }
  console.log(
    [
      '',
      `Tracing off vs on (${options.db} ${options.size} articles; ${options.connections} connections, ${options.rounds} interleaved rounds × ${options.duration} s, medians; on: every span exported, OTLP http/protobuf to a local sink — ${sink.requests} exports, ${(sink.bytes / 2 ** 20).toFixed(1)} MiB):`,
      '',
      '| endpoint | req/s off | req/s on | change | p99 ms off / on | CPU µs/req off / on |',
      '|---|---:|---:|---:|---:|---:|',
      ...lines,
      '',
      `Peak RSS under load: off ${rss[0]} MiB, on ${rss[1]} MiB. Start-up to the first ready 200 (median of ${options.startups}): off ${median(startups.off).toFixed(0)} ms, on ${median(startups.on).toFixed(0)} ms.`,
      failed ? `\n${failed} non-2xx answers or errors.` : '',
    ].join('\n'),
  );
  if (failed) process.exitCode = 1;
} finally {
  await stopAll();
  sinkServer.close();
  if (options.db === 'postgres') await dropPostgres(`tracing_${options.size}`);
}
