import { afterAll, describe, expect, it } from '@jest/globals';
import { rmSync } from 'node:fs';
import { type FaultServer, loggedErrors, PgCluster, probeUntilRefused, scratchDir, startFaultServer } from './infra.js';
import { CLEAN, LOAD_AFTER_MS, LOAD_BEFORE_MS, Scenario, sleep, WRITERS } from './scenario.js';

/**
 * Fault 1: SIGTERM in the middle of the load, on SQLite and on PostgreSQL, then a new process on the
 * same database (same port) while the writers retry. A request that went out while the server still
 * accepted connections must be answered: no connection of it closed without an answer. The
 * process exits 0, and the audit finds every acknowledged write once and nothing else.
 */
describe('fault: SIGTERM under load, then a restart on the same database', () => {
  const cleanups: Array<() => unknown> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  const sigterm = async (name: string, dir: string, env: Record<string, string>) => {
    let server: FaultServer = await startFaultServer(dir, env);
    cleanups.push(() => server.process.kill());
    const first = server;
    const target = { url: first.base };
    const scenario = new Scenario(name);
    cleanups.push(() => scenario.abort());
    await scenario.addWriters(WRITERS, [target]);
    scenario.start();
    await sleep(LOAD_BEFORE_MS);

    const signalledAt = Date.now();
    first.process.child.kill('SIGTERM');
    const probe = await probeUntilRefused(first.port);
    const exit = await first.process.exited;
    const exitedAt = Date.now();
    server = await startFaultServer(dir, { ...env, PORT: String(first.port) });
    const restartedAt = Date.now();
    await sleep(LOAD_AFTER_MS);
    await scenario.stop();
    const report = await scenario.audit(target.url);

    const cuts = scenario.ledger.attempts().filter(({ attempt }) => attempt.failure === 'cut' && attempt.at < exitedAt);
    // sent while the server still accepted connections (the last probe accepted), closed without an answer
    const cutBeforeStop = cuts.filter(({ attempt }) => attempt.sentAt !== undefined && attempt.sentAt <= probe.lastAcceptedAt);
    scenario.summary(
      report,
      {
        cutBeforeStop: cutBeforeStop.length,
        cutOnReusedConnection: cutBeforeStop.filter(({ attempt }) => attempt.reused).length,
        stopListeningMs: probe.firstRefusedAt - signalledAt,
        exitMs: exitedAt - signalledAt,
        downMs: restartedAt - probe.firstRefusedAt,
        exit: `${exit.code}/${exit.signal}`,
      },
      loggedErrors(first.process.output() + server.process.output()),
    );
    expect({ exit, cutBeforeStop: cutBeforeStop.length, ...scenario.verdict(report) }).toEqual({ exit: { code: 0, signal: null }, cutBeforeStop: 0, ...CLEAN });
  };

  it('SQLite: no request sent before the listening socket closed loses its answer; every acknowledged write read back once', async () => {
    const dir = scratchDir('sigterm-sqlite');
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    await sigterm('sigterm-sqlite', dir, {});
  });

  it('PostgreSQL: the same', async () => {
    const cluster = await PgCluster.create('sigterm');
    cleanups.push(() => cluster.drop());
    const url = await cluster.createDatabase('ra_faults_sigterm');
    const dir = scratchDir('sigterm-pg');
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    await sigterm('sigterm-pg', dir, { DATABASE_URL: url });
  });
});
