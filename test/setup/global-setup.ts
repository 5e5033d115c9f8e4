import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Runs once before all e2e files (in jest's own process, so it imports nothing of the project):
 * picks the database — DATABASE_URL when set (PostgreSQL in CI: give it a fresh database), else a
 * SQLite file of this run, deleted first — and exports it to the test files. The first
 * application booted applies the migrations; each file then starts from empty tables.
 */
export default function globalSetup(): void {
  if (!process.env.DATABASE_URL) {
    const file = path.join(os.tmpdir(), `resource-api-e2e-${process.pid}.sqlite`);
    for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
    process.env.DATABASE_URL = `sqlite:${file}`;
  }
}
