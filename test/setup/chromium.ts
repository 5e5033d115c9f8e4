import { existsSync } from 'node:fs';

/**
 * The Chromium executable of the browser e2e tests: `CHROMIUM_PATH`, which the global setup sets
 * to `/usr/bin/chromium` (Debian's) when it is unset.
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/**
 * `describe` when Chromium is there, else `describe.skip`: `npm test` installs nothing on the
 * system, so without a browser these tests are skipped (the global setup prints one line saying
 * how to install it; CI sets REQUIRE_BROWSER=1, which turns a missing browser into a failure).
 */
export function describeWithBrowser(name: string, body: () => void): void {
  (existsSync(CHROMIUM_PATH) ? describe : describe.skip)(name, body);
}
