import { jest } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';

/** The test helpers of a fresh copy of the application, loaded by {@link loadFreshApp}. */
export interface FreshApp {
  createTestApp: (typeof import('./test-app.js'))['createTestApp'];
  createUser: (typeof import('../factories/user.factory.js'))['createUser'];
  /** TypeORM's DataSource class of the fresh copy (for `app.get(DataSource)`). */
  DataSource: (typeof import('typeorm'))['DataSource'];
}

/**
 * For a second application with another configuration in the same test file: the configuration is
 * read when AppModule is first imported, so this empties Jest's module registry, applies `env`
 * (undefined deletes a variable) and imports the application again. Everything used with that
 * application — the user factory, `DataSource` — must come from the returned copy. The ESM-only
 * NestJS modules handed to CommonJS packages (esm-interop.ts) are refreshed too, so both sides
 * share the new instances. Returns a function that restores the previous environment.
 */
export async function loadFreshApp(env: Record<string, string | undefined>): Promise<FreshApp & { restoreEnv: () => void }> {
  const saved = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]));
  const apply = (values: Record<string, string | undefined>) => {
    for (const [key, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  };
  jest.resetModules();
  apply(env);
  (globalThis as Record<string, unknown>).__esmInterop = {
    '@nestjs/common': await import('@nestjs/common'),
    '@nestjs/core': await import('@nestjs/core'),
  };
  const { createTestApp } = await import('./test-app.js');
  const { createUser } = await import('../factories/user.factory.js');
  const { DataSource } = await import('typeorm');
  return { createTestApp, createUser, DataSource, restoreEnv: () => apply(saved) };
}

/**
 * Boots a fresh application with `env` ({@link loadFreshApp}, then its createTestApp); returns it
 * and the function that restores the environment (call it after closing the app). When the boot
 * fails, the environment is restored before the error is rethrown.
 */
export async function bootFreshApp(env: Record<string, string | undefined>): Promise<{ app: NestExpressApplication; restoreEnv: () => void }> {
  const fresh = await loadFreshApp(env);
  try {
    return { app: await fresh.createTestApp(), restoreEnv: fresh.restoreEnv };
  } catch (error) {
    fresh.restoreEnv();
    throw error;
  }
}
