/**
 * `npm run bench:ab -- <base-ref> [<ref>…] [options]` — A/B of builds of this repository, measured
 * in the same minutes: is a change slower than its base?
 *
 * Each ref (a commit, branch or tag; `.` is the working tree as it is) is checked out in a
 * detached worktree under bench/.cache/ab/<commit>, given this checkout's node_modules (hard-linked
 * when its package-lock.json is the same, else `npm ci` there) and built (`npm run build`). The
 * SAME harness measures every build: this checkout's bench/profile.mjs and bench/lib are copied
 * into each worktree, so only the service differs. Then, per database and endpoint, `pairs` rounds
 * in which every build serves `node bench/profile.mjs --noprof` (production mode, logs at info,
 * pinned to core 0, autocannon with 50 connections on core 1) for `seconds`; the order of the builds
 * alternates from round to round (ABBA…), so a drift of the machine's load hits them alike.
 *
 * Reported per endpoint and build: the rounds' req/s, the median req/s and the median CPU µs per
 * request (the service process, plus its PostgreSQL backends), and both ratios against the first
 * ref. The verdict per endpoint is "slower" only when the median CPU per request is more than
 * `--tolerance` (default 10 %) above the base's AND the req/s median is below the base's by as
 * much; else "same" or "faster". Writes bench/results/<date>-ab-<commits>.md (unless --no-save).
 *
 * Options: --db sqlite,postgres  --endpoints get,post,list  --pairs 4  --seconds 6  --size 10k
 *          --tolerance 0.10  --no-save
 * Exit status: 1 when a build does not build or a run fails (non-2xx answers included); the
 * verdict itself does not set the exit status (timings are noisy on a shared machine: read them).
 *
 * Builds from before the resource registry run the same harness: bench/lib/migrate.mjs tells the
 * two kinds of build apart by the exports of their dist/ (see its header). Each build seeds its own
 * PostgreSQL template and run database, under `<BENCH_PG_PREFIX>_ab<n>` (n: the ref's position,
 * 0 for the base): the seeded template is keyed by the build's migrations and data source
 * (bench/lib/seed.mjs, seedKey), which differ between builds, and a template of another key under
 * the same prefix is dropped as stale, so with one prefix the builds would drop each other's
 * template and re-seed at every round. The SQLite files are per build already (each worktree's
 * bench/.cache).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CACHE_DIR, PG_PREFIX, ROOT } from './lib/seed.mjs';

const refs = [];
const options = { db: 'sqlite,postgres', endpoints: 'get,post,list', pairs: 4, seconds: 6, size: '10k', tolerance: 0.1, save: true };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const arg = argv[i];
  if (!arg.startsWith('--')) refs.push(arg);
  else if (arg === '--no-save') options.save = false;
  else {
    const [name, inline] = arg.slice(2).split(/=(.*)/s);
    if (!(name in options)) throw new Error(`unknown option ${arg} (see bench/ab.mjs)`);
    const value = inline ?? argv[++i];
    options[name] = typeof options[name] === 'number' ? Number(value) : value;
  }
}
if (refs.length === 0) throw new Error('usage: npm run bench:ab -- <base-ref> [<ref>…]   (a ref of `.` is the working tree)');
if (refs.length === 1) refs.push('.');

const git = (...args) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
const lockOf = (dir) => readFileSync(path.join(dir, 'package-lock.json'), 'utf8');

/** Checks out and builds the `index`th ref; returns { ref, commit, dir, pgPrefix } (pgPrefix: its PostgreSQL databases', see the header). */
function prepare(ref, index) {
  const pgPrefix = `${PG_PREFIX}_ab${index}`;
  if (ref === '.') {
    execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    return { ref: 'working tree', commit: `${git('rev-parse', '--short', 'HEAD')}+`, dir: ROOT, pgPrefix };
  }
  const commit = git('rev-parse', '--short', `${ref}^{commit}`);
  const dir = path.join(CACHE_DIR, 'ab', commit);
  if (!existsSync(dir)) {
    mkdirSync(path.dirname(dir), { recursive: true });
    git('worktree', 'add', '--detach', dir, commit);
  }
  if (!existsSync(path.join(dir, 'node_modules'))) {
    if (lockOf(dir) === lockOf(ROOT)) execFileSync('cp', ['-al', path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules')]);
    else execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  cpSync(path.join(ROOT, 'bench/profile.mjs'), path.join(dir, 'bench/profile.mjs'));
  cpSync(path.join(ROOT, 'bench/lib'), path.join(dir, 'bench/lib'), { recursive: true });
  console.log(`building ${ref} (${commit}) in ${path.relative(ROOT, dir)}…`);
  execFileSync('npm', ['run', 'build'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  return { ref, commit, dir, pgPrefix };
}

/** One measurement: { rps, cpu } (cpu: µs per request, service + PostgreSQL backends). */
function measure(build, db, endpoint) {
  const out = execFileSync(
    'node',
    ['bench/profile.mjs', '--noprof', '--db', db, '--size', options.size, '--endpoint', endpoint, '--seconds', String(options.seconds)],
    { cwd: build.dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, BENCH_PG_PREFIX: build.pgPrefix } },
  );
  const line = out.trim().split('\n').pop();
  const m = line.match(/: (\d+) req\/s, non2xx (\d+), CPU (\d+) µs\/req \(process\)(?: \+ (\d+))?/);
  if (!m) throw new Error(`unexpected output of bench/profile.mjs in ${build.dir}: ${line}`);
  if (Number(m[2]) !== 0) throw new Error(`${build.ref}: ${m[2]} non-2xx answers on ${db} ${endpoint}`);
  return { rps: Number(m[1]), cpu: Number(m[3]) + Number(m[4] ?? 0) };
}

const median = (values) => {
  const s = [...values].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};

/** "slower" | "same" | "faster" of a build against the base, from the medians (see the header). */
function verdict(base, other, tolerance) {
  const cpu = other.cpu / base.cpu;
  const rps = other.rps / base.rps;
  if (cpu > 1 + tolerance && rps < 1 - tolerance) return 'slower';
  if (cpu < 1 - tolerance && rps > 1 + tolerance) return 'faster';
  return 'same';
}

const builds = refs.map((ref, index) => prepare(ref, index));
const loadAtStart = os
  .loadavg()
  .map((l) => l.toFixed(2))
  .join(' ');
const rows = [];
for (const db of options.db.split(',')) {
  for (const endpoint of options.endpoints.split(',')) {
    const runs = builds.map(() => []);
    for (let pair = 0; pair < options.pairs; pair++) {
      const order = pair % 2 === 0 ? builds.map((_, i) => i) : builds.map((_, i) => builds.length - 1 - i);
      for (const i of order) runs[i].push(measure(builds[i], db, endpoint));
    }
    const medians = runs.map((r) => ({ rps: median(r.map((x) => x.rps)), cpu: median(r.map((x) => x.cpu)) }));
    builds.forEach((build, i) => {
      const row = { db, endpoint, build: `${build.ref} (${build.commit})`, rounds: runs[i].map((x) => x.rps).join(', '), ...medians[i] };
      if (i > 0)
        Object.assign(row, {
          rpsRatio: medians[i].rps / medians[0].rps,
          cpuRatio: medians[i].cpu / medians[0].cpu,
          verdict: verdict(medians[0], medians[i], options.tolerance),
        });
      rows.push(row);
      console.log(`${db} ${endpoint} ${row.build}: ${row.rounds} req/s; median ${row.rps} req/s, ${row.cpu} µs/req${row.verdict ? ` → ${row.verdict}` : ''}`);
    });
  }
}
const loadAtEnd = os
  .loadavg()
  .map((l) => l.toFixed(2))
  .join(' ');

const fmt = (n) => Math.round(n).toLocaleString('en-US');
const md = [
  `# A/B ${builds.map((b) => `${b.ref} (${b.commit})`).join(' vs ')} — ${new Date().toISOString()}`,
  '',
  `Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}; load average ${loadAtStart} at the start, ${loadAtEnd} at the end. ${options.size} articles; per endpoint ${options.pairs} rounds of ${options.seconds} s per build, builds alternating (ABBA); \`node bench/profile.mjs --noprof\` with this harness in every build (service pinned to core 0, autocannon 50 connections on core 1). CPU: µs per request of the service process plus its PostgreSQL backends. Verdict "slower" only when CPU/request is > ${Math.round(options.tolerance * 100)} % above the base's and req/s > ${Math.round(options.tolerance * 100)} % below.`,
  '',
  '| database | endpoint | build | req/s per round | median req/s | median CPU µs/req | req/s vs base | CPU vs base | verdict |',
  '|---|---|---|---|---:|---:|---:|---:|---|',
  ...rows.map(
    (r) =>
      `| ${r.db} | ${r.endpoint} | ${r.build} | ${r.rounds} | ${fmt(r.rps)} | ${fmt(r.cpu)} | ${r.rpsRatio ? `${r.rpsRatio.toFixed(2)}×` : 'base'} | ${r.cpuRatio ? `${r.cpuRatio.toFixed(2)}×` : 'base'} | ${r.verdict ?? ''} |`,
  ),
  '',
  'Endpoints: get = `GET /v1/articles/{id}`, post = `POST /v1/todos`, list = `GET /v1/articles?status=published&sort=-created_at&page=1&size=20` (see bench/profile.mjs).',
  '',
].join('\n');
console.log(`\n${md}`);
if (options.save) {
  const file = path.join(ROOT, 'bench/results', `${new Date().toISOString().slice(0, 10)}-ab-${builds.map((b) => b.commit).join('-')}.md`);
  writeFileSync(file, md);
  console.log(`written ${path.relative(ROOT, file)}`);
}
