// The checked-in OpenAPI documents, openapi/v1.json and openapi/v2.json: every API change shows up
// in a diff. Exports the documents from the built application (dist/, `npm run build` first) into
// a temporary directory, with an environment of defaults only (PATH and HOME kept; DATABASE_URL,
// V1_DEPRECATED_AT, V1_SUNSET_AT and every other setting unset, so the shell or CI cannot change
// what is written), then:
//   node scripts/openapi-snapshot.mjs           compares them with openapi/v<n>.json; on a
//                                                difference prints a short unified diff per file
//                                                and the command to update, exit status 1
//   node scripts/openapi-snapshot.mjs --update  writes them to openapi/v<n>.json
// `npm run docs:snapshot` builds, then updates; scripts/ci-docs.sh runs the comparison.
// The files are the export's own bytes: JSON.stringify with 2-space indent in the key order the
// document is built in, and a trailing newline.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const snapshotDir = path.join(root, 'openapi');
const update = process.argv.includes('--update');
/** Diff lines shown per file before "… N more lines". */
const MAX_DIFF_LINES = 60;
/** Characters shown of a diff line (descriptions are long one-line strings). */
const MAX_LINE = 200;

const cli = path.join(root, 'dist', 'src', 'cli', 'export-openapi.js');
if (!existsSync(cli)) {
  console.error('openapi-snapshot: dist/src/cli/export-openapi.js is missing; run npm run build first (npm run docs:snapshot does)');
  process.exit(1);
}
const out = mkdtempSync(path.join(tmpdir(), 'openapi-snapshot-'));
const again = mkdtempSync(path.join(tmpdir(), 'openapi-snapshot-'));
try {
  process.exitCode = run();
} finally {
  rmSync(out, { recursive: true, force: true });
  rmSync(again, { recursive: true, force: true });
}

/** Runs the export CLI into `dir` with an environment of defaults only; false (reported) when it fails. */
function exportInto(dir) {
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'silent' };
  const exported = spawnSync(process.execPath, ['--enable-source-maps', cli, dir], { cwd: root, env, encoding: 'utf8' });
  if (exported.status === 0) return true;
  process.stderr.write(exported.stderr);
  console.error(`openapi-snapshot: the export failed (exit status ${exported.status})`);
  return false;
}

/**
 * Exports into `out`, then updates or compares; returns the exit status. The comparison exports
 * twice and first requires both exports to be byte-identical: a snapshot of a document that
 * changes from run to run (a date, a random value, an unstable order) would fail at random.
 */
function run() {
  if (!exportInto(out)) return 1;
  const versions = readdirSync(out)
    .map((name) => /^openapi\.v(\d+)\.json$/.exec(name)?.[1])
    .filter((version) => version !== undefined)
    .sort((a, b) => Number(a) - Number(b));
  if (versions.length === 0) {
    console.error('openapi-snapshot: the export wrote no openapi.v<n>.json');
    return 1;
  }
  if (update) {
    mkdirSync(snapshotDir, { recursive: true });
    for (const version of versions) writeFileSync(path.join(snapshotDir, `v${version}.json`), readFileSync(path.join(out, `openapi.v${version}.json`)));
    const stale = readdirSync(snapshotDir).filter((name) => /^v\d+\.json$/.test(name) && !versions.includes(name.slice(1, -5)));
    for (const name of stale) rmSync(path.join(snapshotDir, name));
    console.log(
      `openapi-snapshot: wrote ${versions.map((v) => `openapi/v${v}.json`).join(', ')}${stale.length ? `; removed ${stale.map((n) => `openapi/${n}`).join(', ')}` : ''}`,
    );
    return 0;
  }
  if (!exportInto(again)) return 1;
  const unstable = readdirSync(out).filter(
    (name) => !existsSync(path.join(again, name)) || !readFileSync(path.join(out, name)).equals(readFileSync(path.join(again, name))),
  );
  if (unstable.length > 0) {
    console.error(
      `openapi-snapshot: two exports of the same code differ (${unstable.join(', ')}): the export is not deterministic, so it cannot be checked in`,
    );
    return 1;
  }
  let differs = false;
  const checkedIn = existsSync(snapshotDir) ? readdirSync(snapshotDir).filter((name) => /^v\d+\.json$/.test(name)) : [];
  for (const name of checkedIn) {
    if (!versions.includes(name.slice(1, -5))) {
      console.error(`openapi-snapshot: openapi/${name} is checked in, but the application has no such API version any more`);
      differs = true;
    }
  }
  for (const version of versions) {
    const snapshot = path.join(snapshotDir, `v${version}.json`);
    const fresh = path.join(out, `openapi.v${version}.json`);
    if (!existsSync(snapshot)) {
      console.error(`openapi-snapshot: openapi/v${version}.json is not checked in`);
      differs = true;
      continue;
    }
    if (readFileSync(snapshot).equals(readFileSync(fresh))) {
      console.log(`openapi-snapshot: openapi/v${version}.json is up to date`);
      continue;
    }
    differs = true;
    console.error(`openapi-snapshot: openapi/v${version}.json differs from the export (- checked in, + exported):`);
    const diff = spawnSync('git', ['diff', '--no-index', '--no-color', '--unified=2', '--', snapshot, fresh], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
    const lines = (diff.stdout || diff.stderr || '').split('\n').filter((line) => !/^(diff --git|index |--- |\+\+\+ )/.test(line));
    console.error(
      lines
        .slice(0, MAX_DIFF_LINES)
        .map((line) => (line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)}…` : line))
        .join('\n'),
    );
    if (lines.length > MAX_DIFF_LINES) console.error(`… ${lines.length - MAX_DIFF_LINES} more diff lines`);
  }
  if (differs) {
    console.error(
      'openapi-snapshot: the checked-in OpenAPI documents are not what the code exports. If the change is intended, run\n  npm run docs:snapshot\nand commit openapi/.',
    );
    return 1;
  }
  return 0;
}
