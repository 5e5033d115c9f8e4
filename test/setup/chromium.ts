import { existsSync } from 'node:fs';

/** Where the browser e2e tests look for Chromium: `CHROMIUM_PATH`, else Debian's `/usr/bin/chromium`. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** True when a Chromium executable is at {@link CHROMIUM_PATH}. */
export const hasChromium = existsSync(CHROMIUM_PATH);

/**
 * `describe` when Chromium is there, else `describe.skip`: `npm test` installs nothing on the
 * system, so without a browser these tests are skipped (the global setup prints one line saying
 * how to install it; CI sets REQUIRE_BROWSER=1, which turns a missing browser into a failure).
 */
export function describeWithBrowser(name: string, body: () => void): void {
  // jest's global `describe`, looked up at call time so that the global setup can import this file
  (hasChromium ? describe : describe.skip)(name, body);
}

/** The line printed once per run when the browser tests are skipped. */
export function missingChromiumMessage(): string {
  return `browser e2e tests skipped: no Chromium at ${CHROMIUM_PATH}. Install it (Debian/Ubuntu: sudo apt-get install -y chromium) or set CHROMIUM_PATH to a Chromium/Chrome executable.`;
}
