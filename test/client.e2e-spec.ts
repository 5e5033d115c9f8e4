import { execFile } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { OpenAPI3 } from 'openapi-typescript';
import { CLIENT_DIR, generateClientTypes } from './client/generate.js';
import type { ScenarioModule } from './client/scenario-module.js';
import { createTestApp } from './setup/test-app.js';

/** The typed scenario (test/client/scenario.ts), imported once the types it uses were generated. */
async function importScenario(): Promise<ScenarioModule> {
  // not a literal: the root type-check leaves the scenario out (its generated types may not exist yet)
  const specifier = './client/scenario.js';
  return (await import(specifier)) as ScenarioModule;
}

describe('a typed client generated from the document (README.md#api-documentation-and-clients: usable by real clients)', () => {
  let app: NestExpressApplication;
  let baseUrl: string;
  let document: OpenAPI3;
  let generated: string;

  beforeAll(async () => {
    app = await createTestApp();
    await app.listen(0, '127.0.0.1');
    baseUrl = await app.getUrl();
    const res = await fetch(`${baseUrl}/docs/openapi.json`);
    expect(res.status).toBe(200);
    document = (await res.json()) as OpenAPI3;
    generated = await generateClientTypes(document);
  });
  afterAll(async () => {
    await app?.close();
  });

  it('generates TypeScript types for every path and the named schemas with openapi-typescript', () => {
    expect(generated).toContain('export interface paths {');
    expect(generated).toContain('export interface components {');
    for (const route of Object.keys(document.paths ?? {})) expect(generated).toContain(`"${route}": {`);
    for (const schema of ['Article', 'ArticleList', 'ErrorResp', 'User', 'TokenPair', 'Tag']) expect(generated).toMatch(new RegExp(`\\n\\s+${schema}: \\{`));
  });

  it('type-checks the scenario against the generated types (tsc --noEmit)', async () => {
    const tsc = path.resolve(CLIENT_DIR, '../../node_modules/.bin/tsc');
    // asynchronously: a blocked event loop would let the live server and fetch race on idle keep-alive sockets
    const run = await new Promise<{ status: number | string | null; output: string }>((resolve) => {
      execFile(tsc, ['--noEmit', '-p', path.join(CLIENT_DIR, 'tsconfig.json')], { encoding: 'utf8', timeout: 120_000 }, (error, stdout, stderr) => {
        const status = error ? (error.code ?? error.signal ?? 'failed') : 0;
        resolve({ status, output: `${stdout}${stderr}${error && !stdout && !stderr ? error.message : ''}` });
      });
    });
    expect(run).toEqual({ status: 0, output: '' });
  }, 150_000);

  it('runs the scenario through openapi-fetch against the live server: register, login, tags, articles, filtered lists, a 422', async () => {
    const { runScenario } = await importScenario();
    const result = await runScenario(baseUrl);
    expect(result.tags).toEqual(['nestjs', 'api-design', 'typescript']);
    expect(result.lists.nestjsPublished.data.map((article) => article.id)).toEqual([result.articles.first.id]);
    expect(result.lists.published.data.map((article) => article.id)).toEqual([result.articles.second.id, result.articles.first.id]);
    expect(result.validationError).toEqual({
      error: expect.any(String),
      code: 'validation_failed',
      details: [{ field: 'age', message: expect.any(String) }],
      request_id: expect.any(String),
    });
  });
});
