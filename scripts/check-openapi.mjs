// Checks the exported OpenAPI documents, one per API version (run `npm run docs:export` first;
// `npm run docs:check` does both): for each, 1. validation against the OpenAPI 3.0 schema and the
// parser's extra checks (@readme/openapi-parser); 2. `spectral lint` with .spectral.yaml
// (spectral:oas + the OWASP ruleset), failing on any error. Without arguments it checks
// openapi.v1.json and openapi.v2.json in the repository root, and that openapi.json (the newest,
// as served at /docs/openapi.json) equals the newest of them. Prints a summary line per step and
// document; exit status 1 on a failure.
// Usage: node scripts/check-openapi.mjs [path/to/openapi.v1.json path/to/openapi.v2.json ...]
import { compileErrors, validate } from '@readme/openapi-parser';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const defaults = process.argv.length <= 2;
const files = (defaults ? ['openapi.v1.json', 'openapi.v2.json'].map((name) => path.join(root, name)) : process.argv.slice(2)).map((file) =>
  path.resolve(file),
);
for (const file of files) {
  if (!existsSync(file)) {
    console.error(`check-openapi: ${path.relative(process.cwd(), file)} is missing; run npm run docs:export first`);
    process.exit(1);
  }
}
const SEVERITIES = ['error', 'warning', 'info', 'hint'];
let failed = false;

if (defaults) {
  const newest = files[files.length - 1];
  const served = path.join(root, 'openapi.json');
  if (!existsSync(served) || readFileSync(served, 'utf8') !== readFileSync(newest, 'utf8')) {
    console.error(`check-openapi: openapi.json is not the newest version's document (${path.basename(newest)})`);
    failed = true;
  }
}
for (const file of files) await check(file);
process.exit(failed ? 1 : 0);

/** Validates and lints one document; sets `failed` on a problem. */
async function check(file) {
  console.log(`== ${path.relative(process.cwd(), file)}`);
  // 1. OpenAPI 3.0 schema validation
  const document = JSON.parse(readFileSync(file, 'utf8'));
  if (!/^3\.0\.\d+$/.test(document.openapi ?? '')) {
    console.error(`openapi-parser: expected an OpenAPI 3.0.x document, got openapi: ${JSON.stringify(document.openapi)}`);
    failed = true;
  }
  const result = await validate(structuredClone(document));
  if (result.valid) {
    console.log(
      `openapi-parser: valid ${result.specification} ${document.openapi} document, info.version ${document.info?.version} (${result.warnings.length} warnings)`,
    );
    if (result.warnings.length > 0) console.log(compileErrors(result));
  } else {
    console.error(compileErrors(result));
    console.error(`openapi-parser: INVALID (${result.errors.length + (result.additionalErrors ?? 0)} errors)`);
    failed = true;
  }

  // 2. Spectral: spectral:oas + OWASP, zero errors allowed
  const spectral = spawnSync(
    path.join(root, 'node_modules', '.bin', 'spectral'),
    ['lint', path.relative(root, file), '--ruleset', '.spectral.yaml', '--fail-severity', 'error', '--format', 'json', '--quiet'],
    { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  let diagnostics;
  try {
    diagnostics = JSON.parse(spectral.stdout || '[]');
  } catch {
    console.error(spectral.stdout, spectral.stderr);
    console.error(`spectral: could not run (exit status ${spectral.status})`);
    process.exit(1);
  }
  const counts = { error: 0, warning: 0, info: 0, hint: 0 };
  const byRule = new Map();
  for (const d of diagnostics) {
    const severity = SEVERITIES[d.severity];
    counts[severity] += 1;
    const key = `${severity} ${d.code}`;
    byRule.set(key, (byRule.get(key) ?? 0) + 1);
    if (d.severity === 0) console.error(`  error ${d.code} at ${d.path.join('.')}: ${d.message}`);
  }
  for (const [key, count] of [...byRule].sort()) console.log(`  ${key}: ${count}`);
  console.log(`spectral: ${counts.error} errors, ${counts.warning} warnings, ${counts.info} infos, ${counts.hint} hints`);
  if (counts.error > 0 || spectral.status !== 0) failed = true;
}
