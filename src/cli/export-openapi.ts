import 'reflect-metadata';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * `npm run docs:export`: writes the OpenAPI document of each API version as `openapi.v<n>.json`
 * and `openapi.v<n>.yaml`, and the newest also as `openapi.json`/`openapi.yaml` (into the
 * directory given as the first argument, default the current one: the repository root under npm)
 * without starting the HTTP server. The application is created as main.ts creates it, minus
 * `listen`, on an in-memory SQLite database unless DATABASE_URL is set; the documents are the ones
 * served at `/docs/v<n>/openapi.json` and `/docs/openapi.json` ({@link buildOpenApiDocuments}).
 * Exit status 0, or 1 with one line on stderr.
 */
async function main(): Promise<void> {
  // before any project import: entity column types are chosen from DATABASE_URL at import time
  process.env.DATABASE_URL ??= 'sqlite::memory:';
  process.env.LOG_LEVEL ??= 'silent';
  const outDir = path.resolve(process.argv[2] ?? '.');
  try {
    const { validateEnv } = await import('../config/env.validation.js');
    validateEnv(process.env);
    const { NestFactory } = await import('@nestjs/core');
    const { AppModule } = await import('../app.module.js');
    const { buildOpenApiDocuments } = await import('../openapi/docs.js');
    const { API_VERSIONS, LATEST_VERSION, enableApiVersioning } = await import('../common/versioning/api-versions.js');
    const { dump } = await import('js-yaml');
    const app = await NestFactory.create(await AppModule.forRoot(), { bodyParser: false, logger: false, abortOnError: false });
    try {
      enableApiVersioning(app);
      const documents = await buildOpenApiDocuments(app);
      const written: string[] = [];
      for (const [name, document] of [
        ...API_VERSIONS.map((version) => [`openapi.v${version}`, documents[version]] as const),
        ['openapi', documents[LATEST_VERSION]] as const,
      ]) {
        const json = path.join(outDir, `${name}.json`);
        const yaml = path.join(outDir, `${name}.yaml`);
        await writeFile(json, `${JSON.stringify(document, null, 2)}\n`);
        // the options SwaggerModule uses for /docs/openapi.yaml
        await writeFile(yaml, dump(document, { skipInvalid: true, noRefs: true }));
        written.push(path.relative(process.cwd(), json) || json, path.relative(process.cwd(), yaml) || yaml);
      }
      process.stdout.write(`wrote ${written.join(', ')}\n`);
    } finally {
      await app.close();
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`docs:export failed: ${message.split('\n')[0]}\n`);
    process.exitCode = 1;
  }
}

void main();
