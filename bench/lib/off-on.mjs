/**
 * The off/on cost benchmark shared by `npm run bench:tracing` and `npm run bench:metrics`: one
 * build started twice with different environment variables ("off" and "on"), measured in
 * interleaved rounds on a list and a create.
 *
 * On a seeded database (bench/lib/seed.mjs, cached; SQLite by default), both services run as in
 * production (NODE_ENV=production, logs at info to bench/.cache/logs/<name>-<mode>.log), pinned to
 * CPU core 0, autocannon in this process on core 1; per endpoint a warm-up of each, then `rounds`
 * rounds alternating which service goes first: req/s, p99 latency (ms) and server CPU per request
 * (µs, /proc), medians.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import autocannon from 'autocannon';
import { cpuCount, cpuMicros, freePort, memory, pin, spawnNode, stop, stopAll, waitReady } from './proc.mjs';
import { CACHE_DIR, dropPostgres, parseSize, preparePostgres, prepareSqlite } from './seed.mjs';

const SERVER_CORE = 0;

/** The options every off/on benchmark takes (seconds, counts), before its own `extra` ones. */
const COMMON_OPTIONS = { db: 'sqlite', size: '10k', rounds: 3, duration: 8, warmup: 3, connections: 50 };

/**
 * `--name value` pairs of the command line over the defaults (COMMON_OPTIONS and `extra`); a
 * number default makes the value a number. @throws Error naming `script` on an unknown option.
 */
export function parseOffOnOptions(extra, script) {
  const options = { ...COMMON_OPTIONS, ...extra };
  for (let i = 2; i < process.argv.length; i += 2) {
    const name = process.argv[i].replace(/^--/, '');
    if (!(name in options)) throw new Error(`unknown option ${process.argv[i]} (see ${script})`);
    options[name] = typeof options[name] === 'number' ? Number(process.argv[i + 1]) : process.argv[i + 1];
  }
  return options;
}

/** The median of the finite values (NaN when none). */
export const median = (values) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length === 0 ? NaN : sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** The header of the markdown table whose rows {@link measureOffOn} returns. */
export const OFF_ON_TABLE_HEADER = ['| endpoint | req/s off | req/s on | change | p99 ms off / on | CPU µs/req off / on |', '|---|---:|---:|---:|---:|---:|'];

/**
 * Seeds (or reuses) the database, starts the service in both modes, measures both endpoints and
 * stops the services; the PostgreSQL copy is dropped at the end.
 *
 * Takes `name` (log and database labels), `options` ({@link parseOffOnOptions}), `modes`
 * ({ off, on }: the environment variables of each), `duringRound(service)` (optional: started
 * before each round of a service, returns the function that ends it; the metrics benchmark scrapes
 * there) and `afterServices({ databaseUrl, env })` (optional: runs once the measured services are
 * stopped; the tracing benchmark times start-ups there). Returns { lines: the table rows, rss:
 * peak RSS MiB [off, on], failed: non-2xx answers and errors, cpus: the machine's cores }.
 */
