/**
 * `npm run bench:metrics` — what the Prometheus metrics cost: the same build with METRICS=false
 * (no middleware, no database hooks, no runtime sampling, no /metrics) against METRICS=true (the
 * default), scraped like Prometheus would (`GET /metrics` with METRICS_TOKEN every --scrape
 * seconds) during the measurement.
 *
 * The measurement is bench/lib/off-on.mjs's (interleaved rounds on `GET /v1/articles` page 1, a
 * list, and `POST /v1/todos`, a create: req/s, p99 latency, server CPU per request, peak RSS). Prints a markdown table with the machine's load average before and after, and writes it
 * to bench/results/<date>-metrics-<commit>.md (unless --no-save). On a machine shared with other
 * work the figures are upper bounds of the cost.
 *
 * Options: --db sqlite|postgres (default sqlite) --size 10k --rounds 3 --duration 8 --warmup 3
 *          --connections 50 --scrape 5 --save true|false
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { measureOffOn, OFF_ON_TABLE_HEADER, parseOffOnOptions } from './lib/off-on.mjs';
import { ROOT } from './lib/seed.mjs';

const options = parseOffOnOptions({ scrape: 5, save: 'true' }, 'bench/metrics-cost.mjs');
const METRICS_TOKEN = randomBytes(24).toString('base64url');

/** Scrapes of the `on` service during the rounds, and their failures. */
const scrapes = { done: 0, failed: 0, bytes: 0 };

/** Scrapes `service` every --scrape seconds until the returned function is called (the `on` service only). */
function scraper(service) {
  if (service.mode !== 'on' || !(options.scrape > 0)) return () => undefined;
  const timer = setInterval(async () => {
    try {
      const res = await fetch(`${service.base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
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

const loadBefore = os.loadavg();
const { lines, rss, failed, cpus } = await measureOffOn({
  name: 'metrics',
  options,
  modes: { off: { METRICS: 'false' }, on: { METRICS: 'true', METRICS_TOKEN } },
  duringRound: scraper,
});
const loadAfter = os.loadavg();
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
const report = [
  `# Metrics cost (${new Date().toISOString().slice(0, 16)}Z, commit ${commit})`,
  '',
  `METRICS=false vs METRICS=true (${options.db} ${options.size} articles; ${options.connections} connections, ${options.rounds} interleaved rounds × ${options.duration} s, medians; on: scraped every ${options.scrape} s with the token — ${scrapes.done} scrapes, ${scrapes.failed} failed, ${(scrapes.bytes / Math.max(1, scrapes.done) / 1024).toFixed(1)} KiB each). Node ${process.version}, ${cpus} CPUs (services on core 0, autocannon on core ${cpus > 1 ? 1 : 0}).`,
  '',
  ...OFF_ON_TABLE_HEADER,
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
