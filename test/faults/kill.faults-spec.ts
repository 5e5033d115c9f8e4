import { afterAll, describe, expect, it } from '@jest/globals';
import { rmSync } from 'node:fs';
import { type FaultServer, loggedErrors, PgCluster, RedisServer, scratchDir, startFaultServer } from './infra.js';
import { CLEAN, LOAD_AFTER_MS, LOAD_BEFORE_MS, Scenario, sleep, WRITERS } from './scenario.js';

/** How often the SQLite process is killed (and restarted) in its scenario. */
const KILLS = 3;

/**
 * Faults 2 and 3: SIGKILL under load. The requests in flight lose their connection (unavoidable);
 * the writers retry them with the same Idempotency-Key and body, and the audit must find every
 * acknowledged write once — a create committed just before the kill, whose answer never came,
 * must not be created a second time by its retry.
 * - the one SQLite process, killed three times 2 s apart, each time restarted on the same file and port;
 * - one of two instances on PostgreSQL + Redis, its writers' retries going to the other one.
 */
describe('fault: SIGKILL under load', () => {
  const cleanups: Array<() => unknown> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('SQLite: the process killed and restarted on the same file (three times); keyed retries create nothing twice, lose nothing', async () => {
    const dir = scratchDir('kill-sqlite');
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    let server: FaultServer = await startFaultServer(dir, {});
    cleanups.push(() => server.process.kill());
    const first = server;
    const target = { url: first.base };
    const scenario = new Scenario('kill-sqlite');
    cleanups.push(() => scenario.abort());
    await scenario.addWriters(WRITERS, [target]);
    scenario.start();
    await sleep(LOAD_BEFORE_MS);

    // three kills, each in the middle of the load: more chances to catch a create committed but not answered
    const outputs: string[] = [];
    const killedAt: number[] = [];
    const downMs: number[] = [];
    for (let round = 0; round < KILLS; round += 1) {
      killedAt.push(Date.now());
      await server.process.kill();
      outputs.push(server.process.output());
      server = await startFaultServer(dir, { PORT: String(first.port) });
      downMs.push(Date.now() - killedAt[round]);
      await sleep(round === KILLS - 1 ? LOAD_AFTER_MS : 2_000);
    }
    await scenario.stop();
    const report = await scenario.audit(target.url);
    const cutAtKill = scenario.ledger.attempts().filter(({ attempt }) => attempt.failure === 'cut').length;
    scenario.summary(report, { kills: KILLS, cutAtKill, downMs: downMs.join('/') }, loggedErrors(outputs.join('') + server.process.output()));
    expect(scenario.verdict(report)).toEqual(CLEAN);
  });

  it('PostgreSQL + Redis, two instances: one killed, its writers retry on the other; nothing twice, nothing lost', async () => {
    const cluster = await PgCluster.create('kill');
    cleanups.push(() => cluster.drop());
    const redis = await RedisServer.create();
    cleanups.push(() => redis.stop());
    const env = { DATABASE_URL: await cluster.createDatabase('ra_faults_kill'), REDIS_URL: redis.url(8) };
    const dir = scratchDir('kill-pg');
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const [a, b] = await Promise.all([startFaultServer(dir, env), startFaultServer(dir, env)]);
    cleanups.push(
      () => a.process.kill(),
      () => b.process.kill(),
    );
    const toA = { url: a.base };
    const toB = { url: b.base };
    const scenario = new Scenario('kill-two-instances');
    cleanups.push(() => scenario.abort());
    await scenario.addWriters(WRITERS, [toA, toB]);
    scenario.start();
    await sleep(LOAD_BEFORE_MS);

    const killedAt = Date.now();
    await a.process.kill();
    // the load balancer's part: A's writers go to B from their next try on
    toA.url = b.base;
    await sleep(LOAD_AFTER_MS);
    // a key whose first request died with A stays locked in Redis for up to 60 s (409 until then): let the retries outlast it
    await scenario.stop(75_000);
    const drainedMs = Date.now() - killedAt;
    const report = await scenario.audit(b.base);
    const inFlight = scenario.ledger
      .attempts()
      .filter(({ attempt }) => attempt.failure === 'cut' && attempt.target === a.base && attempt.at <= killedAt).length;
    const conflicts = scenario.ledger.attempts().filter(({ attempt }) => attempt.status === 409).length;
    scenario.summary(report, { cutAtKill: inFlight, conflict409: conflicts, untilDrainedMs: drainedMs }, loggedErrors(a.process.output() + b.process.output()));
    expect(scenario.verdict(report)).toEqual(CLEAN);
  });
});