export async function measureOffOn({ name, options, modes, duringRound = () => () => undefined, afterServices }) {
  const cpus = cpuCount();
  pin(process.pid, cpus > 1 ? 1 : 0);
  const jwtSecret = randomBytes(32).toString('base64url');
  const env = (databaseUrl, port, mode) => ({
    NODE_ENV: 'production',
    JWT_SECRET: jwtSecret,
    OAUTH_ISSUER: 'http://127.0.0.1',
    LOG_LEVEL: 'info',
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    ...modes[mode],
  });

  const start = async (databaseUrl, mode) => {
    const port = await freePort();
    const child = spawnNode(['dist/src/main.js'], env(databaseUrl, port, mode), SERVER_CORE, path.join(CACHE_DIR, 'logs', `${name}-${mode}.log`));
    const base = `http://127.0.0.1:${port}`;
    await waitReady(`${base}/health/ready`, child);
    return { mode, child, base };
  };

  const round = async (service, endpoint, seconds) => {
    const end = duringRound(service);
    const cpuBefore = cpuMicros(service.child.pid);
    const result = await autocannon({
      url: service.base + endpoint.path,
      method: endpoint.method,
      headers: endpoint.headers,
      body: endpoint.body,
      connections: options.connections,
      duration: seconds,
    });
    const cpu = cpuMicros(service.child.pid) - cpuBefore;
    end();
    await new Promise((resolve) => setTimeout(resolve, 500)); // in-flight requests (and a last export or scrape) finish
    const ok = result['2xx'];
    return { rps: ok / result.duration, p99: result.latency.p99, cpuPerReq: ok ? cpu / ok : NaN, failed: result.non2xx + result.errors + result.timeouts };
  };

  const size = parseSize(options.size);
  const target = options.db === 'postgres' ? await preparePostgres(size, `${name}_${options.size}`) : await prepareSqlite(size, options.size);
  const databaseUrl = options.db === 'postgres' ? target : `sqlite:${target}`;
  const auth = { authorization: `Bearer ${accessToken(jwtSecret)}` };
  const endpoints = [
    { name: 'GET list page 1', method: 'GET', path: '/v1/articles?status=published&sort=-created_at&page=1&size=20', headers: auth },
    {
      name: 'POST todo',
      method: 'POST',
      path: '/v1/todos',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Buy milk', status: 'pending' }),
    },
  ];

  const lines = [];
  let failed = 0;
  try {
    const services = [await start(databaseUrl, 'off'), await start(databaseUrl, 'on')];
    for (const endpoint of endpoints) {
      for (const service of services) if (options.warmup > 0) await round(service, endpoint, options.warmup);
      const rounds = { off: [], on: [] };
      for (let r = 0; r < options.rounds; r++) {
        for (const service of r % 2 === 0 ? services : [...services].reverse()) {
          const result = await round(service, endpoint, options.duration);
          rounds[service.mode].push(result);
          console.log(`  ${endpoint.name} round ${r + 1} ${service.mode}: ${result.rps.toFixed(0)} req/s, CPU ${result.cpuPerReq.toFixed(0)} µs/req`);
        }
      }
      const summary = (runs) => ({ rps: median(runs.map((x) => x.rps)), p99: median(runs.map((x) => x.p99)), cpu: median(runs.map((x) => x.cpuPerReq)) });
      const off = summary(rounds.off);
      const on = summary(rounds.on);
      failed += [...rounds.off, ...rounds.on].reduce((sum, x) => sum + x.failed, 0);
      lines.push(
        `| ${endpoint.name} | ${off.rps.toFixed(0)} | ${on.rps.toFixed(0)} | ${(((on.rps - off.rps) / off.rps) * 100).toFixed(1)} % | ${off.p99} / ${on.p99} | ${off.cpu.toFixed(0)} / ${on.cpu.toFixed(0)} (${(((on.cpu - off.cpu) / off.cpu) * 100).toFixed(1)} %) |`,
      );
      console.log(lines.at(-1));
    }
    const rss = services.map((service) => (memory(service.child.pid).peak / 2 ** 20).toFixed(0));
    for (const service of services) await stop(service.child);
    await afterServices?.({ databaseUrl, env });
    return { lines, rss, failed, cpus };
  } finally {
    await stopAll();
    if (options.db === 'postgres') await dropPostgres(`${name}_${options.size}`);
  }
}

/** An HS256 access token of the service for user 7 (role user), valid for a day, signed with `secret`. */
function accessToken(secret) {
  const now = Math.floor(Date.now() / 1000);
  const encode = (object) => Buffer.from(JSON.stringify(object)).toString('base64url');
  const unsigned = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode({ user_id: 7, role: 'user', typ: 'access', fid: randomUUID(), iat: now, exp: now + 86_400, jti: randomUUID() })}`;
  return `${unsigned}.${createHmac('sha256', secret).update(unsigned).digest('base64url')}`;
}

export { SERVER_CORE };
