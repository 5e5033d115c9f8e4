import { existsSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Runs once before all e2e files (in jest's own process, so it imports nothing of the project):
 * picks the database — DATABASE_URL when set (PostgreSQL in CI: give it a fresh database), else a
 * SQLite file of this run, deleted first — and exports it to the test files. The first
 * application booted applies the migrations; each file then starts from empty tables.
 * Without Chromium (CHROMIUM_PATH, default /usr/bin/chromium) the browser tests are skipped with
 * one printed line; with REQUIRE_BROWSER=1 (CI) a missing browser fails the run instead.
 */
export default function globalSetup(): void {
  const chromium = (process.env.CHROMIUM_PATH ||= '/usr/bin/chromium');
  if (!existsSync(chromium)) {
    const message = `browser e2e tests skipped: no Chromium at ${chromium}. Install it (Debian/Ubuntu: sudo apt-get install -y chromium) or set CHROMIUM_PATH to a Chromium or Chrome executable.`;
    if (process.env.REQUIRE_BROWSER === '1') throw new Error(`REQUIRE_BROWSER=1: ${message}`);
    process.stdout.write(`\n${message}\n`);
  }
  if (!process.env.DATABASE_URL) {
    const file = path.join(os.tmpdir(), `resource-api-e2e-${process.pid}.sqlite`);
    for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
    process.env.DATABASE_URL = `sqlite:${file}`;
  }
}
