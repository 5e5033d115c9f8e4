import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Runs once before the fault suite (in jest's own process): builds the service (`npm run build` →
 * dist/), which every scenario starts as `node dist/src/main.js`.
 */
export default function globalSetup(): void {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  process.stdout.write('\nfault suite: npm run build\n');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
}
