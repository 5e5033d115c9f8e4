import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { chromium, type Browser, type Page } from 'playwright-core';
import { pkce, registerClient, type RegisteredClient } from './factories/oauth.factory.js';
import { createUser, DEFAULT_PASSWORD, type CreatedUser } from './factories/user.factory.js';
import { CHROMIUM_PATH, describeWithBrowser } from './setup/chromium.js';
import { createTestApp } from './setup/test-app.js';

const ARTIFACTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'artifacts');
const SIGN_IN_SCREENSHOT = path.join(ARTIFACTS, 'oauth-sign-in.png');
const CONSENT_SCREENSHOT = path.join(ARTIFACTS, 'oauth-consent.png');
const FAILURE_SCREENSHOT = path.join(ARTIFACTS, 'oauth-failure.png');
/** The application's redirect URI: the browser never reaches it, the test intercepts the navigation. */
const REDIRECT_URI = 'http://127.0.0.1/browser-callback';
const STEP_TIMEOUT = 20_000;

describeWithBrowser('the OAuth sign-in and consent pages in a browser (OAuth authorization code with PKCE)', () => {
  let app: NestExpressApplication;
  let baseUrl: string;
  let browser: Browser | undefined;
  let page: Page;
  let alice: CreatedUser;
  let client: RegisteredClient;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    app = await createTestApp();
    await app.listen(0, '127.0.0.1');
    baseUrl = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    const admin = await createUser(app, { role: 'admin' });
    alice = await createUser(app, { name: 'Alice' });
    client = await registerClient(app, admin, { name: 'Todo Sync', redirect_uris: [REDIRECT_URI], scopes: ['todos:read', 'todos:write'] });
    browser = await chromium.launch({
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
      timeout: 60_000,
    });
    page = await browser.newPage({ viewport: { width: 900, height: 700 } });
    page.setDefaultTimeout(STEP_TIMEOUT);
    page.on('pageerror', (error) => pageErrors.push(`pageerror: ${error.message}`));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('signs in on the form, approves on the consent page, lands on the redirect URI with code, state and iss; the code exchanges', async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    try {
      // the browser is sent back to the application: capture that navigation instead of loading it
      let callback: URL | undefined;
      await page.route(`${REDIRECT_URI}**`, async (route) => {
        callback = new URL(route.request().url());
        await route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>Todo Sync</title><p>Signed in with resource-api.</p>' });
      });
      const { verifier, challenge } = pkce();
      const state = 'browser-state-42';
      const authorize = new URL(`${baseUrl}/v1/oauth/authorize`);
      authorize.search = new URLSearchParams({
        response_type: 'code',
        client_id: client.client_id,
        redirect_uri: REDIRECT_URI,
        scope: 'todos:read todos:write',
        state,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }).toString();

      const signInPage = await page.goto(authorize.href, { waitUntil: 'load' });
      expect(signInPage?.status()).toBe(200);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await page.getByLabel('Username').fill(alice.user.username);
      await page.getByLabel('Password').fill(DEFAULT_PASSWORD);
      await page.screenshot({ path: SIGN_IN_SCREENSHOT, fullPage: true });
      await page.getByRole('button', { name: 'Sign in' }).click();

      await page.getByRole('heading', { name: 'Authorize Todo Sync' }).waitFor();
      expect(page.url()).toBe(authorize.href);
      const text = await page.locator('body').innerText();
      expect(text).toContain(alice.user.username);
      expect(text).toContain('todos:read');
      expect(text).toContain('todos:write');
      // the user keeps only read access
      await page.getByRole('checkbox', { name: /todos:write/ }).uncheck();
      await page.screenshot({ path: CONSENT_SCREENSHOT, fullPage: true });
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.waitForURL(`${REDIRECT_URI}**`);

      expect(callback).toBeDefined();
      const params = Object.fromEntries((callback as URL).searchParams);
      expect(params).toEqual({ code: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), state, iss: baseUrl });
      const exchanged = await fetch(`${baseUrl}/v1/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: params.code,
          code_verifier: verifier,
          redirect_uri: REDIRECT_URI,
          client_id: client.client_id,
        }),
      });
      expect(exchanged.status).toBe(200);
      expect(((await exchanged.json()) as { scope: string }).scope).toBe('todos:read');
      expect(pageErrors).toEqual([]);
      expect(existsSync(SIGN_IN_SCREENSHOT) && existsSync(CONSENT_SCREENSHOT)).toBe(true);
    } catch (error) {
      await page.screenshot({ path: FAILURE_SCREENSHOT, fullPage: true }).catch(() => undefined);
      if (error instanceof Error)
        error.message = `${error.message}\n(page errors: ${JSON.stringify(pageErrors)}; screenshot: ${path.relative(process.cwd(), FAILURE_SCREENSHOT)})`;
      throw error;
    }
  }, 120_000);
});
