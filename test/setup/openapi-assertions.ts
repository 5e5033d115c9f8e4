import { afterAll, afterEach, expect } from '@jest/globals';
import { appendFileSync } from 'node:fs';
import { violationStore } from './openapi-validation.js';

/**
 * Runs in every e2e file (setupFilesAfterEnv): a response that broke the OpenAPI document during a
 * test — or during the hooks before it — fails that test, listing each response and its problems.
 * Responses in `afterAll` hooks fail the file.
 */
function throwViolations(when: string): void {
  const store = violationStore();
  const violations = store.violations.splice(0);
  if (violations.length === 0) return;
  const lines = violations.map((v) => `  ${v.method} ${v.path} → ${v.status}\n${v.problems.map((problem) => `      - ${problem}`).join('\n')}`);
  const error = new Error(
    `${violations.length} response(s) ${when} are not true to the OpenAPI document (test/setup/openapi-validation.ts):\n${lines.join('\n')}`,
  );
  error.stack = error.message; // the stack would only point here, not at the request
  throw error;
}

afterEach(() => throwViolations('in this test'));

afterAll(() => {
  // OPENAPI_VALIDATION_REPORT=<file>: append how many responses this file validated
  const report = process.env.OPENAPI_VALIDATION_REPORT;
  if (report) appendFileSync(report, `${expect.getState().testPath ?? 'unknown'} ${violationStore().validated}\n`);
  throwViolations('after the last test');
});
