/**
 * `npm run bench:tracing` — what OpenTelemetry tracing costs: the service with tracing off (no
 * OTEL_* variables: the SDK is not loaded) against the same build with tracing on, exporting every
 * span (OTLP http/protobuf, the SDK's default batching) to a local sink in this process that
 * accepts and discards them.
 *
 * The measurement is bench/lib/off-on.mjs's (interleaved rounds on `GET /v1/articles` page 1 and
 * `POST /v1/todos`: req/s, p99 latency, server CPU per request, peak RSS); then start-up (spawn to
 * the first 200 of /health/ready), off and on. Prints a markdown table; writes nothing.
 *
 * Options: --db sqlite|postgres (default sqlite) --size 10k --rounds 3 --duration 8 --warmup 3
 *          --connections 50 --startups 5
 */
import http from 'node:http';
import path from 'node:path';
import { measureOffOn, median, OFF_ON_TABLE_HEADER, parseOffOnOptions, SERVER_CORE } from './lib/off-on.mjs';
import { freePort, spawnNode, stop, waitReady } from './lib/proc.mjs';
import { CACHE_DIR } from './lib/seed.mjs';

const options = parseOffOnOptions({ startups: 5 }, 'bench/tracing.mjs');

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

const startups = { off: [], on: [] };
/** Start-up of each mode, alternating: spawn to the first 200 of /health/ready (ms). */
async function timeStartups({ databaseUrl, env }) {
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
}

try {
  const { lines, rss, failed } = await measureOffOn({
    name: 'tracing',
    options,
    modes: { off: {}, on: { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: SINK } },
    afterServices: timeStartups,
  });
  console.log(
    [
      '',
      `Tracing off vs on (${options.db} ${options.size} articles; ${options.connections} connections, ${options.rounds} interleaved rounds × ${options.duration} s, medians; on: every span exported, OTLP http/protobuf to a local sink — ${sink.requests} exports, ${(sink.bytes / 2 ** 20).toFixed(1)} MiB):`,
      '',
      ...OFF_ON_TABLE_HEADER,
      ...lines,
      '',
      `Peak RSS under load: off ${rss[0]} MiB, on ${rss[1]} MiB. Start-up to the first ready 200 (median of ${options.startups}): off ${median(startups.off).toFixed(0)} ms, on ${median(startups.on).toFixed(0)} ms.`,
      failed ? `\n${failed} non-2xx answers or errors.` : '',
    ].join('\n'),
  );
  if (failed) process.exitCode = 1;
} finally {
  sinkServer.close();
}
