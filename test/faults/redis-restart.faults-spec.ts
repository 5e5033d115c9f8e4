import { afterAll, describe, expect, it } from '@jest/globals';
import { rmSync } from 'node:fs';
import { loggedErrors, PgCluster, RedisServer, scratchDir, startFaultServer } from './infra.js';
import { CLEAN, LOAD_AFTER_MS, LOAD_BEFORE_MS, Scenario, sleep, WRITERS } from './scenario.js';

/** How long Redis stays down each time (ms). */
const OUTAGE_MS = 2_000;
/** How often Redis is killed (2 s apart once it is back): more chances to catch a write in the instant Redis dies. */
const KILLS = 3;
/** The longest a request may take while Redis is down (ms): REDIS_TIMEOUT_MS (1 s) and some. */
const ANSWER_WITHIN_MS = 2_500;

/**
 * Fault 5: the Redis server (one of the test's own) killed under load and started again empty
 * (nothing saved) after 2 s, three times, the service — on PostgreSQL, shared state in Redis — left running. Requests
 * needing Redis answer 503 with Retry-After while it is away (never hang); the writers' keyed
 * retries after it is back, with every kept Idempotency-Key response gone, must create nothing
 * twice; the audit must be clean.
 */
describe('fault: Redis killed and started again empty under load', () => {
  const cleanups: Array<() => unknown> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('503 with Retry-After while it is down, no hang; keyed retries afterwards create nothing twice; audit clean', async () => {
    const cluster = await PgCluster.create('redis');
    cleanups.push(() => cluster.drop());
    const redis = await RedisServer.create();
    cleanups.push(() => redis.stop());
    const dir = scratchDir('redis-restart');
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const server = await startFaultServer(dir, { DATABASE_URL: await cluster.createDatabase('ra_faults_redis'), REDIS_URL: redis.url(8) });
    cleanups.push(() => server.process.kill());
    const target = { url: server.base };
    const scenario = new Scenario('redis-restart');
    cleanups.push(() => scenario.abort());
    await scenario.addWriters(WRITERS, [target]);
    scenario.start();
    await sleep(LOAD_BEFORE_MS);

    const outages: Array<{ killedAt: number; startingAt: number }> = [];
    for (let round = 0; round < KILLS; round += 1) {
      const killedAt = Date.now();
      await redis.kill();
      await sleep(OUTAGE_MS);
      outages.push({ killedAt, startingAt: Date.now() });
      await redis.start();
      await sleep(round === KILLS - 1 ? LOAD_AFTER_MS : 2_000);
    }
    await scenario.stop();
    const report = await scenario.audit(target.url);

    const during = scenario.ledger
      .attempts()
      .filter(({ attempt }) => outages.some(({ killedAt, startingAt }) => attempt.at >= killedAt && attempt.at < startingAt));
    const slow = during.filter(({ attempt }) => attempt.failure !== undefined || attempt.ms > ANSWER_WITHIN_MS);
    const missingRetryAfter = scenario.ledger.attempts().filter(({ attempt }) => attempt.status === 503 && !attempt.retryAfter).length;
    scenario.summary(
      report,
      {
        first503Ms: outages.map(({ killedAt }) => scenario.firstStatusAfter(killedAt)).join('/'),
        kills: KILLS,
        duringOutage: during.length,
        slowOrFailedDuringOutage: slow.length,
        slowestMs: Math.max(0, ...during.map(({ attempt }) => attempt.ms)),
        missingRetryAfter,
      },
      loggedErrors(server.process.output()),
    );
    expect({ slowOrFailedDuringOutage: slow.length, missingRetryAfter, ...scenario.verdict(report) }).toEqual({
      slowOrFailedDuringOutage: 0,
      missingRetryAfter: 0,
      ...CLEAN,
    });
  });
});
