import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ARTICLES_FIELDS } from '../src/articles/articles.resource.js';
import { CHROMIUM_PATH, describeWithBrowser } from './setup/chromium.js';
import { createTestApp } from './setup/test-app.js';

const ARTIFACTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'artifacts');
const SCREENSHOT = path.join(ARTIFACTS, 'docs-try-it-out.png');
const FAILURE_SCREENSHOT = path.join(ARTIFACTS, 'docs-try-it-out-failure.png');
/** Bound for each browser action and wait; the whole test is bounded by its jest timeout. */
const STEP_TIMEOUT = 20_000;
/** The tag of the article the page lists (a second, untagged article is filtered out). */
const TAG = 'swagger-ui';

describeWithBrowser('the docs page in a browser (README.md#api-documentation-and-clients: "Try it out" works)', () => {
  let app: NestExpressApplication;
  let baseUrl: string;
  let browser: Browser | undefined;
  let page: Page;
  let token: string;
  let authorId: number;
  const title = 'Seen through Swagger UI';
  /** Errors the page reported (uncaught exceptions, console errors), for the failure message. */
  const pageErrors: string[] = [];

  /** POSTs JSON to the running server; returns status and body. */
  async function post(route: string, body: object, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
    const res = await fetch(`${baseUrl}${route}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  }

  beforeAll(async () => {
    app = await createTestApp();
    await app.listen(0, '127.0.0.1');
    baseUrl = await app.getUrl();

    const credentials = { username: 'swagger_user', password: 'correct-horse-battery' };
    const registered = await post('/v1/users', { ...credentials, name: 'Swagger User' });
    expect(registered.status).toBe(201);
    authorId = registered.body.id;
    const login = await post('/v1/login', credentials);
    expect(login.status).toBe(200);
    token = login.body.token;
    const auth = { Authorization: `Bearer ${token}` };
    expect((await post('/v1/tags', { name: TAG }, auth)).status).toBe(201);
    expect((await post('/v1/articles', { title, body: 'Listed by the docs page.', status: 'published', tags: [TAG] }, auth)).status).toBe(201);
    expect((await post('/v1/articles', { title: 'Not tagged', status: 'published' }, auth)).status).toBe(201);

    browser = await chromium.launch({
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
      timeout: 60_000,
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    page.setDefaultTimeout(STEP_TIMEOUT);
    page.on('pageerror', (error) => pageErrors.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(`console: ${message.text()}`);
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('offers both versions, authorizes with a bearer token, runs "Try it out" on GET /v2/articles (the newest) and shows the 200 with the list envelope', async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    try {
      const loaded = await page.goto(`${baseUrl}/docs`, { waitUntil: 'load' });
      expect(loaded?.status()).toBe(200);

      // the version picker offers every version's document, the newest first and selected
      const picker = page.locator('.topbar select');
      await picker.waitFor();
      const offered = await picker.locator('option').allInnerTexts();
      expect(offered).toEqual([expect.stringMatching(/^v2 \(2\.\d+\.\d+, newest\)$/), expect.stringMatching(/^v1 \(1\.\d+\.\d+\)$/)]);
      await page.locator('.info .title', { hasText: 'resource-api' }).waitFor();
      expect(await page.locator('.info .title small pre, .info .title .version').first().innerText()).toMatch(/^\s*2\.\d+\.\d+\s*$/);

      // Authorize → the `bearer` scheme → the token → Authorize → Close
      await page.locator('.scheme-container button.authorize').click();
      const dialog = page.locator('.dialog-ux .modal-ux');
      await dialog.waitFor();
      const bearerScheme = dialog.locator('.auth-container').filter({ has: page.locator('h4', { hasText: /^bearer\b/ }) });
      await bearerScheme.locator('input').fill(token);
      await bearerScheme.locator('button.authorize').click();
      await bearerScheme.locator('button', { hasText: 'Logout' }).waitFor(); // authorized
      await bearerScheme.locator('button.btn-done').click();
      await dialog.waitFor({ state: 'detached' });

      // GET /v2/articles → Try it out → Execute
      const operation = page.locator('.opblock.opblock-get').filter({ has: page.locator('.opblock-summary-path[data-path="/v2/articles"]') });
      await operation.locator('.opblock-summary').first().click();
      await operation.locator('button.try-out__btn').click();
      // Swagger UI pre-fills every parameter with its example, page/size and offset/limit alike
      // (together they are a 400), and the cursor: fill in the form the way a reader would
      const parameter = (name: string) => operation.locator(`tr[data-param-name="${name}"][data-param-in="query"]`);
      const setText = (name: string, value: string) => parameter(name).locator('input[type="text"]').fill(value);
      const setItems = async (name: string, value: string) => {
        const items = parameter(name).locator('.json-schema-form-item input');
        while ((await items.count()) > 1) await parameter(name).locator('button.json-schema-form-item-remove').last().click();
        if ((await items.count()) === 0) await parameter(name).locator('button.json-schema-form-item-add').click();
        await items.first().fill(value);
      };
      await setText('page', '1');
      await setText('size', '10');
      await setText('offset', '');
      await setText('limit', '');
      await setText('sort', '-published_at');
      await parameter('status').locator('select').selectOption(['published']);
      await setItems('author', String(authorId));
      await setItems('tag', TAG);
      await setText('fields', '');
      // the cursor and the range filters (docs/lists.md#cursor-paging, docs/lists.md#range-filters) are pre-filled with examples too: a reader clears them
      await setText('cursor', '');
      for (const field of ['published_at', 'created_at', 'updated_at']) for (const op of ['gte', 'gt', 'lte', 'lt']) await setText(`${field}[${op}]`, '');
      // and so are the search, expand and the filter operators (docs/lists.md#full-text-search-q,
      // docs/lists.md#expanding-related-resources-expand, docs/lists.md#filter-operators)
      await setText('q', '');
      await setText('expand', '');
      // (an emptied multi-select still sends `status[in]=`, a 400: the reader picks the status there too)
      await parameter('status[in]').locator('select').selectOption(['published']);
      for (const [field, { ops }] of Object.entries(ARTICLES_FIELDS.operators ?? {})) {
        for (const op of ops) {
          if (field === 'status' && op === 'in') continue;
          const row = parameter(`${field}[${op}]`);
          const select = row.locator('select');
          if ((await select.count()) > 0) await select.selectOption((await select.getAttribute('multiple')) === null ? '' : []);
          else if ((await row.locator('.json-schema-form-item').count()) > 0)
            while ((await row.locator('button.json-schema-form-item-remove').count()) > 0)
              await row.locator('button.json-schema-form-item-remove').last().click();
          else await row.locator('input[type="text"]').fill('');
        }
      }
      await operation.locator('button.execute').click();

      const live = operation.locator('.live-responses-table tr.response');
      await live.locator('.response-col_status').first().waitFor();
      const status = (await live.locator('.response-col_status').first().innerText()).trim();
      const requestUrl = await operation.locator('.request-url pre, .request-url .microlight').first().innerText();
      const body = await live.locator('.response-col_description pre').first().innerText();
      const curl = await operation.locator('.curl-command').innerText();
      // the operation from its summary down to the live response (not the documented responses below)
      const top = await operation.boundingBox();
      const bottom = await live.first().boundingBox();
      const scrollY = await page.evaluate(() => (globalThis as unknown as { scrollY: number }).scrollY);
      if (!top || !bottom) throw new Error('the operation or its live response is not displayed');
      await page.screenshot({
        path: SCREENSHOT,
        fullPage: true,
        clip: { x: top.x, y: top.y + scrollY, width: top.width, height: bottom.y + bottom.height - top.y + 16 },
      });

      expect({ status, pageErrors }).toEqual({ status: '200', pageErrors: [] });
      const sent = new URL(requestUrl.trim());
      expect(`${sent.origin}${sent.pathname}`).toBe(`${baseUrl}/v2/articles`);
      expect(Object.fromEntries(sent.searchParams)).toEqual({
        page: '1',
        size: '10',
        sort: '-published_at',
        status: 'published',
        author: String(authorId),
        tag: TAG,
        'status[in]': 'published',
      });
      expect(curl).toContain(`${baseUrl}/v2/articles?`);
      expect(curl).toContain(`Authorization: Bearer ${token}`);
      for (const member of ['"data"', '"page"', '"size"', '"total"', '"links"']) expect(body).toContain(member);
      const envelope = JSON.parse(body) as { data: { title: string; author: unknown }[]; total: number };
      expect(envelope).toMatchObject({ page: 1, size: 10, total: 1 });
      expect(envelope.data.map((article) => article.title)).toEqual([title]);
      expect(envelope.data[0].author).toEqual({ id: authorId, username: 'swagger_user', name: 'Swagger User' });
      expect(existsSync(SCREENSHOT)).toBe(true);
    } catch (error) {
      await page.screenshot({ path: FAILURE_SCREENSHOT, fullPage: true }).catch(() => undefined);
      const hint = `(page errors: ${JSON.stringify(pageErrors)}; screenshot: ${path.relative(process.cwd(), FAILURE_SCREENSHOT)})`;
      if (error instanceof Error) error.message = `${error.message}\n${hint}`;
      throw error;
    }
  }, 120_000);
});
