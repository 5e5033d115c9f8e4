import { afterAll, describe, expect, it } from '@jest/globals';
import { existsSync, rmSync } from 'node:fs';
import { PGBOUNCER_PATH, startPgBouncer } from '../setup/pgbouncer.js';
import { loggedErrors, PgCluster, scratchDir, startFaultServer } from './infra.js';
import { CLEAN, LOAD_AFTER_MS, LOAD_BEFORE_MS, Scenario, sleep, WRITERS } from './scenario.js';

/** How long PostgreSQL stays down (ms from the stop command). */
const OUTAGE_MS = 6_000;
/** The longest a request may wait for its 503 once the outage is known (ms): "within about 2 s". */
const ANSWER_WITHIN_MS = 2_500;

/** PgBouncer is required where CI installed it (REQUIRE_PGBOUNCER=1), else its case is skipped with a word. */
const havePgBouncer = existsSync(PGBOUNCER_PATH);
if (!havePgBouncer && process.env.REQUIRE_PGBOUNCER === '1') {
  throw new Error(`REQUIRE_PGBOUNCER=1: no PgBouncer at ${PGBOUNCER_PATH} (bash scripts/ci-install.sh pgbouncer)`);
}
const itWithPgBouncer = havePgBouncer ? it : it.skip;

/**
 * Fault 4: the PostgreSQL server (a cluster of the test's own) stopped (`-m fast`) under load and
 * started again after {@link OUTAGE_MS}, the service left running — once connected to it directly,
 * once through PgBouncer in transaction mode with prepared statements off
 * (docs/operations.md#behind-a-connection-pooler), where PgBouncer keeps the service's connections
 * open and the server's go away behind it. Clients must get 503 with Retry-After within 2 s of the
 * stop, every request sent more than 2 s into the outage must be answered 503 within about 2 s
 * (never hang), creates must succeed again once the database is back without restarting the
 * service, and the audit must be clean.
 */
describe('fault: PostgreSQL stopped and started under load', () => {
  const cleanups: Array<() => unknown> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('503 with Retry-After within 2 s, no request hangs, writes succeed again after the restart of the database, audit clean', async () => {
    await outage('outage', false);
  });

  itWithPgBouncer(
    `through PgBouncer in transaction mode (DB_POOLER=transaction, DB_PREPARED_STATEMENTS=false): the same — 503 within 2 s, recovery without restart, audit clean${havePgBouncer ? '' : ` (skipped: no PgBouncer at ${PGBOUNCER_PATH})`}`,
    async () => {
      await outage('pooled', true);
    },
  );

  /** One outage scenario on a cluster of its own (`tag` names it), the service connected directly or through PgBouncer. */
  async function outage(tag: string, throughPgBouncer: boolean): Promise<void> {
    const cluster = await PgCluster.create(tag);
    cleanups.push(() => cluster.drop());
    const dir = scratchDir(`pg-${tag}`);
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    let databaseUrl = await cluster.createDatabase(`ra_faults_${tag}`);
    let pooler: Record<string, string> = {};
    let bouncerLog = () => '';
    if (throughPgBouncer) {
      const bouncer = await startPgBouncer({ host: '127.0.0.1', port: cluster.port, user: 'postgres' }, 8);
      cleanups.push(() => bouncer.stop());
      databaseUrl = bouncer.through(databaseUrl);
      bouncerLog = bouncer.log;
      pooler = { DB_POOLER: 'transaction', DB_PREPARED_STATEMENTS: 'false' };
    }
    const server = await startFaultServer(dir, { DATABASE_URL: databaseUrl, ...pooler });
    cleanups.push(() => server.process.kill());
    const target = { url: server.base };
    const scenario = new Scenario(`pg-${tag}`);
    cleanups.push(() => scenario.abort());
    await scenario.addWriters(WRITERS, [target]);
    scenario.start();
    await sleep(LOAD_BEFORE_MS);

    const stoppedAt = Date.now();
    await cluster.stop('fast');
    const stopTookMs = Date.now() - stoppedAt;
    await sleep(Math.max(0, stoppedAt + OUTAGE_MS - Date.now()));
    const startingAt = Date.now();
    await cluster.start();
    const backAt = Date.now();
    await sleep(LOAD_AFTER_MS);
    await scenario.stop();
    const report = await scenario.audit(target.url);

    const first503Ms = scenario.firstStatusAfter(stoppedAt);
    // sent more than 2 s into the outage, early enough to have been answered before the database came back
    const late = scenario.ledger.attempts().filter(({ attempt }) => attempt.at >= stoppedAt + 2_000 && attempt.at + ANSWER_WITHIN_MS <= startingAt);
    const notPromptly503 = late.filter(({ attempt }) => attempt.status !== 503 || attempt.ms > ANSWER_WITHIN_MS);
    const slowest = Math.max(0, ...late.map(({ attempt }) => attempt.ms));
    const missingRetryAfter = scenario.ledger.attempts().filter(({ attempt }) => attempt.status === 503 && !attempt.retryAfter).length;
    const recovered = scenario.endedAfter(backAt, (attempt, op) => op.kind === 'create-todo' && attempt.status === 201 && attempt.at >= backAt)[0];
    scenario.summary(
      report,
      {
        first503Ms,
        stopTookMs,
        lateRequests: late.length,
        lateNotPromptly503: notPromptly503.length,
        lateOutcomes: JSON.stringify(countBy(notPromptly503.map(({ attempt }) => attempt.status ?? attempt.failure))),
        slowestLateMs: slowest,
        missingRetryAfter,
        recoveredMs: recovered ? recovered.endedAt - backAt : undefined,
        pid: server.process.child.pid,
      },
      [
        ...loggedErrors(server.process.output()),
        ...(throughPgBouncer
          ? bouncerLog()
              .split('\n')
              .filter((line) => /ERROR|WARNING|FATAL/.test(line))
              .slice(-5)
          : []),
      ],
    );
    expect({
      first503Within2s: first503Ms !== undefined && first503Ms <= 2_000,
      lateRequestsSeen: late.length > 0,
      lateNotPromptly503: notPromptly503.length,
      missingRetryAfter,
      recoveredWithoutRestart: recovered !== undefined && server.process.child.exitCode === null,
      ...scenario.verdict(report),
    }).toEqual({ first503Within2s: true, lateRequestsSeen: true, lateNotPromptly503: 0, missingRetryAfter: 0, recoveredWithoutRestart: true, ...CLEAN });
  }
});

/** How often each value occurs. */
function countBy(values: unknown[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[String(value)] = (counts[String(value)] ?? 0) + 1;
  return counts;
}
