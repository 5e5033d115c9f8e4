/**
 * `npm run bench:limiter` — the CPU the rate limiter adds to one request, measured in-process where
 * it can be resolved: the A/B of whole requests (`npm run bench:ab`) swings ±10 % between rounds on
 * a two-core machine, far more than the limiter's share, so its verdict there is only "same".
 *
 * Counts `--requests` (default 200,000) requests through the service's own RateLimiter (dist/, built
 * by the pre-script) as the RateLimitGuard does — one policy, one atomic fixed-window hit, the five
 * headers set — spread over 50 callers (per-user policy) with 50 in flight at a time, the
 * autocannon load of the benchmarks. Stores: the in-memory one (one instance) and, when Redis
 * answers at REDIS_URL (default redis://127.0.0.1:6379/15, a database the run empties of this
 * service's keys), the Redis one (several instances): there the service's CPU per request and, from
 * Redis's INFO, the Redis server's. Prints µs of CPU per request for each, and the share of the
 * cheapest endpoint's CPU per request given by `--per-request-us` (default 800, `GET /v1/articles/{id}`
 * in bench/results/2026-11-27-ab-540e78b-a4da605+.md). Target: under 3 % (docs/limits.md#rates).
 */
import 'reflect-metadata';
import { Redis } from 'ioredis';

const args = Object.fromEntries(
  process.argv
    .slice(2)
    .map((arg, i, all) => (arg.startsWith('--') ? [arg.slice(2), all[i + 1]] : []))
    .filter((pair) => pair.length),
);
const REQUESTS = Number(args.requests ?? 200_000);
const PER_REQUEST_US = Number(args['per-request-us'] ?? 800);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/15';
const CALLERS = 50;
const IN_FLIGHT = 50;

const { RateLimiter } = await import('../dist/src/auth/rate-limiter.js');
const { MemoryStore } = await import('../dist/src/store/memory-store.js');
const { RedisStore } = await import('../dist/src/store/redis-store.js');

/** A ConfigService stand-in: every quota out of reach, as in the benchmarks. */
const config = { get: () => 1_000_000 };
const sink = { setHeader() {} };
const requests = Array.from({ length: CALLERS }, (_, i) => ({ user: { id: i + 1, scheme: 'bearer' }, ip: '127.0.0.1' }));

/** Runs `n` counts, IN_FLIGHT at a time; returns µs of this process's CPU per count. */
async function measure(limiter, n) {
  const before = process.cpuUsage();
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < n) {
        const i = next++;
        await limiter.count('user', requests[i % CALLERS], sink);
      }
    }),
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}

/** The Redis server's CPU so far (µs), from INFO cpu. */
async function redisCpu(redis) {
  const info = await redis.info('cpu');
  const value = (name) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return (value('used_cpu_user') + value('used_cpu_sys')) * 1e6;
}

const rows = [];
const memory = new MemoryStore();
const onMemory = new RateLimiter(memory, config);
await measure(onMemory, 20_000); // warm-up
rows.push(['memory (one instance)', await measure(onMemory, REQUESTS), undefined]);
memory.onModuleDestroy?.();

let redis;
try {
  redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
} catch {
  redis = undefined;
  console.log(`(Redis at ${REDIS_URL} does not answer: the Redis store is not measured)`);
}
if (redis) {
  const store = await RedisStore.connect(REDIS_URL, 2000);
  const onRedis = new RateLimiter(store, config);
  await measure(onRedis, 20_000);
  const serverBefore = await redisCpu(redis);
  const service = await measure(onRedis, REQUESTS);
  const server = ((await redisCpu(redis)) - serverBefore) / REQUESTS;
  rows.push(['Redis (several instances)', service, server]);
  const keys = await redis.keys('resource-api:rate:*');
  if (keys.length) await redis.del(...keys);
  await store.onApplicationShutdown?.();
  redis.disconnect();
}

console.log(`rate limiter, ${REQUESTS} requests of ${CALLERS} callers, ${IN_FLIGHT} in flight; Node ${process.version}`);
console.log('| store | service CPU µs/request | Redis server CPU µs/request | share of a request (service, at ' + PER_REQUEST_US + ' µs) |');
console.log('|---|---:|---:|---:|');
for (const [name, service, server] of rows) {
  console.log(`| ${name} | ${service.toFixed(2)} | ${server === undefined ? '—' : server.toFixed(2)} | ${((100 * service) / PER_REQUEST_US).toFixed(2)} % |`);
}
process.exit(0);
